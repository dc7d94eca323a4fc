"""Invariants of compaction over random traces on a real (in-memory SQLite) store."""

from __future__ import annotations

from datetime import timedelta

from compaction_store import add_trace, later
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memcommit
from memcommit.compaction import (
    COMPACTED_INTO,
    Compactor,
    FinishedTraces,
    KeepFailed,
    OlderThan,
    UnderPressure,
)

traces = st.lists(
    st.tuples(
        st.sampled_from(["open", "finished", "failed"]),
        st.integers(0, 5),  # steps
        st.sampled_from(["acme", "globex"]),
        st.sampled_from(["shared", "planner"]),
    ),
    max_size=8,
)
policies = st.one_of(
    st.just(FinishedTraces()),
    st.integers(0, 10).map(lambda n: KeepFailed(records=n)),
    st.integers(0, 10).map(lambda m: OlderThan(timedelta(minutes=m))),
    st.integers(0, 20).map(lambda n: UnderPressure(n)),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces, policies)
def test_every_trace_is_whole_and_nothing_is_lost(specs, policy) -> None:
    store = memcommit.open(":memory:")
    ids = [
        add_trace(store, f"task {i % 3}", steps=n, status=s, tenant=t, scope=sc, at=later(i))
        for i, (s, n, t, sc) in enumerate(specs)
    ]
    now = later(len(specs) + 5)
    before = {m.id: store.history(m.id) for m in store.find(live=False)}
    compactor = Compactor(store, policy=policy)
    chosen = [t.id for t in compactor.select(now)]
    result = compactor.compact(now=now)

    assert list(result.traces) == chosen
    assert len(result.summaries) == len(chosen)
    for trace_id in ids:
        trace = store.trace(trace_id)
        marked = trace.root.metadata.get(COMPACTED_INTO)
        assert (marked is not None) == (trace_id in chosen)
        assert trace.status != "open" or marked is None
        tiers = {s.tier for s in trace.steps}
        assert tiers <= ({"archive"} if marked else {"short"})
        if marked:
            summary = store.get(marked)
            assert (summary.tenant, summary.scope) == (trace.tenant, trace.scope)
    for memory_id, versions in before.items():
        assert store.history(memory_id)[: len(versions)] == versions
    assert compactor.compact(now=now).traces == ()  # a second run has nothing left to do
    store.close()
