"""Use counts on a logical clock and small persisted JSON state."""

from __future__ import annotations

import pytest

import memcommit
from memcommit import Usage
from memcommit.errors import InvalidInput, NotFound


def test_record_uses_ticks_once_per_use(store):
    with store.commit() as tx:
        a = tx.add("a")
        b = tx.add("b")
    assert store.record_uses([a.id, b.id, a.id]) == {
        a.id: Usage(2, 1, 3),
        b.id: Usage(1, 2, 2),
    }
    assert store.record_uses([b.id]) == {b.id: Usage(2, 2, 4)}
    assert store.usage() == {a.id: Usage(2, 1, 3), b.id: Usage(2, 2, 4)}
    assert store.usage([a.id]) == {a.id: Usage(2, 1, 3)}
    assert store.get(a.id).version == 1  # uses are not versions
    assert store.head.seq == 1


def test_record_uses_refuses_unknown_ids(store):
    with store.commit() as tx:
        a = tx.add("a")
    with pytest.raises(NotFound):
        store.record_uses([a.id, "missing"])
    assert store.usage() == {}
    with pytest.raises(InvalidInput):
        store.record_uses([a.id, 3])


def test_uses_and_state_persist(tmp_path):
    path = tmp_path / "s.db"
    with memcommit.open(path) as store:
        with store.commit() as tx:
            a = tx.add("a")
        store.record_uses([a.id])
        store.state_set("tiers", "stats", {"hits": 3, "misses": [1, 2]})
    with memcommit.open(path) as store:
        assert store.usage() == {a.id: Usage(1, 1, 1)}
        assert store.state_get("tiers", "stats") == {"hits": 3, "misses": [1, 2]}
        assert store.record_uses([a.id])[a.id] == Usage(2, 1, 2)


def test_state_defaults_and_validation(store):
    assert store.state_get("ns", "missing") is None
    assert store.state_get("ns", "missing", default=5) == 5
    store.state_set("ns", "k", 1)
    store.state_set("ns", "k", [1, "two"])
    assert store.state_get("ns", "k") == [1, "two"]
    with pytest.raises(InvalidInput):
        store.state_set("ns", "k", float("nan"))
    with pytest.raises(InvalidInput):
        store.state_set("ns", "k", object())
    with pytest.raises(InvalidInput):
        store.state_set("", "k", 1)
    assert store.state_get("ns", "k") == [1, "two"]


def test_state_and_uses_inside_a_commit_share_its_fate(store):
    with store.commit() as tx:
        a = tx.add("a")
    with pytest.raises(RuntimeError), store.commit() as tx:
        store.state_set("ns", "k", 1)
        store.record_uses([a.id])
        raise RuntimeError
    assert store.state_get("ns", "k") is None and store.usage() == {}
