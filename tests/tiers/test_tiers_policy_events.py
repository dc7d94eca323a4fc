"""The caller's own eviction policy hears every event; a policy that cannot be copied works.

One instance serves every partition (each candidate names its partition), so a
stateful policy the caller keeps a hand on sees what TieredMemory did with it.
"""

from __future__ import annotations

import threading
from datetime import datetime, timezone

import pytest

from memcommit.tiers import LRU, TieredMemory

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def store(make_store):
    return make_store()


def add(store, n, *, tier="short", scope="shared"):
    with store.commit(message=f"add {n}", now=NOW) as tx:
        return [tx.add(f"memory {i}", tier=tier, scope=scope).id for i in range(n)]


class Recording(LRU):
    """An LRU that writes down every event it hears, with the partition named."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, str, object]] = []

    def on_use(self, candidate, now=None):
        self.events.append(("use", candidate.id, candidate.partition))
        super().on_use(candidate, now)

    def on_page_in(self, candidate, now=None):
        self.events.append(("page_in", candidate.id, candidate.partition))
        super().on_page_in(candidate, now)

    def on_evict(self, candidate, now=None):
        self.events.append(("evict", candidate.id, candidate.partition))
        super().on_evict(candidate, now)


class Locked(LRU):
    """An LRU guarded by a lock, as a policy shared between threads would be: not copyable."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()

    def victims(self, candidates, n, now=None):
        with self.lock:
            return super().victims(candidates, n, now)


def test_the_callers_own_policy_hears_use_page_in_and_evict(store):
    a, b = add(store, 2)
    (c,) = add(store, 1, tier="archive")
    (d,) = add(store, 1, tier="archive", scope="planner")
    policy = Recording()
    tiers = TieredMemory(store, capacity=2, eviction=policy)
    tiers.touch([a, c, d], now=NOW)
    shared, planner = ("default", "shared"), ("default", "planner")
    assert policy.events == [
        ("use", a, shared),
        ("page_in", c, shared),
        ("evict", b, shared),
        ("page_in", d, planner),
    ]
    add(store, 2, scope="planner")  # three in planner: maintenance evicts one
    assert policy.events[-1][0] == "evict" and policy.events[-1][2] == planner
    assert len(tiers.working(scopes=["planner"], now=NOW)) == 2


def test_one_instance_keeps_each_partitions_queue_apart(store):
    shared = add(store, 3)
    planner = add(store, 3, scope="planner")
    policy = LRU()
    tiers = TieredMemory(store, capacity=3, eviction=policy, auto=False)
    tiers.touch([shared[0], planner[2], shared[1], planner[1]], now=NOW)
    add(store, 1)
    add(store, 1, scope="planner")
    evicted = tiers.maintain(now=NOW).evicted
    assert sorted(evicted) == sorted([shared[2], planner[0]])  # each partition's own LRU


def test_a_policy_that_cannot_be_copied_works_through_touch_and_maintain(store):
    policy = Locked()
    tiers = TieredMemory(store, capacity=2, eviction=policy)
    ids = add(store, 3)  # over capacity: maintenance runs after the commit, with the policy
    (archived,) = add(store, 1, tier="archive")
    assert len(tiers.working(now=NOW)) == 2
    assert tiers.touch([archived], now=NOW).paged_in == [archived]
    add(store, 2)
    result = tiers.maintain(now=NOW)
    assert len(tiers.working(now=NOW)) == 2 and not result.errors
    assert sum(store.get(i).tier == "short" for i in ids) <= 2
