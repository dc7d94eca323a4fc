"""Recall sees what other writers committed: another Store object, process or host."""

from __future__ import annotations

import pytest

from memcommit.recall import recall


def test_a_live_index_catches_up_with_another_writers_commits(make_store, now):
    reader = make_store("shared.db")
    writer = make_store("shared.db")  # another Store object: reader hears none of its commits
    with reader.commit(message="first", now=now) as tx:
        tx.add("The staging database is called orders-stage.", id="A1", tenant="t")
    assert [m.id for m in recall(reader, "staging database", tenant="t", now=now)] == ["A1"]

    with writer.commit(message="more", now=now) as tx:
        tx.add("The staging database moved to a bigger host.", id="B1", tenant="t")
        tx.invalidate("A1")
    ctx = recall(reader, "staging database", tenant="t", now=now)
    assert [m.id for m in ctx] == ["B1"]
    assert {r.memory.id: r.reason for r in ctx.rows}["A1"] == "no_longer_holds"

    with writer.commit(message="purge", now=now) as tx:
        tx.purge("B1")
    with reader.commit(message="own", now=now) as tx:  # lands after the other writer's commit
        tx.add("Staging database backups run nightly.", id="A2", tenant="t")
    ctx = recall(reader, "staging database", tenant="t", now=now)
    assert [m.id for m in ctx] == ["A2"]
    assert "B1" not in {r.memory.id for r in ctx.rows}


def test_catching_up_equals_indexing_afresh(make_store, now):
    reader, writer = make_store("s.db"), make_store("s.db")
    with writer.commit(message="seed", now=now) as tx:
        for i in range(30):
            tx.add(f"note {i} about the deploy pipeline and its cache", id=f"N{i}", tenant="t")
    recall(reader, "deploy cache", tenant="t", now=now)  # index built
    with writer.commit(message="change", now=now) as tx:
        for i in range(0, 30, 3):
            tx.update(f"N{i}", content=f"note {i} about the release train")
    caught_up = recall(reader, "deploy cache release", tenant="t", now=now, scorer="tfidf")
    fresh = recall(make_store("s.db"), "deploy cache release", tenant="t", now=now, scorer="tfidf")
    assert [(r.memory.id, r.cosine, r.reason) for r in caught_up.rows] == [
        (r.memory.id, r.cosine, r.reason) for r in fresh.rows
    ]


def test_another_writers_newer_version_caught_up_midway_is_not_put_back_older(
    make_store, now, recall_snapshots
):
    """A commit purges in one tenant and rewrites a memory of another. Writing the purged
    tenant's snapshot catches up first, and meets another writer's newer version of that
    memory (committed while this commit's hooks ran); the commit's own older version must
    not be put over it afterwards (the index would keep it: that commit is caught up)."""
    reader, writer = make_store("s.db"), make_store("s.db")
    with reader.commit(message="seed", now=now) as tx:
        tx.add("the vault code is seven", id="P", tenant="u")
        tx.add("the deploy pipeline", id="M", tenant="t")
    armed = []

    def another_process(commit):  # lands its commit between this one and the index's hook
        if armed:
            armed.clear()
            with writer.commit(message="newer", now=now) as tx:
                tx.update("M", content="the release train")

    reader.on_commit(another_process)  # subscribed before the recall index: runs first
    recall(reader, "vault", tenant="u", now=now)
    recall(reader, "deploy", tenant="t", now=now)
    armed.append(True)
    with reader.commit(message="purge and rewrite", now=now) as tx:
        tx.purge("P")
        tx.update("M", content="the deploy train")
    ctx = recall(reader, "release train", tenant="t", now=now, scorer="tfidf")
    assert [(m.id, m.version, m.content) for m in ctx] == [("M", 3, "the release train")]
    assert {r.memory.id: r.cosine for r in ctx.rows} == {
        r.memory.id: r.cosine
        for r in recall(writer, "release train", tenant="t", now=now, scorer="tfidf").rows
    }


def test_a_commit_caught_up_before_its_hook_ran_hands_no_older_version_over(
    make_store, now, recall_snapshots
):
    """A hook that recalls before the index hears of the commit catches the index up past
    it, with another writer's newer version of the memory the commit rewrote; the version
    the commit then hands over is older, and is not put over the newer one."""
    reader, writer = make_store("s.db"), make_store("s.db")
    with reader.commit(message="seed", now=now) as tx:
        tx.add("the deploy pipeline", id="M", tenant="t")
    armed = []

    def recalling_hook(commit):  # another process commits, then this hook recalls
        if armed:
            armed.clear()
            with writer.commit(message="newer", now=now) as tx:
                tx.update("M", content="the release train")
            recall(reader, "release", tenant="t", now=now)

    reader.on_commit(recalling_hook)  # subscribed before the recall index: runs first
    recall(reader, "deploy", tenant="t", now=now)
    armed.append(True)
    with reader.commit(message="rewrite", now=now) as tx:
        tx.update("M", content="the deploy train")
    ctx = recall(reader, "release train", tenant="t", now=now, scorer="tfidf")
    assert [(m.id, m.version) for m in ctx] == [("M", 3)]
    assert ctx.rows[0].cosine == pytest.approx(1.0)
