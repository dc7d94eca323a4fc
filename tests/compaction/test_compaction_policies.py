"""Each policy on crafted traces, boundaries included; policies are pure."""

from __future__ import annotations

from datetime import timedelta

import pytest
from compaction_store import add_trace, later
from compaction_traces import T0, make_trace
from hypothesis import given
from hypothesis import strategies as st

from memcommit.compaction import (
    COMPACTED_INTO,
    Compactor,
    Every,
    FinishedTraces,
    KeepFailed,
    OlderThan,
    Policy,
    UnderPressure,
)
from memcommit.compaction.policies import relief
from memcommit.errors import InvalidInput

NOW = T0 + timedelta(days=10)


def ids(traces) -> list[str]:
    return [t.id for t in traces]


def ended(trace_id: str, minutes: int, **kw):
    """A trace that ended ``minutes`` after T0."""
    return make_trace(trace_id, ended=T0 + timedelta(minutes=minutes), **kw)


def test_finished_traces_takes_finished_and_failed_oldest_first() -> None:
    traces = [
        ended("b", 20),
        make_trace("open", status="open"),
        ended("a", 10, status="failed"),
    ]
    assert ids(FinishedTraces().select(traces, NOW, {})) == ["a", "b"]


def test_older_than_keeps_a_trace_exactly_age_old() -> None:
    age = timedelta(hours=1)
    traces = [
        make_trace("exact", ended=NOW - age),
        make_trace("older", ended=NOW - age - timedelta(microseconds=1)),
        make_trace("younger", ended=NOW - age + timedelta(microseconds=1)),
        make_trace("open", status="open"),
    ]
    assert ids(OlderThan(age).select(traces, NOW, {})) == ["older"]


def test_older_than_zero_takes_everything_that_ended_before_now() -> None:
    traces = [make_trace("past", ended=NOW - timedelta(seconds=1)), make_trace("now", ended=NOW)]
    assert ids(OlderThan(timedelta(0)).select(traces, NOW, {})) == ["past"]


def test_keep_failed_keeps_newest_failures_up_to_exactly_n_steps() -> None:
    traces = [
        ended("f-old", 1, status="failed", steps=4),
        ended("ok", 2),
        ended("f-mid", 3, status="failed", steps=3),
        ended("f-new", 4, status="failed", steps=2),
    ]
    # 2 + 3 = 5 steps fit exactly in 5: both newest failures stay raw.
    assert ids(KeepFailed(records=5).select(traces, NOW, {})) == ["f-old", "ok"]
    # One fewer: the middle one would go over, so it and every older one compact.
    assert ids(KeepFailed(records=4).select(traces, NOW, {})) == ["f-old", "ok", "f-mid"]
    assert ids(KeepFailed(records=0).select(traces, NOW, {})) == ["f-old", "ok", "f-mid", "f-new"]


def test_keep_failed_stops_at_the_first_failure_over_budget() -> None:
    # A small old failure after a big newer one is compacted too: newest first, no skipping.
    traces = [
        ended("small", 1, status="failed", steps=1),
        ended("big", 2, status="failed", steps=9),
    ]
    assert ids(KeepFailed(records=5).select(traces, NOW, {})) == ["small", "big"]


def test_keep_failed_counts_its_budget_per_tenant() -> None:
    traces = [
        ended("b-fail", 1, status="failed", steps=2, tenant="B"),
        ended("a-fail", 2, status="failed", steps=2, tenant="A"),
        ended("a-older", 0, status="failed", steps=1, tenant="A"),
    ]
    # A's newer failure fills A's budget; B's failure has a budget of its own.
    assert ids(KeepFailed(records=2).select(traces, NOW, {})) == ["a-older"]
    assert KeepFailed(records=2).kept(traces) == {"a-fail", "b-fail"}


def test_one_tenants_failure_never_compacts_another_tenants(make_store) -> None:
    store = make_store("tenants.db")
    b = add_trace(store, "B task", status="failed", steps=2, tenant="B", at=later(0))
    a = add_trace(store, "A task", status="failed", steps=2, tenant="A", at=later(1))
    ok = add_trace(store, "A done", tenant="A", at=later(2))
    result = Compactor(store, policy=KeepFailed(records=2)).compact(now=later(60))
    assert result.traces == (ok,)
    for raw in (a, b):
        trace = store.trace(raw)
        assert COMPACTED_INTO not in trace.root.metadata
        assert [s.tier for s in trace.steps] == ["short", "short"]


def test_under_pressure_per_partition_compacts_oldest_until_at_threshold() -> None:
    a = [ended(f"a{i}", i, scope="a", steps=5) for i in range(4)]  # each frees 6 - 1 = 5
    b = [ended(f"b{i}", i, scope="b", steps=5) for i in range(4)]
    held = {("default", "a"): 30, ("default", "b"): 20}
    # a: 30 -> 25 -> 20 <= 20; b: exactly at the threshold is not over it.
    assert ids(UnderPressure(20).select(a + b, NOW, held)) == ["a0", "a1"]


def test_under_pressure_per_store_counts_every_partition() -> None:
    a = [ended(f"a{i}", i * 2, scope="a", steps=5) for i in range(3)]
    b = [ended(f"b{i}", i * 2 + 1, scope="b", steps=5) for i in range(3)]
    held = {("default", "a"): 15, ("default", "b"): 15}
    assert ids(UnderPressure(21, per="store").select(a + b, NOW, held)) == ["a0", "b0"]
    assert ids(UnderPressure(30, per="store").select(a + b, NOW, held)) == []


