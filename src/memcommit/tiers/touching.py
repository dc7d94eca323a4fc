"""One ``touch``: count each use as a cache access, and page missed live memories back in.

A ``Touch`` lives for one call and holds that call's time and result. Each
tenant's uses, moves and counters land in one transaction: a commit by "tiers"
when something of it pages in, else the uses' own write. A page-in into a full
partition first archives the residents that no longer hold, as maintenance
does, and only then asks the eviction policy for victims among the live ones.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from memcommit.compaction.compactor import COMPACTED_INTO
from memcommit.model import LIVE_TIERS, Memory, Usage
from memcommit.tiers.cache import Partition
from memcommit.tiers.results import TouchResult
from memcommit.tiers.segments import segment_id
from memcommit.tiers.setup import Setup
from memcommit.tiers.stats import KEY, NAMESPACE, TierStats, add_stored, increment
from memcommit.tiers.writes import apply, by_tenant, named, policy_name, tiers_commit

#: Key of a tenant's mid-term segment visits, beside its counters (namespace ``tiers``).
SEGMENTS = "segments"


def pages_in(m: Memory, now: datetime) -> bool:
    """Whether touching ``m`` pages it in: archived, and it still holds."""
    return m.tier not in LIVE_TIERS and m.holds(now)


def add_visits(visits: Counter[str], now: datetime) -> Callable[[Any], Any]:
    """An update adding warm-hit ``visits`` to a tenant's stored segment visits."""

    def update(stored: Any) -> dict[str, Any]:
        raw = dict(stored or {})
        for sid, n in visits.items():
            raw[sid] = [int(raw.get(sid, [0])[0]) + n, now.isoformat()]
        return raw

    return update


def uses_in_order(known: list[str], usage: dict[str, Usage]) -> list[Usage]:
    """Each use of this touch as it stood then: the k-th id was used at tick start + k."""
    start = max(u.last_tick for u in usage.values()) - len(known) + 1
    later = Counter(known)
    out = []
    for k, i in enumerate(known):
        later[i] -= 1
        total = usage[i]
        out.append(Usage(total.count - later[i], total.first_tick, start + k))
    return out


