"""Recall sees what other writers committed: another Store object, process or host."""

from __future__ import annotations

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
