"""Traces: a root, ordered steps, open -> finished or failed, read as of any commit."""

from __future__ import annotations

import pytest

from memcommit.errors import InvalidInput, NotFound


def test_trace_lifecycle(store):
    with store.commit() as tx:
        tid = tx.begin_trace("fix the bug", tenant="t", scope="coder", session="s")
        s1 = tx.step(tid, "read the code")
    with store.commit() as tx:
        s2 = tx.step(tid, "wrote a test", kind="procedure", importance=0.9, tags=["test"])
        tx.finish(tid, status="failed")
    trace = store.trace(tid)
    assert trace.status == "failed" and trace.tenant == "t" and trace.scope == "coder"
    assert trace.root.content == "fix the bug" and trace.root.step == 0
    assert trace.root.trace_id == tid
    assert [s.id for s in trace.steps] == [s1.id, s2.id]
    assert [s.step for s in trace.steps] == [1, 2]
    assert s2.session == "s" and s2.tenant == "t"
    assert trace.ended_at == tx.result.time
    earlier = store.trace(tid, as_of=1)
    assert earlier.status == "open" and earlier.ended_at is None and len(earlier.steps) == 1
    assert tx.result.changes[-1].op == "finish_trace"


def test_traces_filters(store):
    with store.commit() as tx:
        a = tx.begin_trace("a")
        b = tx.begin_trace("b", tenant="x")
        c = tx.begin_trace("c")
        tx.finish(c)
    assert [t.id for t in store.traces()] == [a, b, c]
    assert [t.id for t in store.traces(status="open")] == [a, b]
    assert [t.id for t in store.traces(status="finished")] == [c]
    assert [t.id for t in store.traces(tenant="x")] == [b]
    assert store.traces(as_of=0) == []
    with pytest.raises(InvalidInput):
        store.traces(status="done")


def test_trace_errors(store):
    with store.commit() as tx:
        tid = tx.begin_trace("task")
        tx.finish(tid)
    with pytest.raises(InvalidInput), store.commit() as tx:
        tx.step(tid, "too late")
    with pytest.raises(InvalidInput), store.commit() as tx:
        tx.finish(tid)
    with pytest.raises(NotFound), store.commit() as tx:
        tx.step("missing", "x")
    with pytest.raises(InvalidInput), store.commit() as tx:
        t2 = tx.begin_trace("other")
        tx.finish(t2, status="maybe")
    with pytest.raises(NotFound):
        store.trace("missing")
    assert len(store.traces()) == 1


def test_find_by_trace_in_step_order(store):
    with store.commit() as tx:
        tid = tx.begin_trace("task")
        for i in range(3):
            tx.step(tid, f"step {i}")
    assert [m.step for m in store.find(trace=tid)] == [0, 1, 2, 3]
