"""PostgreSQL: a thread's reads never wait for another thread's open commit on the same Store.

A commit held up (waiting for a tenant's lock, a purge rewriting a partition, a
caller's slow Python inside its block) must not stall every other reader in the
process: an MCP server for many tenants, or an agent host, shares one Store.
"""

from __future__ import annotations

import contextlib
import io
import threading
import time
from collections.abc import Iterator

import pytest

import memcommit
from memcommit.store.transfer import export_jsonl

pytestmark = pytest.mark.postgres


@pytest.fixture
def store(pg_url):
    with memcommit.open(pg_url()) as opened:
        with opened.commit(message="seed") as tx:
            tx.add("Deploys happen on Tuesdays.", tenant="acme", key="deploy")
            tx.add("The office is in Lyon.", tenant="other")
        yield opened


def _holding(store, entered: threading.Event, release: threading.Event) -> threading.Thread:
    """A thread whose commit in tenant acme stays open (ordered, so it holds the writers'
    lock) until ``release`` is set."""

    def hold() -> None:
        with store.tenant("acme").commit(message="slow") as tx:
            tx.add("Written by the slow commit.")
            store.tenant("acme").find()  # a read inside the block: ordered from here
            entered.set()
            assert release.wait(20)

    thread = threading.Thread(target=hold)
    thread.start()
    assert entered.wait(20)
    return thread


def test_reads_in_another_thread_run_beside_an_open_commit(store):
    entered, release = threading.Event(), threading.Event()
    holder = _holding(store, entered, release)
    seen: dict[str, object] = {}

    def read() -> None:
        other = store.tenant("other")
        seen["other"] = [m.content for m in other.find()]
        seen["acme"] = [m.content for m in store.tenant("acme").find()]
        seen["recall"] = [r.memory.content for r in other.recall("office", now=None).rows]
        seen["log"] = len(store.log())
        seen["tenants"] = store.tenants()

    reader = threading.Thread(target=read)
    reader.start()
    reader.join(10)
    finished_first = not reader.is_alive()
    release.set()
    holder.join(20)
    reader.join(20)
    assert finished_first, "a read waited for another thread's open commit"
    assert seen["other"] == ["The office is in Lyon."] == seen["recall"]
    assert seen["acme"] == ["Deploys happen on Tuesdays."]  # nothing of the open commit
    assert seen["log"] == 1 and seen["tenants"] == ["acme", "other"]
    assert len(store.log()) == 2 and store.verify().ok


def test_memcommit_open_reads_beside_commits_on_postgres_only(store, tmp_path):
    assert store.backend.reads_beside_commits
    with memcommit.open(tmp_path / "s.db") as local:
        assert not local.backend.reads_beside_commits


def _read_beside(store, hold_for: float) -> tuple[list[str], float]:
    """A read in another thread while this one's commit stays open ``hold_for`` seconds:
    what it found, and when (seconds after it started)."""
    entered, release = threading.Event(), threading.Event()
    holder = _holding(store, entered, release)
    found: list[str] = []
    took: list[float] = []

    def read() -> None:
        started = time.monotonic()
        found.extend(m.content for m in store.tenant("other").find())
        took.append(time.monotonic() - started)

    reader = threading.Thread(target=read)
    reader.start()
    time.sleep(hold_for)
    release.set()
    holder.join(20)
    reader.join(20)
    return found, took[0] if took else -1.0


@contextlib.contextmanager
def _exporting(store) -> Iterator[threading.Event]:
    """An export in another thread, holding its snapshot's connection until the event
    yielded is set (set on leaving too); the export has ended when the block has."""
    exporting, done = threading.Event(), threading.Event()

    def progress(n: int, total: int) -> None:
        exporting.set()
        assert done.wait(20)

    exporter = threading.Thread(
        target=lambda: export_jsonl(store, io.StringIO(), progress=progress)
    )
    exporter.start()
    assert exporting.wait(20)
    try:
        yield done
    finally:
        done.set()
        exporter.join(20)


def test_with_a_pool_of_one_a_read_waits_for_the_commit_holding_it(pg_url):
    """pool_size=1: the read has no connection of its own, so it takes its turn after the
    commit (as on SQLite), past connect_timeout, instead of failing."""
    with memcommit.open(pg_url(), pool_size=1, connect_timeout=1) as store:
        assert not store.backend.reads_beside_commits
        with store.commit(message="seed") as tx:
            tx.add("The office is in Lyon.", tenant="other")
        found, took = _read_beside(store, hold_for=1.5)
    assert found == ["The office is in Lyon."] and took >= 1.4


def test_a_read_finding_every_pooled_connection_in_use_waits_for_one(pg_url):
    """pool_size=2, one held by an open commit and one by an export's snapshot: a third
    thread's read waits for a connection (up to lock_timeout), not connect_timeout."""
    with memcommit.open(pg_url(), pool_size=2, connect_timeout=1) as store:
        with store.commit(message="seed") as tx:
            tx.add("The office is in Lyon.", tenant="other")
        with _exporting(store) as done:
            try:
                found, took = _read_beside(store, hold_for=1.5)
            finally:
                done.set()
    assert found == ["The office is in Lyon."] and took >= 1.4


@pytest.mark.parametrize("ordered", [False, True])
def test_with_a_pool_of_one_a_commit_waits_for_an_export_holding_it(pg_url, ordered):
    """pool_size=1 and an export in another thread holding the connection: a commit
    waits for it (up to lock_timeout), past connect_timeout, instead of failing."""
    with memcommit.open(pg_url(), pool_size=1, connect_timeout=1) as store:
        with store.commit(message="seed") as tx:
            tx.add("The office is in Lyon.", tenant="other")
        when = tx.result.time if ordered else None  # an explicit time: ordered at begin
        with _exporting(store) as done:
            threading.Timer(1.5, done.set).start()
            started = time.monotonic()
            with store.commit(message="after", now=when) as tx:
                tx.add("Written while the export held the connection.", tenant="other")
            took = time.monotonic() - started
    assert tx.result.seq == 2 and took >= 1.4
