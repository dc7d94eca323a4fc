"""The hash chain: verify() names the first commit or version edited, cut, moved or added.

Every test edits the real tables below memcommit (SQLite file, PostgreSQL schema)
as someone with the database could, then asks `Store.verify`.
"""

from __future__ import annotations

import pytest
from chain_helpers import edit, rows

from memcommit.errors import InvalidInput
from memcommit.store import Witness


@pytest.fixture
def history(store):
    """Four commits: two adds, an update, a third add; returns (store, [memory ids])."""
    with store.commit(message="first") as tx:
        a = tx.add("the user prefers tea", tags=["drinks"], metadata={"source": "chat"})
        b = tx.add("the user lives in Lyon")
    with store.commit(message="second") as tx:
        tx.update(a.id, content="the user prefers green tea")
    with store.commit(message="third") as tx:
        c = tx.add("the deploy runs on Fridays", kind="procedure")
    with store.commit(message="fourth") as tx:
        tx.invalidate(b.id)
    return store, [a.id, b.id, c.id]


def only(report):
    assert not report.ok
    return report.first


def test_a_store_as_written_verifies(history):
    store, _ = history
    report = store.verify()
    assert report.ok, report.problems
    assert (report.after, report.commits, report.versions) == (0, 4, 5)
    assert report.head == store.witness() and report.head.seq == 4
    assert report.sealed_upto == 0  # every hash was made as its commit was written
    assert store.check().ok


def test_every_commit_and_version_carries_its_seal(history):
    store, _ = history
    hashes = rows(store, "SELECT hash FROM commits ORDER BY seq")
    assert len({h for (h,) in hashes}) == 4 and all(len(h) == 64 for (h,) in hashes)
    for salt, digest, erased in rows(store, "SELECT salt, digest, erased FROM versions"):
        assert len(salt) == 32 and len(digest) == 64 and erased is None


def test_an_edited_content_names_the_version(history):
    store, (a, _, _) = history
    edit(store, ("UPDATE versions SET content = ? WHERE id = ? AND version = 1", "coffee", a))
    problem = only(store.verify())
    assert (problem.kind, problem.seq, problem.memory_id, problem.version) == ("edited", 1, a, 1)
    assert "digest" in problem.detail
    assert store.get(a, as_of=1).content == "coffee"  # reads serve it: verify is the check


def test_an_edited_digest_too_breaks_the_commit(history):
    store, (a, _, _) = history
    # the attacker recomputes nothing: a digest made up to match fails the commit's hash
    edit(store, ("UPDATE versions SET digest = ? WHERE id = ? AND version = 2", "0" * 64, a))
    assert only(store.verify()).kind == "edited"


@pytest.mark.parametrize(
    "column, value",
    [("message", "nothing happened"), ("author", "mallory"), ("time", None), ("changes", "[]")],
)
def test_edited_commit_metadata_is_found(history, column, value):
    store, _ = history
    if column == "time":
        value = rows(store, "SELECT time FROM commits WHERE seq = 1")[0][0]
        edit(store, ("UPDATE commits SET time = ? WHERE seq = 2", value))
    else:
        edit(store, (f"UPDATE commits SET {column} = ? WHERE seq = 2", value))
    problem = only(store.verify())
    assert problem.seq == 2 and problem.kind in ("edited", "inserted")


def test_edited_metadata_and_labels_of_a_version(history):
    store, (a, _, c) = history
    (kept,) = rows(store, "SELECT metadata FROM versions WHERE id = ? AND version = 1", a)[0]
    edit(store, ("UPDATE versions SET metadata = ? WHERE id = ? AND version = 1", '{"x":1}', a))
    assert only(store.verify()).memory_id == a
    edit(store, ("UPDATE versions SET metadata = ? WHERE id = ? AND version = 1", kept, a))
    assert store.verify().ok  # the same bytes back: nothing to report
    edit(store, ("UPDATE versions SET tenant = ? WHERE id = ?", "other", c))
    problem = only(store.verify())
    assert (problem.kind, problem.memory_id, problem.seq) == ("edited", c, 3)


def test_a_commit_deleted_from_the_middle_is_missing(history):
    store, _ = history
    edit(store, ("DELETE FROM versions WHERE seq = 3",), ("DELETE FROM commits WHERE seq = 3",))
    problem = only(store.verify())
    assert (problem.kind, problem.seq) == ("missing", 3)


