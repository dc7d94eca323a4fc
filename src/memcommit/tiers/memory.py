"""TieredMemory: short-term partitions, mid-term segments, long-term and the archive.

A partition is ``(tenant, scope)``: short-term capacity, the eviction policy's
state and the stats are per partition, so one tenant never evicts another's
memories. Every tier move is a commit by author "tiers" whose message says what
moved and by which policy; use counts live in the store on its logical clock.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any

from memcommit.compaction import outline
from memcommit.errors import InvalidInput, NotFound
from memcommit.model import Commit, Memory, Usage
from memcommit.tiers.cache import Partition, TierCache, evictable
from memcommit.tiers.candidate import Candidate
from memcommit.tiers.policies.base import check_capacity, check_eviction, check_promotion, notify
from memcommit.tiers.policies.classic import LRU
from memcommit.tiers.promotion import Never
from memcommit.tiers.segments import Segment, segment_id, segments
from memcommit.tiers.stats import KEY, NAMESPACE, TierStats

AUTHOR = "tiers"
#: Operations after which a tier may be over capacity.
_GROWS = frozenset({"add", "update", "move", "restore", "page_in", "begin_trace", "step"})
_WORKING = ("short", "mid", "long")


@dataclass
class TouchResult:
    """What one ``touch`` did."""

    hits: list[str] = field(default_factory=list)
    warm_hits: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    paged_in: list[str] = field(default_factory=list)
    evicted: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    commit: Commit | None = None


@dataclass
class MaintenanceResult:
    """What one ``maintain`` did, step by step."""

    compacted: Any = None
    promoted: list[str] = field(default_factory=list)
    evicted: list[str] = field(default_factory=list)
    to_mid: list[str] = field(default_factory=list)
    segments_promoted: list[str] = field(default_factory=list)
    consolidated: list[str] = field(default_factory=list)
    trimmed: list[str] = field(default_factory=list)
    commits: list[Commit] = field(default_factory=list)


def _pages_in(m: Memory, now: datetime) -> bool:
    """Whether touching ``m`` pages it in: archived, and it still holds."""
    return m.tier not in _WORKING and m.holds(now)


def _named(ids: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _policy_name(policy: Any) -> str:
    return type(policy).__name__


class TieredMemory:
    """A working memory over ``store``: touch what you use, read what is in short-term.

    ``capacity`` bounds each short-term partition; ``eviction`` (LRU by default)
    picks what leaves it, each partition with its own copy of the policy;
    ``promotion`` (Never by default) picks what moves to long-term;
    ``compactor`` (any object with ``compact(now=None)``) runs first in
    ``maintain``; with ``mid_capacity`` evicted memories wait in mid-term
    segments, promoted whole past ``heat_threshold`` and consolidated by
    ``summarizer`` (default: the compactor's, else ``outline``) when mid-term is
    full; ``long_capacity`` trims long-term. With ``auto`` (the default), a
    commit that leaves a tier over capacity runs ``maintain`` right after it.
    """

    def __init__(
        self,
        store: Any,
        *,
        capacity: int = 64,
        eviction: Any = None,
        promotion: Any = None,
        compactor: Any = None,
        mid_capacity: int | None = None,
        heat_threshold: float = 10.0,
        long_capacity: int | None = None,
        summarizer: Callable[[Any], Any] | None = None,
        auto: bool = True,
    ) -> None:
        self.capacity = check_capacity(capacity)
        self.mid_capacity = check_capacity(mid_capacity, "mid_capacity", optional=True)
        self.long_capacity = check_capacity(long_capacity, "long_capacity", optional=True)
        if isinstance(heat_threshold, bool) or not isinstance(heat_threshold, (int, float)):
            raise InvalidInput("heat_threshold", heat_threshold, "must be a number")
        self.heat_threshold = float(heat_threshold)
        self.eviction = check_eviction(LRU() if eviction is None else eviction)
        self.promotion = check_promotion(Never() if promotion is None else promotion)
        if compactor is not None and not callable(getattr(compactor, "compact", None)):
            raise InvalidInput("compactor", compactor, "must be an object with compact(now=None)")
        self.compactor = compactor
        if summarizer is not None and not callable(summarizer):
            raise InvalidInput("summarizer", summarizer, "must be a callable from a Trace to JSON")
        # Consolidation summarizes like compaction does: the compactor's summarizer, or outline.
        own = getattr(compactor, "summarizer", None)
        self.summarizer = summarizer or (own if callable(own) else outline)
        self.store = store
        self.stats = TierStats()
        self.stats.load(store)
        self._policies: dict[Any, Any] = {}
        # Counts, memories and residents, kept in step with every commit: those of
        # ``store`` as they land (on_commit), any other writer's at the next touch()
        # or maintain(), which first compare the store's head_seq with the last seen.
        self._cache = TierCache(store)
        self._entered: dict[str, int] = {}
        self._tick = 0
        self._busy = False
        self.auto = auto
        self._unsubscribe = store.on_commit(self._after_commit)

    def close(self) -> None:
        """Stop watching the store's commits (and so stop maintaining on its own)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    # -- reading --------------------------------------------------------------------

    def _tenant(self, tenant: str | None) -> str:
        own = getattr(self.store, "name", None)
        if tenant is None:
            return own if isinstance(own, str) else "default"
        if isinstance(own, str) and tenant != own:
            raise InvalidInput("tenant", tenant, f"this store view holds only tenant {own!r}")
        return tenant

    def working(
        self,
        scopes: Iterable[str] | None = None,
        *,
        tenant: str | None = None,
        now: datetime | None = None,
    ) -> list[Memory]:
        """Memories in short-term memory that hold, of one tenant (and the given scopes)."""
        if isinstance(scopes, str):
            raise InvalidInput("scopes", scopes, "must be a list of scopes, not one string")
        now = now or datetime.now(timezone.utc)
        found = self.store.find(
            tenant=self._tenant(tenant), scopes=scopes, tiers=["short"], live=False
        )
        return [m for m in found if m.holds(now)]

    def _policy(self, key: Any) -> Any:
        policy = self._policies.get(key)
        if policy is None:
            policy = self._policies[key] = copy.deepcopy(self.eviction)
        return policy

    def _candidate(self, m: Memory, usage: Usage | None) -> Candidate:
        return Candidate(
            m,
            m.tier,
            m.status,
            usage.count if usage else 0,
            usage.first_tick if usage else None,
            usage.last_tick if usage else None,
            self._tick,
            self._entered.get(m.id, 0),
        )

    def _candidates(
        self, memories: Iterable[Memory], *, known: dict[str, Usage] | None = None
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
            return [self._candidate(m, known.get(m.id)) for m in memories]
        usage = self.store.usage([m.id for m in memories]) if memories else {}
        if usage:
            self._tick = max(self._tick, max(u.last_tick for u in usage.values()))
        return [self._candidate(m, usage.get(m.id)) for m in memories]

    # -- touching -------------------------------------------------------------------

    def touch(
        self, ids: Iterable[str], *, tenant: str | None = None, now: datetime | None = None
    ) -> TouchResult:
        """Count one use of each id, as a cache access; page missed live memories back in.

        A hit is a memory in short-term; a warm hit one in mid- or long-term (a mid
        segment heats up); a miss one archived or no longer holding. Unknown ids
        (or ids of another tenant than ``tenant``) raise NotFound naming them,
        after the known ones were counted; the result is on the error's ``result``.
        The uses, the moves and the counters land in one transaction: a commit
        when something is paged in, else the uses' own write.
        """
        if isinstance(ids, str) or not isinstance(ids, Iterable):
            raise InvalidInput("ids", ids, "must be a list of memory ids")
        ids = list(ids)
        if not all(isinstance(i, str) and i for i in ids):
            raise InvalidInput("ids", ids, "every id must be a non-empty string")
        if tenant is not None:
            tenant = self._tenant(tenant)
        now = now or datetime.now(timezone.utc)
        result = TouchResult()
        self._cache.sync()
        current = self._cache.load(dict.fromkeys(ids))
        for i in dict.fromkeys(ids):
            m = current.get(i)
            if m is None or (tenant is not None and m.tenant != tenant):
                result.unknown.append(i)
                current.pop(i, None)
        known = [i for i in ids if i in current]
        try:
            if any(_pages_in(m, now) for m in current.values()):
                self._touch_moving(known, current, now, result)
            elif known:
                self._touch_in_place(known, current, now, result)
        except BaseException:
            # Nothing moved: drop what this touch told the policies and counted.
            self._policies.clear()
            self._cache.forget()
            self.stats.load(self.store)
            raise
        if self.mid_capacity is not None and result.evicted:
            self.maintain(now)  # the evictions went to mid-term, which may now be over capacity
        if result.unknown:
            error = NotFound("ids", result.unknown)
            error.result = result  # type: ignore[attr-defined]
            raise error
        return result

    def _uses(self, known: list[str], usage: dict[str, Usage]) -> list[Usage]:
        """Each use of this touch as it stood then: the k-th id was used at tick start + k."""
        start = max(u.last_tick for u in usage.values()) - len(known) + 1
        later = Counter(known)
        out = []
        for k, i in enumerate(known):
            later[i] -= 1
            total = usage[i]
            out.append(Usage(total.count - later[i], total.first_tick, start + k))
        return out

    def _count(
        self, m: Memory, now: datetime, result: TouchResult, visits: Counter[tuple[str, str]]
    ) -> str:
        """Count one use of ``m`` as a "hit", "warm" hit, "miss" or "page_in"."""
        counts = self.stats.of((m.tenant, m.scope))
        if not m.holds(now):
            kind = "miss"
        elif m.tier == "short":
            counts.hits += 1
            result.hits.append(m.id)
            return "hit"
        elif m.tier in ("mid", "long"):
            counts.warm_hits += 1
            result.warm_hits.append(m.id)
            if m.tier == "mid":
                visits[(m.tenant, segment_id(m))] += 1
            return "warm"
        else:
            kind = "page_in"
            counts.page_ins += 1
            result.paged_in.append(m.id)
        counts.misses += 1
        result.misses.append(m.id)
        return kind

    def _touch_in_place(
        self, known: list[str], current: dict[str, Memory], now: datetime, result: TouchResult
    ) -> None:
        """Nothing pages in: the uses, counters and segment visits in one write."""
        visits: Counter[tuple[str, str]] = Counter()
        kinds = [self._count(current[i], now, result, visits) for i in known]
        state = {(NAMESPACE, KEY): self.stats.to_json(), **self._visited(visits, now)}
        usage = self.store.record_uses(known, state=state)
        for k, (i, use) in enumerate(zip(known, self._uses(known, usage), strict=True)):
            self._tick = use.last_tick
            if kinds[k] == "hit":
                m = current[i]
                notify(self._policy((m.tenant, m.scope)), "on_use", self._candidate(m, use), now)

    def _touch_moving(
        self, known: list[str], current: dict[str, Memory], now: datetime, result: TouchResult
    ) -> None:
        """Something pages in: the uses, moves and counters in one commit by "tiers"."""
        for m in current.values():
            if _pages_in(m, now):
                self._cache.residents((m.tenant, m.scope))  # read before taking the lock
        self._busy = True
        try:
            with self.store.commit(message="touch", author=AUTHOR, now=now) as tx:
                usage = self.store.record_uses(known)
                moves: list[tuple[Memory, str]] = []  # (memory before the move, tier), in order
                evicted_by: dict[Partition, list[str]] = {}
                visits: Counter[tuple[str, str]] = Counter()
                for i, use in zip(known, self._uses(known, usage), strict=True):
                    self._tick = use.last_tick
                    m = current[i]
                    part = (m.tenant, m.scope)
                    kind = self._count(m, now, result, visits)
                    if kind == "hit":
                        notify(self._policy(part), "on_use", self._candidate(m, use), now)
                    elif kind == "page_in":
                        self._entered[i] = self._tick
                        gone = self._page_in(m, part, use, now, current, moves, usage)
                        self.stats.of(part).evictions += len(gone)
                        result.evicted += gone
                        evicted_by.setdefault(part, []).extend(gone)
                landed = self._apply(tx, [(m.id, tier) for m, tier in moves])
                changed: dict[str, tuple[Memory, Memory]] = {}
                for (m, _), new in zip(moves, landed, strict=True):
                    changed[m.id] = (changed[m.id][0] if m.id in changed else m, new)
                self._cache.expect(tx.pending.seq, changed)
                self.stats.save(self.store)
                for (namespace, key), value in self._visited(visits, now).items():
                    self.store.state_set(namespace, key, value)
                # the message names what moved, which is known only now
                tx.pending = replace(tx.pending, message=self._touch_message(result, evicted_by))
        finally:
            self._busy = False
            self._cache.expected = None
        result.commit = tx.result

    def _page_in(
        self,
        m: Memory,
        part: Partition,
        usage: Usage | None,
        now: datetime,
        current: dict[str, Memory],
        moves: list[tuple[Memory, str]],
        known: dict[str, Usage],
    ) -> list[str]:
        """Bring ``m`` into its partition, evicting at once to make room."""
        policy = self._policy(part)
        residents = self._cache.residents(part)
        notify(policy, "on_page_in", self._candidate(m, usage), now)
        gone: list[str] = []
        if len(residents) >= self.capacity:
            cands = self._candidates(residents.values(), known=known)
            chosen = policy.victims(cands, len(residents) + 1 - self.capacity, now)
            dest = "mid" if self.mid_capacity else "archive"
            for victim in chosen:
                residents.pop(victim.id, None)
                self._entered.pop(victim.id, None)
                moves.append((victim.memory, dest))
                current[victim.id] = replace(victim.memory, tier=dest)
                notify(policy, "on_evict", victim, now)
                gone.append(victim.id)
        moves.append((m, "short"))
        current[m.id] = residents[m.id] = replace(m, tier="short")
        return gone

    def _touch_message(self, result: TouchResult, evicted_by: dict[Partition, list[str]]) -> str:
        parts = [f"touch: paged in {_named(result.paged_in)}"]
        dest = "mid-term" if self.mid_capacity else "the archive"
        for (tenant, scope), gone in evicted_by.items():
            if gone:
                parts.append(
                    f"evicted {_named(gone)} from {tenant}/{scope} to {dest} by "
                    f"{_policy_name(self.eviction)}"
                )
        return "; ".join(parts)

    @staticmethod
    def _apply(tx: Any, moves: list[tuple[str, str]]) -> list[Memory]:
        """Make each move in ``tx``; the new versions, in order."""
        out = []
        for i, tier in moves:
            if tier == "short":
                out.append(tx.page_in(i))
            elif tier == "archive":
                out.append(tx.archive(i))
            else:
                out.append(tx.move(i, tier))
        return out

    def _commit_moves(self, moves: list[tuple[str, str]], message: str, now: datetime) -> Commit:
        """Land ``moves`` in one commit by "tiers", with the counters (the cache follows it)."""
        self._busy = True
        try:
            with self.store.commit(message=message, author=AUTHOR, now=now) as tx:
                self._apply(tx, moves)
                self.stats.save(self.store)
        finally:
            self._busy = False
        return tx.result

    # -- mid-term segments ----------------------------------------------------------

    def _visits_key(self, tenant: str) -> str:
        return f"segments:{tenant}"

    def _visits(self, tenant: str) -> dict[str, tuple[int, datetime | None]]:
        raw = self.store.state_get(NAMESPACE, self._visits_key(tenant), {}) or {}
        return {
            k: (int(v[0]), datetime.fromisoformat(v[1]) if v[1] else None) for k, v in raw.items()
        }

    def _visited(
        self, visits: Counter[tuple[str, str]], now: datetime
    ) -> dict[tuple[str, str], Any]:
        """The segment visits to persist after warm hits heated them, per tenant."""
        out: dict[tuple[str, str], Any] = {}
        for tenant in sorted({t for t, _ in visits}):
            raw = self.store.state_get(NAMESPACE, self._visits_key(tenant), {}) or {}
            for (t, sid), n in visits.items():
                if t == tenant:
                    raw[sid] = [int(raw.get(sid, [0])[0]) + n, now.isoformat()]
            out[(NAMESPACE, self._visits_key(tenant))] = raw
        return out

    # -- maintenance ----------------------------------------------------------------

    def _after_commit(self, commit: Commit) -> None:
        """After a commit through this store: follow it; maintain if a tier is now over capacity."""
        self._cache.observe(commit)
        if self._busy or not self.auto or not {c.op for c in commit.changes} & _GROWS:
            return  # our own moves make room, never take it
        if self._over_capacity():
            self.store.defer(self.maintain)

    def _sizes(self, tier: str) -> Counter[Any]:
        """Evictable memories of ``tier`` per partition (short) or per tenant (mid, long)."""
        sizes: Counter[Any] = Counter()
        for (t, tenant, scope), n in self._cache.counts().items():
            if t == tier and n > 0:
                sizes[(tenant, scope) if tier == "short" else tenant] += n
        return sizes

    def _over_capacity(self) -> bool:
        """Whether a short-term partition, or mid- or long-term of a tenant, is over capacity."""
        limits = {"short": self.capacity, "mid": self.mid_capacity, "long": self.long_capacity}
        return any(
            limit is not None and any(n > limit for n in self._sizes(tier).values())
            for tier, limit in limits.items()
        )

    def maintain(self, now: datetime | None = None) -> MaintenanceResult:
        """Compact, promote, evict over-capacity partitions, settle mid-term, trim long-term."""
        now = now or datetime.now(timezone.utc)
        result = MaintenanceResult()
        self._busy = True
        try:
            self._cache.sync()
            if self.compactor is not None:
                result.compacted = self.compactor.compact(now=now)
            self._promote(now, result)
            self._evict(now, result)
            if self.mid_capacity is not None:
                self._settle_mid(now, result)
            if self.long_capacity is not None:
                self._trim_long(now, result)
        except BaseException:
            self._cache.forget()
            self.stats.load(self.store)  # the counters of what landed were saved with it
            raise
        finally:
            self._busy = False
        return result

    def _commit(
        self, moves: list[tuple[str, str]], message: str, now: datetime, result: MaintenanceResult
    ) -> None:
        if moves:
            result.commits.append(self._commit_moves(moves, message, now))

    def _promote(self, now: datetime, result: MaintenanceResult) -> None:
        if isinstance(self.promotion, Never):
            return  # nothing to read: Never selects nothing
        found = [m for m in self.store.find(tiers=["short", "mid"], live=False) if m.holds(now)]
        if not found:
            return
        chosen = self.promotion.select(self._candidates(found), now)
        for c in chosen:
            self.stats.of((c.memory.tenant, c.memory.scope)).promotions += 1
            if c.tier == "short":
                notify(self._policy((c.memory.tenant, c.memory.scope)), "on_evict", c, now)
        result.promoted = [c.id for c in chosen]
        self._commit(
            [(c.id, "long") for c in chosen],
            f"maintain: promoted {_named(result.promoted)} to long-term by "
            f"{_policy_name(self.promotion)}",
            now,
            result,
        )

    def _evict(self, now: datetime, result: MaintenanceResult) -> None:
        moves: list[tuple[str, str]] = []
        dead: list[str] = []
        dest = "mid" if self.mid_capacity else "archive"
        over = sorted(p for p, n in self._sizes("short").items() if n > self.capacity)
        for part in over:  # only these partitions are read (and they stay cached)
            members = list(self._cache.residents(part).values())
            if len(members) <= self.capacity:
                continue
            policy = self._policy(part)
            counts = self.stats.of(part)
            holding = [m for m in members if m.holds(now)]
            for m in members:
                if not m.holds(now):
                    moves.append((m.id, "archive"))
                    dead.append(m.id)
                    counts.evictions += 1
                    notify(policy, "on_evict", self._candidate(m, None), now)
            if len(holding) > self.capacity:
                for victim in policy.victims(
                    self._candidates(holding), len(holding) - self.capacity, now
                ):
                    moves.append((victim.id, dest))
                    result.evicted.append(victim.id)
                    counts.evictions += 1
                    notify(policy, "on_evict", victim, now)
        if dest == "mid":
            result.to_mid = list(result.evicted)
        message = f"maintain: evicted {_named(result.evicted)} to {dest} by "
        message += _policy_name(self.eviction)
        if dead:
            message += f"; archived {_named(dead)} (no longer holding)"
        result.evicted = dead + result.evicted
        self._commit(moves, message, now, result)

    def _settle_mid(self, now: datetime, result: MaintenanceResult) -> None:
        for tenant in sorted(self._sizes("mid")):  # tenants with anything in mid-term
            found = self.store.find(tenant=tenant, tiers=["mid"], live=False)
            members = [m for m in found if evictable(m)]
            dead = [m for m in members if not m.holds(now)]
            self._commit(
                [(m.id, "archive") for m in dead],
                f"maintain: archived {_named([m.id for m in dead])} from mid-term "
                "(no longer holding)",
                now,
                result,
            )
            live = [m for m in members if m.holds(now)]
            segs = segments(live, self._visits(tenant))
            hot = [s for s in segs if s.heat(now) > self.heat_threshold]
            for s in hot:
                result.segments_promoted.append(s.id)
                self.stats.of((tenant, s.memories[0].scope)).promotions += len(s.memories)
                self._commit(
                    [(m.id, "long") for m in s.memories],
                    f"maintain: promoted segment {s.id} ({len(s.memories)} memories, "
                    f"heat {s.heat(now):.2f} > {self.heat_threshold:g}) to long-term",
                    now,
                    result,
                )
            rest = sorted((s for s in segs if s not in hot), key=lambda s: (s.heat(now), s.id))
            size = sum(len(s.memories) for s in rest)
            while rest and size > (self.mid_capacity or 0):
                coldest = rest.pop(0)
                size -= len(coldest.memories)
                self._consolidate(coldest, now, result)
            self._keep_visits(tenant, {s.id for s in rest})

    def _keep_visits(self, tenant: str, segment_ids: set[str]) -> None:
        """Forget the visits of segments that left mid-term."""
        raw = self.store.state_get(NAMESPACE, self._visits_key(tenant), {}) or {}
        kept = {k: v for k, v in raw.items() if k in segment_ids}
        if kept != raw:
            self.store.state_set(NAMESPACE, self._visits_key(tenant), kept)

    def _consolidate(self, seg: Segment, now: datetime, result: MaintenanceResult) -> None:
        """Summarize one segment into a long-term summary and archive its memories."""
        first = seg.memories[0]
        trace = self.store.trace(seg.id) if first.trace_id == seg.id else seg.as_trace()
        summary = self.summarizer(trace)
        ids = sorted(m.id for m in seg.memories)
        self._busy = True
        try:
            with self.store.commit(
                message=f"maintain: consolidated segment {seg.id} ({_named(ids)}, heat "
                f"{seg.heat(now):.2f}, the coldest) into one summary; archived its memories",
                author=AUTHOR,
                now=now,
            ) as tx:
                tx.add(
                    json.dumps(summary, sort_keys=True, ensure_ascii=False, default=str),
                    kind="summary",
                    scope=first.scope,
                    tenant=first.tenant,
                    importance=max(m.importance for m in seg.memories),
                    tier="long",
                    metadata={"consolidated": ids, "segment": seg.id},
                )
                for i in ids:
                    tx.archive(i)
                self.stats.of((first.tenant, first.scope)).consolidations += 1
                self.stats.save(self.store)
            result.commits.append(tx.result)
        finally:
            self._busy = False
        result.consolidated.append(seg.id)

    def _trim_long(self, now: datetime, result: MaintenanceResult) -> None:
        moves: list[tuple[str, str]] = []
        limit = self.long_capacity or 0
        over = sorted(t for t, n in self._sizes("long").items() if n > limit)
        for tenant in over:  # only these tenants' long-term memories are read
            found = self.store.find(tenant=tenant, tiers=["long"], live=False)
            members = [m for m in found if evictable(m)]
            if len(members) <= limit:
                continue
            dead = [m for m in members if not m.holds(now)]
            live = [m for m in members if m.holds(now)]
            moves += [(m.id, "archive") for m in dead]
            result.trimmed += [m.id for m in dead]
            if len(live) > limit:
                policy = self._policy((tenant, None, "long"))  # never a partition key
                for victim in policy.victims(self._candidates(live), len(live) - limit, now):
                    moves.append((victim.id, "archive"))
                    result.trimmed.append(victim.id)
                    notify(policy, "on_evict", victim, now)
        self._commit(
            moves,
            f"maintain: trimmed long-term to {self.long_capacity}, archived "
            f"{_named(result.trimmed)} by {_policy_name(self.eviction)}",
            now,
            result,
        )
