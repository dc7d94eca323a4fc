"""Each eviction and promotion policy does what its docstring says."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers_helpers import cand

from memcommit.errors import InvalidInput
from memcommit.tiers import (
    ARC,
    FIFO,
    LFU,
    LRU,
    TTL,
    AccessCount,
    AllOf,
    AnyOf,
    Forgetting,
    ImportanceAtLeast,
    KindIn,
    Learned,
    Never,
    Scored,
    TwoQueue,
)
from memcommit.tiers.policies.base import check_eviction, check_promotion, notify

NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)


def drive(policy, ids: list[str], capacity: int) -> list[str]:
    """Replay ids the way TieredMemory does; return the evicted ids in order."""
    resident: dict[str, None] = {}
    evicted = []
    for tick, i in enumerate(ids, 1):
        c = cand(i, tick=tick)
        if i in resident:
            notify(policy, "on_use", c, NOW)
            continue
        notify(policy, "on_page_in", c, NOW)
        if len(resident) >= capacity:
            cands = [cand(r, tick=tick) for r in resident]
            for v in policy.victims(cands, len(resident) + 1 - capacity, NOW):
                del resident[v.id]
                evicted.append(v.id)
                notify(policy, "on_evict", v, NOW)
        resident[i] = None
    return evicted


def test_fifo_ignores_hits_lru_does_not():
    assert drive(FIFO(), ["a", "b", "a", "c"], 2) == ["a"]
    assert drive(LRU(), ["a", "b", "a", "c"], 2) == ["b"]


def test_lfu_counts_while_cached_and_breaks_ties_by_recency():
    # a used twice, b and c once: c's arrival evicts b (freq 1, older than nothing else)
    assert drive(LFU(), ["a", "a", "b", "c"], 2) == ["b"]
    # equal counts: the least recently used of them goes
    assert drive(LFU(), ["a", "b", "b", "a", "c"], 2) == ["b"]
    # a's count is forgotten once evicted: it comes back at 1
    assert drive(LFU(), ["a", "a", "b", "b", "b", "c", "a", "d"], 2) == ["a", "c", "a"]


def test_two_queue_hit_in_a1in_does_not_promote_and_ghost_hit_goes_to_am():
    policy = TwoQueue()
    evicted = drive(policy, ["a", "b", "a", "c", "d", "e", "a"], 4)
    assert "a" in evicted  # a's hits in A1in did not protect it
    assert "a" in policy._main  # back from the A1out ghost list into Am


def test_arc_adapts_p_on_ghost_hits():
    policy = ARC()
    assert drive(policy, ["a", "a", "b", "c", "d", "b"], 3) == ["b", "c"]
    assert policy.p == 1.0  # b came back from B1: T1's target grew
    assert "b" in policy._t2


def test_classics_forget_residents_evicted_by_others():
    policy = LRU()
    drive(policy, ["a", "b"], 2)
    policy.on_evict(cand("a"), NOW)
    assert policy.victims([cand("b"), cand("c", tick=5)], 1, NOW)[0].id == "b"


def test_forgetting_lets_frequent_and_important_memories_fade_slowest():
    policy = Forgetting()
    old_but_frequent = cand("f", uses=40, last=50, tick=100)
    recent_once = cand("r", uses=1, last=80, tick=100)
    old_once = cand("o", uses=1, last=50, tick=100)
    important = cand("i", uses=1, last=50, tick=100, importance=1.0)
    order = [
        c.id for c in policy.victims([old_but_frequent, recent_once, old_once, important], 4, NOW)
    ]
    assert order[0] == "o"
    assert order.index("i") > order.index("o")
    assert order.index("f") > order.index("o")
    assert 0 < policy.retention(old_once) < policy.retention(recent_once) <= 1


def test_scored_weights_recency_importance_and_frequency():
    a = cand("a", uses=1, last=10, importance=0.9)
    b = cand("b", uses=1, last=90, importance=0.1)
    assert Scored(recency=1, importance=0, frequency=0).victims([a, b], 1, NOW)[0].id == "a"
    assert Scored(recency=0, importance=1, frequency=0).victims([a, b], 1, NOW)[0].id == "b"
    c = cand("c", uses=64, last=10)
    assert Scored(recency=0, importance=0, frequency=1).victims([a, c], 1, NOW)[0].id == "a"


def test_ttl_evicts_expired_first_then_the_fallback():
    day = timedelta(days=1)
    old_event = cand("e", kind="event", created_at=NOW - 3 * day, last=99)
    new_event = cand("n", kind="event", created_at=NOW - timedelta(hours=1), last=1)
    fact = cand("f", kind="fact", created_at=NOW - 30 * day, last=50)
    policy = TTL({"event": day}, fallback=Scored(recency=1, importance=0, frequency=0))
    assert [c.id for c in policy.victims([fact, new_event, old_event], 2, NOW)] == ["e", "n"]


def test_learned_is_deterministic_and_learns_from_its_mistakes():
    def run() -> Learned:
        policy = Learned(window=10)
        drive(policy, ["a", "b", "c", "a", "d", "b", "e", "a", "f", "c"] * 5, 3)
        return policy

    one, two = run(), run()
    assert one.weights == two.weights
    assert one.examples > 0
    assert one.weights != Learned().weights


@pytest.mark.parametrize(
    "make",
    [
        lambda: Scored(recency=-1),
        lambda: Forgetting(scale=0),
        lambda: Learned(learning_rate=0),
        lambda: Learned(window=0),
        lambda: TTL({"event": timedelta(0)}),
        lambda: TTL({"fact": timedelta(1)}, fallback=object()),
        lambda: AccessCount(0),
        lambda: ImportanceAtLeast(2),
        lambda: KindIn("fact"),
        lambda: AnyOf(),
        lambda: AllOf(object()),
    ],
)
def test_bad_arguments_raise_invalid_input(make):
    with pytest.raises(InvalidInput):
        make()


def test_policy_objects_are_checked():
    with pytest.raises(InvalidInput, match="eviction"):
        check_eviction(object())
    with pytest.raises(InvalidInput, match="promotion"):
        check_promotion(LRU())


def test_promotion_policies_select_and_combine():
    a = cand("a", uses=5, importance=0.2, kind="fact")
    b = cand("b", uses=1, importance=0.9, kind="event")
    d = cand("d", uses=1, importance=0.1, kind="decision")
    everyone = [a, b, d]

    def ids(policy):
        return [c.id for c in policy.select(everyone, NOW)]

    assert ids(AccessCount(3)) == ["a"]
    assert ids(ImportanceAtLeast(0.8)) == ["b"]
    assert ids(KindIn(["decision"])) == ["d"]
    assert ids(AnyOf(AccessCount(3), ImportanceAtLeast(0.8), KindIn(["decision"]))) == [
        "a",
        "b",
        "d",
    ]
    assert ids(AllOf(AccessCount(1), ImportanceAtLeast(0.5))) == ["b"]
    assert ids(Never()) == []


POLICIES = [FIFO, LRU, LFU, TwoQueue, ARC, Forgetting, Scored, Learned]


@settings(max_examples=60, deadline=None)
@given(
    ids=st.lists(st.sampled_from("abcdefghij"), min_size=1, max_size=80),
    capacity=st.integers(1, 6),
    which=st.sampled_from(POLICIES),
)
def test_victims_are_always_distinct_residents(ids, capacity, which):
    policy = which()
    resident: dict[str, None] = {}
    for tick, i in enumerate(ids, 1):
        c = cand(i, tick=tick)
        if i in resident:
            notify(policy, "on_use", c, NOW)
            continue
        notify(policy, "on_page_in", c, NOW)
        if len(resident) >= capacity:
            n = len(resident) + 1 - capacity
            chosen = policy.victims([cand(r, tick=tick) for r in resident], n, NOW)
            assert len(chosen) == n
            assert len({v.id for v in chosen}) == n
            assert all(v.id in resident for v in chosen)
            for v in chosen:
                del resident[v.id]
                notify(policy, "on_evict", v, NOW)
        resident[i] = None
        assert len(resident) <= capacity