def test_a_deleted_version_is_missing(history):
    store, (a, _, _) = history
    edit(store, ("DELETE FROM versions WHERE id = ? AND version = 2", a))
    kinds = {(p.kind, p.memory_id) for p in store.verify().problems}
    assert ("missing", a) in kinds


def test_two_commits_swapped_are_reordered(history):
    store, _ = history
    cols = "id, parent, time, author, message, hash, changes"
    two, three = (rows(store, f"SELECT {cols} FROM commits WHERE seq = ?", s)[0] for s in (2, 3))
    sets = ", ".join(f"{c.strip()} = ?" for c in cols.split(","))
    edit(
        store,
        (f"UPDATE commits SET {sets} WHERE seq = 2", *three),
        (f"UPDATE commits SET {sets} WHERE seq = 3", *two),
    )
    problem = only(store.verify())
    assert (problem.kind, problem.seq) == ("reordered", 2)


def test_a_version_no_commit_wrote_is_inserted(history):
    store, (_, _, c) = history
    edit(
        store,
        ("UPDATE versions SET end_seq = 4 WHERE id = ? AND version = 1", c),
        (
            "INSERT INTO versions SELECT id, 2, 4, NULL, 'planted', kind, scope, tenant, session,"
            " mkey, importance, tags, project, always, token_count, trace_id, step, metadata,"
            " valid_from, valid_to, superseded_by, status, tier, created_at, created_commit,"
            " updated_at, salt, digest, erased FROM versions WHERE id = ? AND version = 1",
            c,
        ),
    )
    kinds = {(p.kind, p.memory_id, p.version) for p in store.verify().problems}
    assert ("inserted", c, 2) in kinds


def test_a_tail_cut_needs_the_witness(history):
    store, _ = history
    seen = store.witness()
    edit(store, ("DELETE FROM versions WHERE seq = 4",), ("DELETE FROM commits WHERE seq = 4",))
    edit(store, ("UPDATE versions SET end_seq = NULL WHERE end_seq = 4",))
    assert store.verify().ok  # what is left is a whole chain: only a witness knows it was longer
    problem = only(store.verify(expect=seen))
    assert (problem.kind, problem.seq) == ("behind", 3)
    assert only(store.verify(expect=str(seen))).kind == "behind"


def test_a_rewritten_history_has_forked_from_the_witness(make_store, clock):
    store = make_store(clock=clock)
    with store.commit() as tx:
        tx.add("one")
    with store.commit() as tx:
        tx.add("two")
    seen = store.witness()
    # roll the last commit back by hand, then write another in its place
    edit(store, ("DELETE FROM versions WHERE seq = 2",), ("DELETE FROM commits WHERE seq = 2",))
    store.close()
    store = make_store(clock=clock)
    with store.commit() as tx:
        tx.add("a different two")
    assert store.verify().ok
    problem = only(store.verify(expect=seen))
    assert (problem.kind, problem.seq) == ("forked", 2)


def test_a_witness_is_a_line_of_text(history):
    store, _ = history
    seen = store.witness()
    assert Witness.parse(str(seen)) == seen
    assert str(seen).startswith("memcommit-witness/1 seq=4 id=")
    for bad in ("", "memcommit-witness/2 seq=1 id=- hash=-", "seq=4", 4):
        with pytest.raises(InvalidInput) as err:
            store.verify(expect=bad)
        assert err.value.field == "expect"


def test_the_empty_store_has_a_witness(store):
    empty = store.witness()
    assert (empty.seq, empty.id, empty.hash) == (0, None, None)
    with store.commit() as tx:
        tx.add("later")
    assert store.verify(expect=empty).ok
    assert Witness.parse(str(empty)) == empty


def test_verify_since_checks_only_newer_commits(history):
    store, (a, _, _) = history
    seen = store.witness()
    with store.commit() as tx:
        tx.add("fifth")
    edit(store, ("UPDATE versions SET content = 'x' WHERE id = ? AND version = 1", a))
    newer = store.verify(since=seen)
    assert newer.ok and (newer.after, newer.commits, newer.versions) == (4, 1, 1)
    assert store.verify(since=4).ok
    assert not store.verify().ok  # the whole walk sees the old edit
    with pytest.raises(InvalidInput):
        store.verify(since=-1)


