"""The compactor's bulk paths: it reads only uncompacted traces; the GC is left as it was."""

from __future__ import annotations

import gc

import pytest

from memcommit.compaction import Compactor, FinishedTraces
from memcommit.compaction import compactor as compactor_module


@pytest.fixture
def store(make_store):
    """A fresh store on each backend (SQLite file, PostgreSQL schema)."""
    return make_store("mem.db")


def _finished(store, n, steps=3):
    with store.commit() as tx:
        ids = []
        for i in range(n):
            tid = tx.begin_trace(f"task {i}")
            for s in range(steps):
                tx.step(tid, f"step {s}")
            tx.finish(tid)
            ids.append(tid)
    return ids


def test_candidates_page_through_and_skip_compacted_traces(store, monkeypatch):
    monkeypatch.setattr(compactor_module, "_PAGE", 2)
    ids = _finished(store, 5)
    compactor = Compactor(store, FinishedTraces())
    assert [t.id for t in compactor.candidates()] == ids
    first = compactor.compact(batch=2)
    assert sorted(first.traces) == sorted(ids) and len(first.commits) == 3
    assert compactor.candidates() == []
    more = _finished(store, 1)
    assert [t.id for t in compactor.candidates()] == more


def test_a_stale_read_of_a_step_is_read_again_inside_the_commit(store):
    (tid,) = _finished(store, 1)
    compactor = Compactor(store, FinishedTraces())
    chosen = compactor.select()
    step = chosen[0].steps[0]
    with store.commit() as tx:  # another writer moves a step after the compactor read it
        tx.move(step.id, "mid")
    result = compactor.compact()
    assert result.traces == (tid,) and not result.errors
    assert [m.tier for m in store.history(step.id)] == ["short", "mid", "archive"]


@pytest.mark.parametrize("enabled", [True, False])
def test_compaction_leaves_the_collector_as_it_was(store, enabled):
    _finished(store, 2)
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        Compactor(store, FinishedTraces()).compact()
        assert gc.isenabled() is enabled

        def broken(trace):
            raise KeyError("boom")

        _finished(store, 1)
        result = Compactor(store, FinishedTraces(), summarizer=broken).compact()
        assert result.errors and gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
