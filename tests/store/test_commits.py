"""Commits: every transaction operation, atomicity, sequence, optimistic concurrency."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import timedelta

import pytest

import memcommit
from memcommit.errors import Conflict, InvalidInput, NotFound, Purged


def test_add_returns_version_one_and_lands_in_a_commit(store, now):
    with store.commit(message="remember", author="tester", now=now) as tx:
        m = tx.add("the user likes tea", kind="fact", scope="planner", key="drink", tags=["pref"])
    assert tx.result.seq == 1
    assert tx.result.parent is None
    assert tx.result.author == "tester" and tx.result.message == "remember"
    assert tx.result.time == now
    assert [(c.op, c.memory_id, c.version) for c in tx.result.changes] == [("add", m.id, 1)]
    got = store.get(m.id)
    assert got == m
    assert got.version == 1 and got.created_commit == 1 and got.updated_commit == 1
    assert got.tags == ("pref",) and got.scope == "planner" and got.key == "drink"


def test_every_field_round_trips(store, now):
    fields = dict(
        kind="decision", scope="s", tenant="t", session="sess", key="k", importance=0.9,
        tags=("a", "b"), project="p", always=True, token_count=7, metadata={"x": [1, {"y": None}]},
        valid_from=now - timedelta(days=1), valid_to=now + timedelta(days=1), tier="mid",
    )  # fmt: skip
    with store.commit(now=now) as tx:
        m = tx.add("content", id="given-id", **fields)
    got = store.get("given-id")
    assert got == m
    for name, value in fields.items():
        assert getattr(got, name) == value, name


def test_sequence_is_gap_free_and_parents_chain(store):
    results = []
    for i in range(5):
        with store.commit(message=f"c{i}") as tx:
            tx.add(f"memory {i}")
        results.append(tx.result)
    assert [c.seq for c in results] == [1, 2, 3, 4, 5]
    for prev, cur in itertools.pairwise(results):
        assert cur.parent == prev.id
    assert store.head == results[-1]


def test_exception_rolls_back_everything(store):
    with store.commit() as tx:
        kept = tx.add("kept")
    with pytest.raises(RuntimeError), store.commit() as tx:
        lost = tx.add("lost")
        tx.update(kept.id, content="changed")
        raise RuntimeError("boom")
    assert tx.result is None
    assert store.get(kept.id).content == "kept"
    with pytest.raises(NotFound):
        store.get(lost.id)
    with store.commit() as tx:
        tx.add("next")
    assert tx.result.seq == 2  # the rolled-back commit left no gap


def test_update_makes_a_new_version_and_keeps_history(store):
    with store.commit() as tx:
        m = tx.add("v1", importance=0.1)
    with store.commit() as tx:
        m2 = tx.update(m.id, content="v2", importance=0.7)
    assert m2.version == 2 and m2.content == "v2" and m2.importance == 0.7
    assert m2.created_commit == 1 and m2.updated_commit == 2
    assert [h.content for h in store.history(m.id)] == ["v1", "v2"]
    assert tx.result.changes[0].detail == {"fields": ["content", "importance"]}


def test_update_twice_in_one_commit(store):
    with store.commit() as tx:
        m = tx.add("a")
        tx.update(m.id, content="b")
        tx.update(m.id, content="c")
    assert store.get(m.id).content == "c"
    assert store.get(m.id, as_of=tx.result).content == "c"
    assert store.check().ok


def test_expected_version_conflict(store):
    with store.commit() as tx:
        m = tx.add("v1")
    with store.commit() as tx:
        tx.update(m.id, content="v2", expected_version=1)
    with pytest.raises(Conflict) as err, store.commit() as tx:
        tx.update(m.id, content="v3", expected_version=1)
    assert err.value.expected == 1 and err.value.actual == 2
    assert "expected_version" in str(err.value)
    assert store.get(m.id).content == "v2"


def test_update_refuses_unknown_and_fixed_fields(store):
    with store.commit() as tx:
        m = tx.add("x")
    for bad in ({"tenant": "other"}, {"trace_id": "t"}, {"nonsense": 1}, {}):
        with pytest.raises(InvalidInput), store.commit() as tx:
            tx.update(m.id, **bad)
    assert store.get(m.id).version == 1


def test_invalidate_stops_holding(store, now):
    with store.commit(now=now) as tx:
        m = tx.add("the meeting is on monday")
    with store.commit(now=now + timedelta(hours=1)) as tx:
        gone = tx.invalidate(m.id)
    assert gone.status == "invalidated" and gone.valid_to == now + timedelta(hours=1)
    assert not gone.holds()
    assert store.find() == []
    assert [x.id for x in store.find(live=False)] == [m.id]
    assert store.find(as_of=1)[0].id == m.id


def test_invalidate_in_the_future_holds_until_then(store, now):
    with store.commit(now=now) as tx:
        m = tx.add("offer valid this week")
        later = tx.invalidate(m.id, at=now + timedelta(days=7))
    assert later.status == "active"
    assert later.holds(now + timedelta(days=1)) and not later.holds(now + timedelta(days=8))


def test_supersede(store):
    with store.commit() as tx:
        old = tx.add("lives in Paris", key="city")
        new = tx.add("lives in Lyon", key="city")
        tx.supersede(old.id, new.id)
    got = store.get(old.id)
    assert got.superseded_by == new.id and got.status == "superseded" and not got.holds()
    assert [m.id for m in store.find(key="city")] == [new.id]
    with pytest.raises(InvalidInput), store.commit() as tx:
        tx.supersede(new.id, new.id)
    with pytest.raises(NotFound), store.commit() as tx:
        tx.supersede(new.id, "missing")


def test_tiers_archive_restore_move_page_in(store):
    with store.commit() as tx:
        m = tx.add("x")
    ops = []
    for action in (
        lambda tx: tx.move(m.id, "mid"),
        lambda tx: tx.archive(m.id),
        lambda tx: tx.restore(m.id, tier="long"),
        lambda tx: tx.archive(m.id),
        lambda tx: tx.page_in(m.id),
    ):
        with store.commit() as tx:
            action(tx)
        ops.append((tx.result.changes[0].op, store.get(m.id).tier))
    assert ops == [
        ("move", "mid"),
        ("archive", "archive"),
        ("restore", "long"),
        ("archive", "archive"),
        ("page_in", "short"),
    ]
    assert store.get(m.id).version == 6
    with store.commit() as tx:
        same = tx.move(m.id, "short")  # already there: no change, no version
    assert same.version == 6 and tx.result is None  # a block that changed nothing lands nothing
    with pytest.raises(InvalidInput), store.commit() as tx:
        tx.move(m.id, "attic")


def test_purge_erases_every_version_and_keeps_a_tombstone(store):
    with store.commit() as tx:
        m = tx.add("secret v1", tags=["pii"], metadata={"ssn": "123"})
    with store.commit() as tx:
        tx.update(m.id, content="secret v2")
    with store.commit() as tx:
        tomb = tx.purge(m.id)
    assert tomb.status == "purged" and tomb.content == ""
    versions = store.history(m.id)
    assert len(versions) == 3
    assert all(v.content == "" and v.tags == () and v.metadata == {} for v in versions)
    assert store.get(m.id, as_of=1).content == ""
    assert store.find() == []
    with pytest.raises(Purged), store.commit() as tx:
        tx.update(m.id, content="back")
    assert store.check().ok


def test_purge_in_the_same_commit_as_add(store):
    with store.commit() as tx:
        m = tx.add("oops, a password")
        tx.purge(m.id)
    assert all(v.content == "" for v in store.history(m.id))
    assert store.check().ok


def test_failed_operation_inside_a_commit_can_be_caught(store):
    with store.commit() as tx:
        a = tx.add("a")
        with pytest.raises(InvalidInput):
            tx.add("")
    assert [c.memory_id for c in tx.result.changes] == [a.id]


def test_given_id_must_be_new(store):
    with store.commit() as tx:
        tx.add("a", id="x")
    with pytest.raises(InvalidInput) as err, store.commit() as tx:
        tx.add("b", id="x")
    assert err.value.field == "id"


def test_nested_commit_is_refused(store):
    with store.commit() as tx:
        tx.add("outer")
        with pytest.raises(InvalidInput), store.commit():
            pass
    assert tx.result.seq == 1


def test_open_returns_a_store_and_reopens(tmp_path):
    path = tmp_path / "x.db"
    with memcommit.open(path) as store, store.commit() as tx:
        m = tx.add("persisted")
    with memcommit.open(str(path)) as again:
        assert again.get(m.id).content == "persisted"
        assert again.head.seq == 1


def test_in_memory_store():
    with memcommit.open(":memory:") as store:
        with store.commit() as tx:
            tx.add("x")
        assert len(store.find()) == 1


def test_a_transaction_cannot_be_used_after_its_block(store):
    with store.commit() as tx:
        tx.add("x")
    with pytest.raises(InvalidInput) as err:
        tx.add("too late")
    assert err.value.field == "tx"
    assert len(store.find()) == 1


def test_close_inside_a_commit_is_refused(store):
    with store.commit() as tx:
        tx.add("x")
        with pytest.raises(InvalidInput):
            store.close()
    assert store.head.seq == 1


def test_history_as_of(store):
    with store.commit() as tx:
        m = tx.add("v1")
    with store.commit() as tx:
        tx.update(m.id, content="v2")
    assert [h.content for h in store.history(m.id, as_of=1)] == ["v1"]
    with pytest.raises(NotFound):
        store.history(m.id, as_of=0)


def test_the_message_can_be_set_inside_the_block(store):
    with store.commit(message="draft") as tx:
        tx.add("x")
        assert tx.message == "draft"
        tx.message = "final: added x"
        with pytest.raises(InvalidInput) as err:
            tx.message = 3
        assert err.value.field == "message"
    assert tx.result.message == "final: added x" == store.head.message
    with pytest.raises(InvalidInput):
        tx.message = "too late"
    with store.commit(message="draft") as tx:  # the older way keeps working
        tx.add("y")
        tx.pending = replace(tx.pending, message="replaced")
    assert store.head.message == "replaced"


def test_a_block_that_changes_nothing_lands_nothing(store):
    with store.commit(message="first") as tx:
        m = tx.add("tea", importance=0.5)
    seen = []
    store.on_commit(seen.append)
    ran = []
    with store.commit(message="no-op") as tx:
        store.defer(lambda: ran.append("deferred"))
        same = tx.update(m.id, content="tea", importance=0.5)  # every field already holds
        tx.restore(m.id)  # not archived
        tx.move(m.id, "short")
        store.state_set("notes", "k", {"kept": True})  # state is not a change: it stays
    assert same == m and tx.result is None
    assert store.head_seq == 1 and [c.message for c in store.log()] == ["first"]
    assert seen == [] and ran == ["deferred"]
    assert store.state_get("notes", "k") == {"kept": True}
    with store.commit(message="second") as tx:
        tx.update(m.id, content="tea", importance=0.9)
    assert tx.result.seq == 2 and tx.result.parent == store.show(1).id  # no gap in the log
    assert tx.result.changes[0].detail == {"fields": ["importance"]}
    assert [c.message for c in seen] == ["second"]
