"""simulate(): fast paths equal the policy classes; results are plain and checked."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers_helpers import small_traces

from memcommit.errors import InvalidInput
from memcommit.model import Memory
from memcommit.tiers import ARC, FIFO, LFU, LRU, Forgetting, Learned, Scored, TwoQueue, simulate
from memcommit.tiers.simulate import simulate_general
from memcommit.tiers.traces import with_loops, with_scans, zipf

TRACES = {name: trace[:4_000] for name, trace in small_traces().items()}
ALL = [FIFO, LRU, LFU, TwoQueue, ARC, Forgetting, Scored, Learned]


@pytest.mark.parametrize("capacity", [1, 60])
@pytest.mark.parametrize("trace_name", sorted(TRACES))
@pytest.mark.parametrize("policy", ALL, ids=lambda p: p.__name__)
def test_fast_path_equals_the_policy_class(policy, trace_name, capacity):
    trace = TRACES[trace_name]
    fast = simulate(trace, capacity=capacity, policy=policy())
    slow = simulate_general(trace, capacity=capacity, policy=policy())
    assert fast.hits == slow.hits


def test_ranked_policies_use_importance_and_kind_from_memories():
    trace = zipf(3_000, 400, 0.8, seed=4)
    memories = {
        x: Memory(
            id=f"m{x}",
            content="",
            importance=1.0 if x % 2 else 0.0,
            kind="decision" if x % 3 else "event",
        )
        for x in set(trace)
    }
    for policy in (Forgetting(), Scored(), Learned()):
        fast = simulate(trace, capacity=40, policy=policy, memories=memories)
        slow = simulate_general(trace, capacity=40, policy=policy, memories=memories)
        assert fast.hits == slow.hits
        assert fast.hits != simulate(trace, capacity=40, policy=policy).hits


def test_result_fields_and_policy_names():
    result = simulate([1, 2, 1, 3, 1], capacity=2, policy="lru")
    assert (result.policy, result.capacity, result.requests) == ("LRU", 2, 5)
    assert (result.hits, result.misses) == (2, 3)
    assert result.hit_ratio == pytest.approx(0.4)
    assert simulate([], capacity=3, policy="2q").hit_ratio == 0.0


def test_simulate_never_changes_the_policy_it_was_given():
    policy = Learned()
    before = list(policy.weights)
    simulate(zipf(2_000, 100, seed=1), capacity=10, policy=policy)
    assert policy.weights == before


@pytest.mark.parametrize("capacity", [0, -1, 1.5, True, None])
def test_bad_capacity(capacity):
    with pytest.raises(InvalidInput, match="capacity"):
        simulate([1], capacity=capacity, policy=LRU())


@pytest.mark.parametrize("policy", [object(), "belady", 3])
def test_bad_policy(policy):
    with pytest.raises(InvalidInput, match="policy"):
        simulate([1], capacity=1, policy=policy)


def test_traces_are_seeded_and_shaped():
    assert zipf(100, 10, seed=3) == zipf(100, 10, seed=3)
    base = [1, 2, 3, 4]
    assert with_scans(base, every=2, length=2) == [1, 2, 5, 6, 3, 4, 7, 8]
    assert with_loops(base, every=2, span=2, repeats=2) == [1, 2, 5, 6, 5, 6, 3, 4, 5, 6, 5, 6]
    with pytest.raises(InvalidInput):
        zipf(10, 0)


@settings(max_examples=40, deadline=None)
@given(
    trace=st.lists(st.integers(1, 12), max_size=120),
    capacity=st.integers(1, 14),
    policy=st.sampled_from(ALL),
)
def test_hits_are_bounded_and_full_caches_only_miss_cold(trace, capacity, policy):
    result = simulate(trace, capacity=capacity, policy=policy())
    distinct = len(set(trace))
    assert 0 <= result.hits <= len(trace) - distinct
    if capacity >= distinct:
        assert result.hits == len(trace) - distinct
    assert result.hits == simulate_general(trace, capacity=capacity, policy=policy()).hits


@settings(max_examples=25, deadline=None)
@given(
    trace=st.lists(st.integers(1, 9), max_size=80),
    capacity=st.integers(1, 6),
    policy=st.sampled_from([FIFO, LRU, LFU, TwoQueue, ARC]),
)
def test_classics_ignore_how_ids_are_named(trace, capacity, policy):
    renamed = [f"memory-{x * 7919}" for x in trace]
    assert (
        simulate(trace, capacity=capacity, policy=policy()).hits
        == simulate(renamed, capacity=capacity, policy=policy()).hits
    )