class Touch:
    """One call of ``touch``: its time, the result so far, and each tenant's write."""

    def __init__(self, setup: Setup, *, now: datetime, stamp: datetime | None) -> None:
        self.setup = setup
        self.parts = setup.partitions
        self.now = now
        self.stamp = stamp  # the time of its commits: the caller's now, if given
        self.result = TouchResult()

    def run(self, ids: list[str], tenant: str | None) -> TouchResult:
        """Count the uses of ``ids`` (of ``tenant`` only, when given); unknown ids are listed."""
        cache, result, now = self.setup.cache, self.result, self.now
        cache.sync()
        current = cache.load(dict.fromkeys(ids))
        for i in dict.fromkeys(ids):
            m = current.get(i)
            if m is None or (tenant is not None and m.tenant != tenant):
                result.unknown.append(i)
                current.pop(i, None)
        known = self._summarized([i for i in ids if i in current], current)
        try:
            for owner, group in by_tenant(known, lambda i: current[i].tenant).items():
                if any(pages_in(current[i], now) for i in group):
                    self._moving(owner, group, current)
                else:
                    self._in_place(owner, group, current)
        except BaseException:
            cache.forget()  # what failed did not land
            raise
        return result

    def _summarized(self, known: list[str], current: dict[str, Memory]) -> list[str]:
        """``known`` with each archived member of a compacted task counted as its summary.

        Once compaction ran, the live summary stands for the task: paging its root or a
        step back in would make recall pack the task beside its own summary. A member
        whose summary no longer holds pages in as usual.
        """
        members = [m for m in current.values() if pages_in(m, self.now) and m.trace_id]
        if not members:
            return known
        roots = self.setup.cache.load(dict.fromkeys(str(m.trace_id) for m in members))
        summary_of = {}
        for m in members:
            root = roots.get(str(m.trace_id))
            into = root.metadata.get(COMPACTED_INTO) if root is not None else None
            if isinstance(into, str):
                summary_of[m.id] = into
        summaries = self.setup.cache.load(dict.fromkeys(summary_of.values()))
        swap = {}
        for member, into in summary_of.items():
            summary = summaries.get(into)
            if (
                summary is not None
                and summary.tenant == current[member].tenant
                and summary.holds(self.now)
            ):
                swap[member] = into
                current[into] = summary
        return [swap.get(i, i) for i in known]

    def _count(self, m: Memory, visits: Counter[str], delta: TierStats) -> str:
        """Count one use of ``m`` as a "hit", "warm" hit, "miss" or "page_in"."""
        result = self.result
        counts = delta.of((m.tenant, m.scope))
        if not m.holds(self.now):
            kind = "miss"
        elif m.tier == "short":
            counts.hits += 1
            result.hits.append(m.id)
            return "hit"
        elif m.tier in ("mid", "long"):
            counts.warm_hits += 1
            result.warm_hits.append(m.id)
            if m.tier == "mid":
                visits[segment_id(m)] += 1
            return "warm"
        else:
            kind = "page_in"
            counts.page_ins += 1
            result.paged_in.append(m.id)
        counts.misses += 1
        result.misses.append(m.id)
        return kind

    def _in_place(self, tenant: str, known: list[str], current: dict[str, Memory]) -> None:
        """Nothing of ``tenant`` pages in: its uses, counters and segment visits in one write."""
        visits: Counter[str] = Counter()
        delta = TierStats()
        kinds = [self._count(current[i], visits, delta) for i in known]
        state: dict[tuple[str, str], Any] = {(NAMESPACE, KEY): increment(delta, tenant)}
        if visits:
            state[(NAMESPACE, SEGMENTS)] = add_visits(visits, self.now)
        usage = self.setup.io(tenant).record_uses(known, state=state)
        for kind, i, use in zip(kinds, known, uses_in_order(known, usage), strict=True):
            self.parts.tick = use.last_tick
            if kind == "hit":
                self.parts.tell("on_use", self.parts.candidate(current[i], use), self.now)

    def _moving(self, tenant: str, known: list[str], current: dict[str, Memory]) -> None:
        """Something of ``tenant`` pages in: its uses, moves and counters in one commit."""
        cache, result, now = self.setup.cache, self.result, self.now
        for i in known:
            m = current[i]
            if pages_in(m, now):
                cache.residents((m.tenant, m.scope))  # read before taking the lock
        io = self.setup.io(tenant)
        paged_before, evicted_before = len(result.paged_in), len(result.evicted)
        try:
            with tiers_commit(io, "touch", self.stamp) as tx:
                usage = io.record_uses(known)
                moves: list[tuple[Memory, str]] = []  # (memory before the move, tier), in order
                gone_by: dict[Partition, tuple[list[str], list[str]]] = {}
                visits: Counter[str] = Counter()
                delta = TierStats()
                for i, use in zip(known, uses_in_order(known, usage), strict=True):
                    self.parts.tick = use.last_tick
                    m = current[i]
                    kind = self._count(m, visits, delta)
                    if kind == "hit":
                        self.parts.tell("on_use", self.parts.candidate(m, use), now)
                    elif kind == "page_in":
                        self.parts.entered[i] = self.parts.tick
                        dead, evicted = self._page_in(m, use, current, moves, usage)
                        delta.of((m.tenant, m.scope)).evictions += len(dead) + len(evicted)
                        result.evicted += dead + evicted
                        were = gone_by.setdefault((m.tenant, m.scope), ([], []))
                        were[0].extend(dead)
                        were[1].extend(evicted)
                moved = apply(tx, [(m.id, tier) for m, tier in moves])
                changed: dict[str, tuple[Memory, Memory]] = {}
                for (m, _), new in zip(moves, moved, strict=True):
                    changed[m.id] = (changed[m.id][0] if m.id in changed else m, new)
                cache.expect(tx.pending.seq, changed)
                add_stored(io, delta, tenant)
                if visits:
                    stored = io.state_get(NAMESPACE, SEGMENTS)
                    io.state_set(NAMESPACE, SEGMENTS, add_visits(visits, now)(stored))
                # the message names what moved, which is known only now
                tx.message = self._message(result.paged_in[paged_before:], gone_by)
        except BaseException:
            del result.paged_in[paged_before:]
            del result.evicted[evicted_before:]
            raise
        finally:
            cache.expected = None
        if tx.result is not None:  # None: the page-ins turned out to change nothing
            result.commit = tx.result
            result.commits.append(tx.result)

    def _page_in(
        self,
        m: Memory,
        usage: Usage | None,
        current: dict[str, Memory],
        moves: list[tuple[Memory, str]],
        known: dict[str, Usage],
    ) -> tuple[list[str], list[str]]:
        """Bring ``m`` into its partition, making room at once: (archived dead, evicted live)."""
        parts, now, capacity = self.parts, self.now, self.setup.capacity
        residents = self.setup.cache.residents((m.tenant, m.scope))
        parts.tell("on_page_in", parts.candidate(m, usage), now)
        dead: list[str] = []
        evicted: list[str] = []
        if len(residents) >= capacity:
            for r in [r for r in residents.values() if not r.holds(now)]:
                self._leave(r, "archive", residents, current, moves)
                parts.evict_dead(r, now)
                dead.append(r.id)
        if len(residents) >= capacity:
            live = parts.candidates(residents.values(), known=known)
            dest = self.setup.evict_to
            for victim in parts.victims(live, len(residents) + 1 - capacity, now):
                self._leave(victim.memory, dest, residents, current, moves)
                parts.entered.pop(victim.id, None)
                evicted.append(victim.id)
        moves.append((m, "short"))
        current[m.id] = residents[m.id] = replace(m, tier="short")
        return dead, evicted

    @staticmethod
    def _leave(
        m: Memory,
        tier: str,
        residents: dict[str, Memory],
        current: dict[str, Memory],
        moves: list[tuple[Memory, str]],
    ) -> None:
        residents.pop(m.id, None)
        moves.append((m, tier))
        current[m.id] = replace(m, tier=tier)

    def _message(
        self, paged_in: list[str], gone_by: dict[Partition, tuple[list[str], list[str]]]
    ) -> str:
        parts = [f"touch: paged in {named(paged_in)}"]
        dest = "mid-term" if self.setup.mid_capacity else "the archive"
        for (tenant, scope), (dead, evicted) in gone_by.items():
            if evicted:
                parts.append(
                    f"evicted {named(evicted)} from {tenant}/{scope} to {dest} by "
                    f"{policy_name(self.parts.eviction)}"
                )
            if dead:
                parts.append(f"archived {named(dead)} from {tenant}/{scope} (no longer holding)")
        return "; ".join(parts)
