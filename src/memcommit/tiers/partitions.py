"""The policies as TieredMemory drives them: candidates on the logical clock, and their events.

One eviction policy instance, the caller's own, serves every partition: nothing
is copied, so a stateful policy hears every ``on_use``, ``on_page_in`` and
``on_evict`` on the object the caller holds, and a policy that cannot be copied
(one holding a lock) works like any other. Each candidate names the partition it
is offered for (``candidate.partition``): ``(tenant, scope)`` for a short-term
partition, ``(tenant, None)`` for a tenant's long-term memory. A policy that
keeps a queue per cache keys it by that, as the classics do.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from datetime import datetime

from memcommit.model import Memory, Usage
from memcommit.store import ViewLike
from memcommit.tiers.candidate import Candidate
from memcommit.tiers.policies.base import EvictionPolicy, PromotionPolicy, notify


def partition_of(m: Memory) -> tuple[str, str]:
    """The short-term partition of ``m``: its tenant and scope."""
    return (m.tenant, m.scope)


def long_term(tenant: str) -> tuple[str, None]:
    """The key of a tenant's long-term memory (never a short-term partition's: scope is None)."""
    return (tenant, None)


class Partitions:
    """The eviction and promotion policies, the logical clock, and when memories came in.

    ``tick`` is the store's logical clock as last seen (one tick per use);
    ``entered`` the tick at which a memory was last paged in. Both only move
    forward and are kept between calls: they describe the store, not a call.
    """

    def __init__(
        self, store: ViewLike, eviction: EvictionPolicy, promotion: PromotionPolicy
    ) -> None:
        self.store = store
        self.eviction = eviction
        self.promotion = promotion
        self.tick = 0
        self.entered: dict[str, int] = {}

    def candidate(
        self, m: Memory, usage: Usage | None, partition: Hashable | None = None
    ) -> Candidate:
        """``m`` as a policy sees it, offered for ``partition`` (its short-term one by default)."""
        return Candidate(
            m,
            m.tier,
            m.status,
            usage.count if usage else 0,
            usage.first_tick if usage else None,
            usage.last_tick if usage else None,
            self.tick,
            self.entered.get(m.id, 0),
            partition_of(m) if partition is None else partition,
        )

    def candidates(
        self,
        memories: Iterable[Memory],
        *,
        known: dict[str, Usage] | None = None,
        partition: Hashable | None = None,
    ) -> list[Candidate]:
        """Candidates with their use counts.

        Outside a touch the clock moves to their latest use. Inside one (``known``
        holds the counts read so far) it stays at the use being processed, and
        residents used again later in the same touch show those later uses already.
        """
        memories = list(memories)
        if known is not None:
            missing = [m.id for m in memories if m.id not in known]
            if missing:
                known.update(self.store.usage(missing))
            return [self.candidate(m, known.get(m.id), partition) for m in memories]
        usage = self.store.usage([m.id for m in memories]) if memories else {}
        if usage:
            self.tick = max(self.tick, max(u.last_tick for u in usage.values()))
        return [self.candidate(m, usage.get(m.id), partition) for m in memories]

    def tell(self, event: str, candidate: Candidate, now: datetime) -> None:
        """Tell the eviction policy of one event (``on_use``, ``on_page_in``, ``on_evict``)."""
        notify(self.eviction, event, candidate, now)

    def victims(self, candidates: list[Candidate], n: int, now: datetime) -> list[Candidate]:
        """The eviction policy's ``n`` victims, each told ``on_evict`` as it is chosen."""
        chosen = self.eviction.victims(candidates, n, now)
        for victim in chosen:
            self.tell("on_evict", victim, now)
        return chosen

    def evict_dead(self, m: Memory, now: datetime, partition: Hashable | None = None) -> None:
        """Tell the policy a memory that no longer holds left (it was never its choice)."""
        self.entered.pop(m.id, None)
        self.tell("on_evict", self.candidate(m, None, partition), now)
