"""`memcommit migrate`: SQLite -> PostgreSQL -> SQLite keeps the whole history, verified."""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict
from datetime import datetime, timezone

import pytest
from backends_scenario import everything, scenario
from click.testing import CliRunner

import memcommit
from memcommit.cli import main
from memcommit.errors import InvalidInput, Unavailable
from memcommit.store.migrate import Mismatch, migrate, verify
from memcommit.store.transfer import backend_of

pytestmark = pytest.mark.postgres

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


def raw(store):
    """Everything the API reads, ids as they are: a migration must keep every one."""
    return {
        "log": [asdict(c) for c in store.log()],
        "memories": {
            m.id: [asdict(v) for v in store.history(m.id)] for m in store.find(live=False)
        },
        "traces": [asdict(t) for t in store.traces()],
        "usage": store.usage(),
        "state": store.backend.state_items(),
    }


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "source.db"
    with memcommit.open(path) as store:
        scenario(store, NOW)
    return str(path)


def test_round_trip_through_postgres_keeps_everything(source, pg_url, tmp_path):
    url, back = pg_url(), str(tmp_path / "back.db")
    there = migrate(source, url)
    again = migrate(url, back)
    assert there == again
    assert (there.commits, there.memories, there.traces, there.usages, there.states) == (
        4, 11, 1, 2, 3,
    )  # fmt: skip
    with memcommit.open(source) as a, memcommit.open(url) as b, memcommit.open(back) as c:
        assert raw(a) == raw(b) == raw(c)
        assert everything(a) == everything(c)
        assert there.head == a.head.id == b.head.id
        assert a.witness() == b.witness() == c.witness()  # the chain moves with the history
        assert b.verify().ok and c.verify().ok
        assert b.check().ok and c.check().ok
        with b.commit(message="life goes on") as tx:  # the copy is a working store
            tx.add("written after the move")
        assert b.head.seq == 5 and b.head.parent == a.head.id


def test_target_must_be_empty_and_stays_untouched(source, pg_url):
    url = pg_url()
    with memcommit.open(url) as target, target.commit() as tx:
        tx.add("already here")
    with pytest.raises(InvalidInput, match="empty"):
        migrate(source, url)
    with memcommit.open(url) as target:
        assert [m.content for m in target.find()] == ["already here"]
        assert len(target.log()) == 1


def test_verify_names_the_first_difference(source, pg_url, admin):
    url = pg_url()
    migrate(source, url)
    schema = url.rpartition("schema=")[2]
    admin.execute(f"UPDATE \"{schema}\".versions SET importance = 0.1 WHERE id = 'm4'")
    with memcommit.open(source) as a, memcommit.open(url) as b:
        with pytest.raises(Mismatch, match="'m4'"):
            verify(backend_of(a), backend_of(b))
        admin.execute(f'UPDATE "{schema}".usage SET count = count + 1')
        admin.execute(f"UPDATE \"{schema}\".versions SET importance = 0.5 WHERE id = 'm4'")
        with pytest.raises(Mismatch, match="use counts"):
            verify(backend_of(a), backend_of(b))


def test_cli_migrate_with_progress_and_json(source, pg_url):
    url = pg_url()
    runner = CliRunner()
    result = runner.invoke(main, ["migrate", source, url, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["commits"] == 4 and report["memories"] == 11
    again = runner.invoke(main, ["migrate", source, url])
    assert again.exit_code == 1
    assert "error: " in again.output and "empty" in again.output


def test_a_source_written_meanwhile_migrates_as_the_snapshot_it_copied(source, pg_url, tmp_path):
    """Writers on the source go on during a migrate; the copy is verified against the
    snapshot it read, not against the source as it is by then, so it succeeds."""
    url, copy = pg_url(), str(tmp_path / "copy.db")
    migrate(source, url)
    with memcommit.open(url) as writer:

        def progress(phase: str, done: int, total: int) -> None:
            if phase == "copy" and done == 1:  # the snapshot is open and read from
                with writer.commit(message="landed meanwhile") as tx:
                    tx.add("written while the store was copied")

        report = migrate(url, copy, progress=progress)
        assert report.commits == 4 and len(writer.log()) == 5
    with memcommit.open(url) as a, memcommit.open(copy) as b:
        assert [c.id for c in a.log(as_of=4)] == [c.id for c in b.log()]
        assert report.head == a.log(as_of=4)[0].id
        assert b.verify().ok and b.check().ok


def test_a_copy_that_fails_leaves_the_target_empty(source, pg_url, admin, tmp_path):
    """The source's session is ended while the copy is being verified: the migrate fails,
    nothing of the copy lands, and the same target takes the next migrate."""
    name = f"source-{uuid.uuid4().hex[:8]}"
    url, copy = pg_url(application_name=name), str(tmp_path / "copy.db")
    migrate(source, url)
    ended: list[int] = []

    def progress(phase: str, done: int, total: int) -> None:
        if phase == "verify" and not ended:  # the snapshot's session, between its reads
            ended.extend(
                pid
                for (pid,) in admin.execute(
                    "SELECT pid FROM pg_stat_activity WHERE application_name = %s"
                    " AND state = 'idle in transaction'",
                    (name,),
                )
            )
            for pid in ended:
                admin.execute("SELECT pg_terminate_backend(%s, 10000)", (pid,))

    with pytest.raises(Unavailable):
        migrate(url, copy, progress=progress)
    assert len(ended) == 1
    with memcommit.open(copy) as target:
        assert target.log() == [] and target.find(live=False) == []
    report = migrate(url, copy)
    assert report.commits == 4
