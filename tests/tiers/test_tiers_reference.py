"""The classic policies make exactly libCacheSim's choices: same hit count, every trace."""

from __future__ import annotations

import pytest
from tiers_helpers import small_traces

from memcommit.tiers import ARC, FIFO, LFU, LRU, TwoQueue, simulate
from memcommit.tiers.simulate import simulate_general

lcs = pytest.importorskip("libcachesim")

CLASSICS = [(FIFO, "FIFO"), (LRU, "LRU"), (LFU, "LFU"), (TwoQueue, "TwoQ"), (ARC, "ARC")]
TRACES = small_traces()


def reference_hits(name: str, trace: list[int], capacity: int) -> int:
    cache = getattr(lcs, name)(capacity, hashpower=16)
    req = lcs.Request()
    req.obj_size = 1
    hits = 0
    for x in trace:
        req.obj_id = x
        hits += cache.get(req)
    return hits


@pytest.mark.parametrize("capacity", [100, 1_000])
@pytest.mark.parametrize("trace_name", sorted(TRACES))
@pytest.mark.parametrize(("policy", "name"), CLASSICS, ids=[n for _, n in CLASSICS])
def test_fast_path_equals_libcachesim(policy, name, trace_name, capacity):
    trace = TRACES[trace_name]
    ours = simulate(trace, capacity=capacity, policy=policy())
    assert ours.hits == reference_hits(name, trace, capacity)
    assert ours.misses == len(trace) - ours.hits


@pytest.mark.parametrize("trace_name", sorted(TRACES))
@pytest.mark.parametrize(("policy", "name"), CLASSICS, ids=[n for _, n in CLASSICS])
def test_policy_class_equals_libcachesim(policy, name, trace_name):
    """The class TieredMemory drives, through victims and notifications, not the fast path."""
    trace = TRACES[trace_name][:4_000]
    ours = simulate_general(trace, capacity=100, policy=policy())
    assert ours.hits == reference_hits(name, trace, 100)


@pytest.mark.parametrize("capacity", [4, 5, 7, 13])
@pytest.mark.parametrize(("policy", "name"), CLASSICS, ids=[n for _, n in CLASSICS])
def test_tiny_capacities_match(policy, name, capacity):
    """Odd sizes exercise 2Q's rounding (⌊0.25·c⌋, ⌊0.5·c⌋) and ARC's float p."""
    trace = TRACES["loops"][:6_000]
    assert simulate(trace, capacity=capacity, policy=policy()).hits == reference_hits(
        name, trace, capacity
    )
