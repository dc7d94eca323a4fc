"""Replay a trace of memory ids through one eviction policy, as a single partition.

``simulate`` is how a user picks a policy: record the ids an agent touched,
replay them at a few capacities, compare hit ratios. A miss pages the memory in
and evicts at once. Each request is one use on the logical clock; the
simulator's wall clock advances one second per request (for TTL).

The classic policies run on plain-function fast paths; score-ranked policies
(Forgetting, Scored, Learned) keep their candidates in per-group recency order
and score only group ends; anything else is driven through its ``victims``
exactly as TieredMemory drives it. All three give the same hits for the same
policy (the tests check).
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from memcommit.model import Memory
from memcommit.tiers import fast
from memcommit.tiers.candidate import Candidate
from memcommit.tiers.policies.base import EvictionPolicy, check_capacity, check_eviction
from memcommit.tiers.policies.classic import ARC, FIFO, LFU, LRU, TwoQueue
from memcommit.tiers.policies.names import policy_by_name
from memcommit.tiers.policies.ranked import Ranked

#: Where the simulator's wall clock starts.
EPOCH = datetime(2000, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Simulation:
    """The outcome of one replay."""

    policy: str
    capacity: int
    requests: int
    hits: int

    @property
    def misses(self) -> int:
        """Requests that were not hits."""
        return self.requests - self.hits

    @property
    def hit_ratio(self) -> float:
        """Hits over requests (0 for an empty trace)."""
        return self.hits / self.requests if self.requests else 0.0


#: How often, in requests, the slow replay paths report their progress.
PROGRESS_EVERY = 10_000


def _fast_path(policy: EvictionPolicy) -> Callable[[list[Hashable], int], int] | None:
    """The plain-function replay for an unmodified classic, else None."""
    if type(policy) is TwoQueue:
        return lambda t, c: fast.two_queue_hits(t, c, policy.in_ratio, policy.out_ratio)
    plain: dict[type, Callable[[list[Hashable], int], int]] = {
        FIFO: fast.fifo_hits,
        LRU: fast.lru_hits,
        LFU: fast.lfu_hits,
        ARC: fast.arc_hits,
    }
    return plain.get(type(policy))


class _Replay:
    """Use counts and memories of a replay, shared by the general and ranked paths."""

    def __init__(self, memories: Mapping[Hashable, Memory] | None) -> None:
        self.memories = memories or {}
        self.made: dict[Hashable, Memory] = {}
        self.usage: dict[Hashable, list[int]] = {}
        self.entered: dict[Hashable, int] = {}
        self.ids: dict[str, Hashable] = {}  # memory id -> trace id

    def memory(self, x: Hashable) -> Memory:
        m = self.made.get(x)
        if m is None:
            m = self.memories.get(x)
            if m is None:
                created = EPOCH + timedelta(seconds=self.usage[x][1])
                m = Memory(id=str(x), content="", created_at=created)
            self.made[x] = m
            self.ids[m.id] = x
        return m

    def use(self, x: Hashable, tick: int) -> None:
        u = self.usage.get(x)
        if u is None:
            self.usage[x] = [1, tick, tick]
        else:
            u[0] += 1
            u[2] = tick

    def candidate(self, x: Hashable, tick: int) -> Candidate:
        uses, first, last = self.usage[x]
        return Candidate(
            self.memory(x), "short", "active", uses, first, last, tick, self.entered.get(x, tick)
        )


def _general(
    trace: Iterable[Hashable],
    capacity: int,
    policy: EvictionPolicy,
    replay: _Replay,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Drive ``policy`` through victims/on_use/on_page_in/on_evict, as TieredMemory does."""
    on_use = getattr(policy, "on_use", None)
    on_page_in = getattr(policy, "on_page_in", None)
    on_evict = getattr(policy, "on_evict", None)
    cached: dict[Hashable, None] = {}
    hits = 0
    for tick, x in enumerate(trace, 1):
        if progress is not None and tick % PROGRESS_EVERY == 0:
            progress(tick)
        replay.use(x, tick)
        now = EPOCH + timedelta(seconds=tick)
        if x in cached:
            hits += 1
            if on_use is not None:
                on_use(replay.candidate(x, tick), now)
            continue
        replay.entered[x] = tick
        if on_page_in is not None:
            on_page_in(replay.candidate(x, tick), now)
        if len(cached) >= capacity:
            residents = [replay.candidate(y, tick) for y in cached]
            chosen = policy.victims(residents, len(cached) + 1 - capacity, now)
            for victim in chosen:
                del cached[replay.ids[victim.id]]
                if on_evict is not None:
                    on_evict(victim, now)
        cached[x] = None
    return hits


