"""Reads: get, find filters, log, show, history, diff, head, tenants, and as_of everywhere."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memcommit.errors import InvalidInput, NotFound


@pytest.fixture
def filled(store, now):
    """Three commits an hour apart: facts, an update, an invalidation."""
    with store.commit(message="one", now=now) as tx:
        a = tx.add("alpha", kind="fact", scope="shared", session="s1", key="k")
        b = tx.add("beta", kind="event", scope="planner", session="s1", tier="mid")
        c = tx.add("gamma", kind="procedure", scope="planner", session="s2", tenant="other")
    with store.commit(message="two", now=now + timedelta(hours=1)) as tx:
        tx.update(a.id, content="alpha 2")
        d = tx.add("delta", kind="fact", scope="shared", session="s2", key="k")
    with store.commit(message="three", now=now + timedelta(hours=2)) as tx:
        tx.invalidate(b.id)
    return store, {"a": a, "b": b, "c": c, "d": d}


def ids(memories):
    return [m.id for m in memories]


def test_get_unknown_id(store):
    with pytest.raises(NotFound) as err:
        store.get("nope")
    assert err.value.field == "id"


def test_find_filters(filled):
    store, m = filled
    assert ids(store.find()) == ids([m["a"], m["c"], m["d"]])  # creation order
    assert ids(store.find(tenant="default")) == ids([m["a"], m["d"]])
    assert ids(store.find(kinds=["event"], live=False)) == [m["b"].id]
    assert ids(store.find(scopes="planner")) == [m["c"].id]
    assert ids(store.find(sessions=["s2"])) == ids([m["c"], m["d"]])
    assert ids(store.find(key="k")) == ids([m["a"], m["d"]])
    assert ids(store.find(tiers=["mid"], live=False)) == [m["b"].id]
    assert ids(store.find(tenant="default", kinds=["fact"], scopes=["shared"])) == ids(
        [m["a"], m["d"]]
    )
    assert len(store.find(limit=2)) == 2
    assert store.find(kinds=[]) == []


def test_find_pages_through_a_listing_after_an_id(filled):
    store, m = filled
    every = ids(store.find(live=False))
    pages, after = [], None
    while page := store.find(live=False, limit=2, after=after):
        pages.append(ids(page))
        after = page[-1].id
    assert pages == [every[:2], every[2:]]
    assert ids(store.find(tenant="default", after=m["a"].id)) == [m["d"].id]
    with pytest.raises(InvalidInput, match="after"):
        store.find(after=m["a"].id, trace="t")


def test_find_time_range_is_inclusive(filled, now):
    store, m = filled
    assert ids(store.find(since=now + timedelta(hours=1))) == [m["d"].id]
    assert ids(store.find(until=now, tenant="default")) == [m["a"].id]


def test_as_of_by_seq_id_commit_and_time(filled, now):
    store, m = filled
    first = store.show(1)
    for ref in (1, first.id, first, now, now + timedelta(minutes=59)):
        assert store.get(m["a"].id, as_of=ref).content == "alpha"
        assert ids(store.find(tenant="default", as_of=ref)) == ids([m["a"], m["b"]])
    assert store.get(m["a"].id, as_of=2).content == "alpha 2"
    assert store.find(as_of=now - timedelta(seconds=1)) == []  # before the first commit
    with pytest.raises(NotFound):
        store.get(m["d"].id, as_of=1)
    assert store.find(as_of=2, kinds=["event"])[0].id == m["b"].id
    assert store.find(as_of=3, kinds=["event"]) == []


def test_as_of_refuses_unknown_commits(filled):
    store, m = filled
    for bad in (99, -1, "not-a-commit"):
        with pytest.raises(NotFound):
            store.get(m["a"].id, as_of=bad)
    for bad in (True, 1.5, object()):
        with pytest.raises(InvalidInput):
            store.find(as_of=bad)


def test_log_show_head(filled):
    store, _ = filled
    log = store.log()
    assert [c.message for c in log] == ["three", "two", "one"]
    assert [c.message for c in store.log(limit=1)] == ["three"]
    assert [c.message for c in store.log(as_of=2)] == ["two", "one"]
    assert store.show(2) == log[1] == store.show(log[1].id) == store.show(log[1])
    assert store.head == log[0]
    with pytest.raises(NotFound):
        store.show(0)
    with pytest.raises(NotFound):
        store.show("missing")


def test_empty_store(store):
    assert store.head is None
    assert store.log() == [] and store.find() == [] and store.tenants() == []
    assert store.traces() == []


def test_history_and_diff(filled):
    store, m = filled
    assert [(h.version, h.content) for h in store.history(m["a"].id)] == [
        (1, "alpha"),
        (2, "alpha 2"),
    ]
    with pytest.raises(NotFound):
        store.history("missing")
    assert [(c.op, c.memory_id) for c in store.diff(1, 3)] == [
        ("update", m["a"].id),
        ("add", m["d"].id),
        ("invalidate", m["b"].id),
    ]
    assert len(store.diff(0, 1)) == 3
    assert store.diff(2, 2) == []
    assert store.diff(1) == store.diff(1, 3)
    with pytest.raises(InvalidInput):
        store.diff(3, 1)


def test_tenants(filled):
    store, _ = filled
    assert store.tenants() == ["default", "other"]
    assert store.tenants(as_of=0) == []


def test_recall_delegates_to_the_recall_module(store):
    from memcommit.recall import recall

    with store.commit() as tx:
        tx.add("the user likes green tea")
        tx.add("the user likes black tea", tenant="other")
    ctx = store.recall("which tea", tenant="default")
    assert [m.id for m in ctx.selected] == [
        m.id for m in recall(store, "which tea", tenant="default").selected
    ]
    view = store.tenant("other")
    assert [m.tenant for m in view.recall("which tea", tenant="other").selected] == ["other"]