def test_verify_since_a_witness_the_store_forked_from(history):
    store, _ = history
    fake = Witness(4, store.witness().id, "f" * 64)
    assert only(store.verify(since=fake)).kind == "forked"


def test_purge_keeps_the_chain_verifying(history):
    store, (a, _, _) = history
    with store.commit() as tx:
        tx.purge(a)
    assert store.verify().ok and store.check().ok
    sealed = rows(
        store, "SELECT version, salt, erased, content FROM versions WHERE id = ? ORDER BY 1", a
    )
    assert [(v, s is None, e is not None, c) for v, s, e, c in sealed] == [
        (1, True, True, ""),
        (2, True, True, ""),
        (3, False, False, ""),  # the tombstone: written empty, with a salt of its own
    ]


def test_content_put_back_into_a_purged_version_is_found(history):
    store, (a, _, _) = history
    with store.commit() as tx:
        tx.purge(a)
    edit(store, ("UPDATE versions SET content = 'tea' WHERE id = ? AND version = 1", a))
    problem = only(store.verify())
    assert (problem.kind, problem.memory_id, problem.version) == ("edited", a, 1)
    assert not store.check().ok  # the cheap check sees it too


def test_an_erasure_without_a_purge_is_found(history):
    store, (_, b, _) = history
    salt, content, tags, metadata = rows(
        store, "SELECT salt, content, tags, metadata FROM versions WHERE id = ? AND version = 1", b
    )[0]
    body = store.backend.rows.seals.body_hash(salt, content, tags, metadata)
    edit(
        store,
        (
            "UPDATE versions SET content = '', salt = NULL, erased = ?"
            " WHERE id = ? AND version = 1",
            body,
            b,
        ),
    )
    problem = only(store.verify())
    assert (problem.kind, problem.memory_id) == ("edited", b)
    assert "never purged" in problem.detail


def test_check_runs_the_cheap_part(history):
    store, (a, _, _) = history
    edit(store, ("UPDATE versions SET digest = NULL WHERE id = ? AND version = 1", a))
    assert any("digest" in p for p in store.check().problems)
    edit(store, "UPDATE commits SET hash = NULL WHERE seq = 2")
    assert any("chain hash" in p for p in store.check().problems)


def test_bulk_commits_stream_and_still_verify(store):
    with store.commit() as tx:
        for i in range(300):  # above the size whose rows are made before the commit row
            tx.add(f"memory {i}", tags=[f"t{i % 3}"])
    with store.commit() as tx:
        tx.archive_many([m.id for m in store.find(limit=100)])
    report = store.verify()
    assert report.ok and report.versions == 400


def test_verify_tells_its_progress(history):
    store, _ = history
    told = []
    store.verify(progress=lambda done, total: told.append((done, total)))
    assert told[-1] == (9, 9)  # 5 versions and 4 commits
    with pytest.raises(InvalidInput):
        store.verify(progress="loud")


def test_verify_inside_a_commit_is_refused(store):
    with pytest.raises(InvalidInput), store.commit() as tx:
        tx.add("x")
        store.verify()


def test_writers_go_on_while_verify_reads_its_snapshot(make_store, clock, store_backend):
    store = make_store(clock=clock)
    with store.commit() as tx:
        tx.add("before")
    waits = {"busy_timeout": 1} if store_backend == "sqlite" else {"lock_timeout": 1}
    other = make_store(**waits)  # the same store, another connection: another writer
    landed = []

    def meanwhile(done, total):
        if not landed:
            with other.commit() as tx:  # would time out if verify held the writers' lock
                tx.add("during")
            landed.append(other.head_seq)

    report = store.verify(progress=meanwhile)
    assert landed == [2] and report.ok and report.head.seq == 1  # the snapshot: not seen
    assert store.verify().head.seq == 2


def test_rows_that_no_longer_decode_are_edited_not_a_crash(history, store_backend):
    store, (a, _, _) = history
    if store_backend == "sqlite":  # SQLite keeps whatever type it is given
        edit(store, ("UPDATE versions SET valid_from = 12 WHERE id = ? AND version = 1", a))
        problem = only(store.verify())
        assert (problem.kind, problem.memory_id) == ("edited", a)
    edit(store, "UPDATE commits SET changes = '{not json' WHERE seq = 3")
    kinds = {(p.kind, p.seq) for p in store.verify().problems}
    assert ("edited", 3) in kinds