def test_under_pressure_skips_traces_that_free_nothing() -> None:
    traces = [ended("one", 1, steps=1), ended("none", 2, steps=0), ended("big", 3, steps=3)]
    assert [relief(t) for t in traces] == [1, 0, 3]  # root and steps, less the summary
    held = {("default", "shared"): 10}
    assert ids(UnderPressure(5).select(traces, NOW, held)) == ["one", "big"]


def test_under_pressure_among_another_policy() -> None:
    traces = [ended("f", 1, status="failed", steps=5), ended("ok", 2, steps=5)]
    held = {("default", "shared"): 100}
    policy = UnderPressure(0, among=KeepFailed(records=10))
    assert ids(policy.select(traces, NOW, held)) == ["ok"]


def test_every_intersects_and_each_policy_sees_everything() -> None:
    traces = [
        make_trace("old-fail", status="failed", ended=NOW - timedelta(days=3), steps=2),
        make_trace("old-ok", ended=NOW - timedelta(days=2)),
        make_trace("new-fail", status="failed", ended=NOW - timedelta(minutes=1), steps=2),
    ]
    # KeepFailed's budget goes to the newest failure, so the old one is compacted.
    policy = Every(OlderThan(timedelta(days=1)), KeepFailed(records=2))
    assert ids(policy.select(traces, NOW, {})) == ["old-fail", "old-ok"]


def test_policies_share_the_protocol() -> None:
    for policy in (
        FinishedTraces(),
        OlderThan(timedelta(1)),
        KeepFailed(records=1),
        UnderPressure(1),
        Every(FinishedTraces()),
    ):
        assert isinstance(policy, Policy)
        assert repr(policy)


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: OlderThan(5), "age"),
        (lambda: OlderThan(timedelta(seconds=-1)), "age"),
        (lambda: KeepFailed(records=-1), "records"),
        (lambda: KeepFailed(records=True), "records"),
        (lambda: UnderPressure(-1), "threshold"),
        (lambda: UnderPressure(1, per="tenant"), "per"),
        (lambda: UnderPressure(1, among="all"), "among"),
        (lambda: Every(), "policies"),
        (lambda: Every(FinishedTraces(), 3), "policies"),
    ],
)
def test_bad_arguments_name_the_field(make, field: str) -> None:
    with pytest.raises(InvalidInput) as info:
        make()
    assert info.value.field == field


trace_specs = st.lists(
    st.tuples(
        st.sampled_from(["open", "finished", "failed"]),
        st.integers(0, 8),  # steps
        st.integers(0, 100),  # minute it ended
        st.sampled_from(["a", "b"]),  # scope
    ),
    max_size=12,
)


def build(specs):
    return [
        make_trace(f"t{i}", status=s, steps=n, ended=T0 + timedelta(minutes=m), scope=sc)
        for i, (s, n, m, sc) in enumerate(specs)
    ]


@given(trace_specs, st.integers(0, 30))
def test_keep_failed_invariants(specs, budget: int) -> None:
    traces = build(specs)
    policy = KeepFailed(records=budget)
    chosen = set(ids(policy.select(traces, NOW, {})))
    kept = [t for t in traces if t.status == "failed" and t.id not in chosen]
    assert sum(len(t.steps) for t in kept) <= budget
    assert all(t.status != "open" for t in traces if t.id in chosen)
    assert {t.id for t in traces if t.status == "finished"} <= chosen
    assert chosen == set(ids(policy.select(list(reversed(traces)), NOW, {})))


@given(
    trace_specs, st.lists(st.sampled_from(["A", "B"]), min_size=12, max_size=12), st.integers(0, 30)
)
def test_keep_failed_keeps_within_each_tenants_budget(specs, tenants, budget: int) -> None:
    traces = [
        make_trace(f"t{i}", status=s, steps=n, ended=T0 + timedelta(minutes=m), tenant=tenant)
        for i, ((s, n, m, _), tenant) in enumerate(zip(specs, tenants, strict=False))
    ]
    policy = KeepFailed(records=budget)
    chosen = set(ids(policy.select(traces, NOW, {})))
    for tenant in ("A", "B"):
        mine = [t for t in traces if t.tenant == tenant]
        alone = set(ids(policy.select(mine, NOW, {})))
        # What a tenant keeps does not depend on the other tenant's traces.
        assert alone == {t.id for t in mine} & chosen


@given(trace_specs, st.integers(0, 60), st.integers(0, 40), st.integers(0, 40))
def test_under_pressure_invariants(specs, threshold: int, held_a: int, held_b: int) -> None:
    traces = build(specs)
    held = {("default", "a"): held_a, ("default", "b"): held_b}
    chosen = UnderPressure(threshold).select(traces, NOW, held)
    for scope, count in (("a", held_a), ("b", held_b)):
        mine = [t for t in chosen if t.scope == scope]
        if count <= threshold:
            assert not mine
        left = count - sum(relief(t) for t in mine)
        eligible = [t for t in traces if t.scope == scope and t.status != "open"]
        not_taken = [t for t in eligible if t not in mine and relief(t) > 0]
        # Either back at the threshold, or nothing more could be done.
        assert left <= threshold or not not_taken
        # Without the last one taken it was still over: no trace compacted needlessly.
        if mine:
            assert left + relief(mine[-1]) > threshold