def _ranked(
    trace: Iterable[Hashable],
    capacity: int,
    policy: Ranked,
    replay: _Replay,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Score-ranked policies: per-group recency queues; only group ends are scored."""
    on_use = getattr(policy, "on_use", None)
    on_page_in = getattr(policy, "on_page_in", None)
    on_evict = getattr(policy, "on_evict", None)
    groups: dict[Hashable, OrderedDict[Hashable, None]] = {}
    where: dict[Hashable, Hashable] = {}
    both = policy.both_ends
    # The newest of each group matters only when it may score lowest or sets a context bound.
    tails_needed = both or type(policy).context is not Ranked.context
    hits = 0

    def place(x: Hashable, tick: int) -> None:
        key = policy.group(replay.candidate(x, tick))
        where[x] = key
        queue = groups.get(key)
        if queue is None:
            queue = groups[key] = OrderedDict()
        queue[x] = None

    def unplace(x: Hashable) -> None:
        key = where.pop(x)
        queue = groups[key]
        del queue[x]
        if not queue:
            del groups[key]

    for tick, x in enumerate(trace, 1):
        if progress is not None and tick % PROGRESS_EVERY == 0:
            progress(tick)
        replay.use(x, tick)
        if x in where:
            hits += 1
            if on_use is not None:
                on_use(replay.candidate(x, tick), EPOCH + timedelta(seconds=tick))
            unplace(x)
            place(x, tick)
            continue
        now = EPOCH + timedelta(seconds=tick)
        replay.entered[x] = tick
        if on_page_in is not None:
            on_page_in(replay.candidate(x, tick), now)
        if len(where) >= capacity:
            # The oldest and newest of each group carry every extreme the context needs.
            heads, tails = [], []
            for queue in groups.values():
                heads.append(replay.candidate(next(iter(queue)), tick))
                if tails_needed and len(queue) > 1:
                    tails.append(replay.candidate(next(reversed(queue)), tick))
            policy.prepare(len(where))
            context = policy.context(heads + tails)
            ends = heads + tails if both else heads
            victim = min(ends, key=lambda c: policy.key(c, context))
            unplace(replay.ids[victim.id])
            if on_evict is not None:
                on_evict(victim, now)
        place(x, tick)
    return hits


def simulate(
    trace: Iterable[Hashable],
    *,
    capacity: int,
    policy: EvictionPolicy | str,
    memories: Mapping[Hashable, Memory] | None = None,
    progress: Callable[[int], None] | None = None,
) -> Simulation:
    """Replay ``trace`` through a copy of ``policy`` with room for ``capacity`` memories.

    ``policy`` is an eviction policy object (it is copied, never changed) or a
    name such as "lru" or "arc". ``memories`` optionally maps trace ids to their
    memories, so importance and kind can count; otherwise every id is a plain fact.
    ``progress(n)`` hears how many requests are replayed, every `PROGRESS_EVERY`
    on the slow paths (scored, TTL, learned policies) and once at the end.
    """
    check_capacity(capacity)
    given = policy_by_name(policy) if isinstance(policy, str) else policy
    checked = check_eviction(given, "policy")
    trace = list(trace)
    name = type(checked).__name__
    runner = _fast_path(checked)
    if runner is not None:
        hits = runner(trace, capacity)
    else:
        own = copy.deepcopy(checked)
        replay = _Replay(memories)
        if isinstance(own, Ranked):
            hits = _ranked(trace, capacity, own, replay, progress)
        else:
            hits = _general(trace, capacity, own, replay, progress)
    if progress is not None:
        progress(len(trace))
    return Simulation(name, capacity, len(trace), hits)


def simulate_general(
    trace: Iterable[Hashable],
    *,
    capacity: int,
    policy: EvictionPolicy,
    memories: Mapping[Hashable, Memory] | None = None,
) -> Simulation:
    """Like ``simulate`` but always through ``victims`` and the notifications (slow; for checks)."""
    check_capacity(capacity)
    checked = check_eviction(policy, "policy")
    trace = list(trace)
    hits = _general(trace, capacity, copy.deepcopy(checked), _Replay(memories))
    return Simulation(type(policy).__name__, capacity, len(trace), hits)
