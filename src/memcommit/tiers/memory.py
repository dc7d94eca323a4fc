"""TieredMemory: short-term partitions, mid-term segments, long-term and the archive.

A partition is ``(tenant, scope)``: short-term capacity, the eviction policy's
state and the stats are per partition, so one tenant never evicts another's
memories. Every tier move is a commit by author "tiers", one per tenant, whose
message says what moved and by which policy and names only that tenant's
memories. Use counts live in the store on its logical clock; the counters and
segment visits in each tenant's own state, added to inside the same writes.
The ``now`` of a call decides what still holds and how hot a segment is, and
stamps its commits (the store's clock does when it is not given); maintenance
run after a commit runs at that commit's time.
"""

from __future__ import annotations

import copy
import functools
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from memcommit.compaction import outline
from memcommit.errors import InvalidInput, NotFound
from memcommit.model import Commit, Memory, Usage
from memcommit.tiers import inputs
from memcommit.tiers.cache import Partition, TierCache, evictable
from memcommit.tiers.candidate import Candidate
from memcommit.tiers.consolidate import ConsolidationError, Unusable, summary_text
from memcommit.tiers.policies.base import check_capacity, check_eviction, check_promotion, notify
from memcommit.tiers.policies.classic import LRU
from memcommit.tiers.promotion import Never
from memcommit.tiers.segments import Segment, segment_id, segments
from memcommit.tiers.stats import (
    KEY,
    NAMESPACE,
    TierStats,
    add_stored,
    increment,
    tenant_of,
    tenant_store,
)

AUTHOR = "tiers"
#: Operations after which a tier may be over capacity.
_GROWS = frozenset({"add", "update", "move", "restore", "page_in", "begin_trace", "step"})
_WORKING = ("short", "mid", "long")
#: Key of a tenant's mid-term segment visits, beside its counters (namespace ``tiers``).
SEGMENTS = "segments"


@dataclass
class TouchResult:
    """What one ``touch`` did."""

    hits: list[str] = field(default_factory=list)
    warm_hits: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    paged_in: list[str] = field(default_factory=list)
    evicted: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    #: The last commit made; a touch paging in for several tenants makes one per tenant.
    commit: Commit | None = None
    commits: list[Commit] = field(default_factory=list)


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
    #: Segments left in mid-term because their summary failed (counted in stats too).
    errors: list[ConsolidationError] = field(default_factory=list)


def _pages_in(m: Memory, now: datetime) -> bool:
    """Whether touching ``m`` pages it in: archived, and it still holds."""
    return m.tier not in _WORKING and m.holds(now)


def _named(ids: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _policy_name(policy: Any) -> str:
    return type(policy).__name__


def _by_tenant(items: Iterable[Any], tenant: Callable[[Any], str]) -> dict[str, list[Any]]:
    """Items grouped by tenant: tenants in order of first appearance, items in order."""
    out: dict[str, list[Any]] = {}
    for item in items:
        out.setdefault(tenant(item), []).append(item)
    return out


def _visit(visits: Counter[str], now: datetime) -> Callable[[Any], Any]:
    """An update adding warm-hit ``visits`` to a tenant's stored segment visits."""

    def update(stored: Any) -> dict[str, Any]:
        raw = dict(stored or {})
        for sid, n in visits.items():
            raw[sid] = [int(raw.get(sid, [0])[0]) + n, now.isoformat()]
        return raw

    return update


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
    Opened on the whole store or on a tenant's view, it keeps the counters in
    each tenant's own state, so every reader of ``stats`` sees the same ones.
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
        self.heat_threshold = inputs.heat_threshold(heat_threshold)
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
        self._policies: dict[Any, Any] = {}
        # Counts, memories and residents, kept in step with every commit: those of
        # ``store`` as they land (on_commit), any other writer's at the next touch()
        # or maintain(), which first compare the store's head_seq with the last seen.
        self._cache = TierCache(store)
        self._entered: dict[str, int] = {}
        self._tick = 0
        self._busy = False
        self._stamp: datetime | None = None  # the time of our commits: the caller's now, if given
        self.auto = auto
        self._unsubscribe = store.on_commit(self._after_commit)

    def close(self) -> None:
        """Stop watching the store's commits (and so stop maintaining on its own)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    # -- reading --------------------------------------------------------------------

    @property
    def stats(self) -> TierStats:
        """The counters persisted so far, read from the store: every writer's, not only ours.

        Every tenant's on the whole store; on a tenant's view, that tenant's only.
        """
        return TierStats.read(self.store)

    def _tenant(self, tenant: Any) -> str:
        tenant = inputs.tenant(tenant)
        own = tenant_of(self.store)
        if tenant is None:
            return own or "default"
        if own is not None and tenant != own:
            raise InvalidInput("tenant", tenant, f"this store view holds only tenant {own!r}")
        return tenant

    def _io(self, tenant: str) -> Any:
        """The store restricted to ``tenant``: commits, uses and state through it stay in it."""
        return tenant_store(self.store, tenant)

    def working(
        self,
        scopes: Iterable[str] | None = None,
        *,
        tenant: str | None = None,
        now: datetime | None = None,
    ) -> list[Memory]:
        """Memories in short-term memory that hold, of one tenant (and the given scopes)."""
        scopes = inputs.scopes(scopes)
        tenant = self._tenant(tenant)
        now = inputs.moment(now)
        found = self.store.find(tenant=tenant, scopes=scopes, tiers=["short"], live=False)
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
        segment heats up); a miss one archived or no longer holding. Every argument
        is checked before anything is read or written. Unknown ids (or ids of
        another tenant than ``tenant``) raise NotFound naming them, after the
        known ones were counted; the result is on the error's ``result``. Each
        tenant's uses, moves and counters land in one transaction: a commit when
        something of it is paged in, else the uses' own write (ids of several
        tenants, on the whole store, make one per tenant, in order of first use).
        """
        ids = inputs.ids(ids)
        if tenant is not None:
            tenant = self._tenant(tenant)
        self._stamp = now = inputs.moment(now) if now is not None else None
        now = now or inputs.moment(None)
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
            for owner, group in _by_tenant(known, lambda i: current[i].tenant).items():
                if any(_pages_in(current[i], now) for i in group):
                    self._touch_moving(owner, group, current, now, result)
                else:
                    self._touch_in_place(owner, group, current, now, result)
        except BaseException:
            # What failed did not land: drop what this touch told the policies.
            self._policies.clear()
            self._cache.forget()
            raise
        if self.mid_capacity is not None and result.evicted:
            self.maintain(self._stamp)  # the evictions went to mid-term, maybe over capacity now
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
        self,
        m: Memory,
        now: datetime,
        result: TouchResult,
        visits: Counter[str],
        delta: TierStats,
    ) -> str:
        """Count one use of ``m`` as a "hit", "warm" hit, "miss" or "page_in"."""
        counts = delta.of((m.tenant, m.scope))
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
                visits[segment_id(m)] += 1
            return "warm"
        else:
            kind = "page_in"
            counts.page_ins += 1
            result.paged_in.append(m.id)
        counts.misses += 1
        result.misses.append(m.id)
        return kind

    def _touch_in_place(
        self,
        tenant: str,
        known: list[str],
        current: dict[str, Memory],
        now: datetime,
        result: TouchResult,
    ) -> None:
        """Nothing of ``tenant`` pages in: its uses, counters and segment visits in one write."""
        visits: Counter[str] = Counter()
        delta = TierStats()
        kinds = [self._count(current[i], now, result, visits, delta) for i in known]
        state: dict[tuple[str, str], Any] = {(NAMESPACE, KEY): increment(delta, tenant)}
        if visits:
            state[(NAMESPACE, SEGMENTS)] = _visit(visits, now)
        usage = self._io(tenant).record_uses(known, state=state)
        for k, (i, use) in enumerate(zip(known, self._uses(known, usage), strict=True)):
            self._tick = use.last_tick
            if kinds[k] == "hit":
                m = current[i]
                notify(self._policy((m.tenant, m.scope)), "on_use", self._candidate(m, use), now)

    def _touch_moving(
        self,
        tenant: str,
        known: list[str],
        current: dict[str, Memory],
        now: datetime,
        result: TouchResult,
    ) -> None:
        """Something of ``tenant`` pages in: its uses, moves and counters in one commit."""
        for i in known:
            m = current[i]
            if _pages_in(m, now):
                self._cache.residents((m.tenant, m.scope))  # read before taking the lock
        io = self._io(tenant)
        paged_before, evicted_before = len(result.paged_in), len(result.evicted)
        busy, self._busy = self._busy, True  # our commits make room, never call for it
        try:
            with io.commit(message="touch", author=AUTHOR, now=self._stamp) as tx:
                usage = io.record_uses(known)
                moves: list[tuple[Memory, str]] = []  # (memory before the move, tier), in order
                evicted_by: dict[Partition, list[str]] = {}
                visits: Counter[str] = Counter()
                delta = TierStats()
                for i, use in zip(known, self._uses(known, usage), strict=True):
                    self._tick = use.last_tick
                    m = current[i]
                    part = (m.tenant, m.scope)
                    kind = self._count(m, now, result, visits, delta)
                    if kind == "hit":
                        notify(self._policy(part), "on_use", self._candidate(m, use), now)
                    elif kind == "page_in":
                        self._entered[i] = self._tick
                        gone = self._page_in(m, part, use, now, current, moves, usage)
                        delta.of(part).evictions += len(gone)
                        result.evicted += gone
                        evicted_by.setdefault(part, []).extend(gone)
                landed = self._apply(tx, [(m.id, tier) for m, tier in moves])
                changed: dict[str, tuple[Memory, Memory]] = {}
                for (m, _), new in zip(moves, landed, strict=True):
                    changed[m.id] = (changed[m.id][0] if m.id in changed else m, new)
                self._cache.expect(tx.pending.seq, changed)
                add_stored(io, delta, tenant)
                if visits:
                    io.state_set(
                        NAMESPACE, SEGMENTS, _visit(visits, now)(io.state_get(NAMESPACE, SEGMENTS))
                    )
                # the message names what moved, which is known only now
                tx.message = self._touch_message(result.paged_in[paged_before:], evicted_by)
        except BaseException:
            del result.paged_in[paged_before:]
            del result.evicted[evicted_before:]
            raise
        finally:
            self._busy = busy
            self._cache.expected = None
        result.commit = tx.result
        result.commits.append(tx.result)

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

    def _touch_message(self, paged_in: list[str], evicted_by: dict[Partition, list[str]]) -> str:
        parts = [f"touch: paged in {_named(paged_in)}"]
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

    def _commit(
        self,
        tenant: str,
        moves: list[tuple[str, str]],
        message: str,
        result: MaintenanceResult,
        delta: TierStats | None = None,
    ) -> None:
        """Land ``tenant``'s ``moves`` in one commit by "tiers", adding ``delta`` to its stats."""
        if not moves:
            return
        io = self._io(tenant)
        busy, self._busy = self._busy, True  # our commits make room, never call for it
        try:
            with io.commit(message=message, author=AUTHOR, now=self._stamp) as tx:
                self._apply(tx, moves)
                if delta is not None:
                    add_stored(io, delta, tenant)
        finally:
            self._busy = busy
        result.commits.append(tx.result)

    # -- mid-term segments ----------------------------------------------------------

    def _visits(self, tenant: str) -> dict[str, tuple[int, datetime | None]]:
        raw = self._io(tenant).state_get(NAMESPACE, SEGMENTS, {}) or {}
        return {
            k: (int(v[0]), datetime.fromisoformat(v[1]) if v[1] else None) for k, v in raw.items()
        }

    # -- maintenance ----------------------------------------------------------------

    def _after_commit(self, commit: Commit) -> None:
        """After a commit through this store: follow it; maintain if a tier is now over capacity."""
        self._cache.observe(commit)
        if self._busy or not self.auto or not {c.op for c in commit.changes} & _GROWS:
            return  # our own moves make room, never take it
        if self._over_capacity():
            self.store.defer(functools.partial(self.maintain, commit.time))  # at its time

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
        """Compact, promote, evict over-capacity partitions, settle mid-term, trim long-term.

        Each step lands one commit per tenant it moves memories of. A summarizer
        that fails leaves its segment in mid-term, reported in ``errors``.
        """
        self._stamp = now = inputs.moment(now) if now is not None else None
        now = now or inputs.moment(None)
        result = MaintenanceResult()
        busy, self._busy = self._busy, True  # our commits make room, never call for it
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
            raise
        finally:
            self._busy = busy
        return result

    def _promote(self, now: datetime, result: MaintenanceResult) -> None:
        if isinstance(self.promotion, Never):
            return  # nothing to read: Never selects nothing
        found = [m for m in self.store.find(tiers=["short", "mid"], live=False) if m.holds(now)]
        if not found:
            return
        chosen = self.promotion.select(self._candidates(found), now)
        for c in chosen:
            if c.tier == "short":
                notify(self._policy((c.memory.tenant, c.memory.scope)), "on_evict", c, now)
        result.promoted = [c.id for c in chosen]
        for tenant, mine in _by_tenant(chosen, lambda c: c.memory.tenant).items():
            delta = TierStats()
            for c in mine:
                delta.of((tenant, c.memory.scope)).promotions += 1
            self._commit(
                tenant,
                [(c.id, "long") for c in mine],
                f"maintain: promoted {_named([c.id for c in mine])} to long-term by "
                f"{_policy_name(self.promotion)}",
                result,
                delta,
            )

    def _evict(self, now: datetime, result: MaintenanceResult) -> None:
        dest = "mid" if self.mid_capacity else "archive"
        over = sorted(p for p, n in self._sizes("short").items() if n > self.capacity)
        for tenant, parts in _by_tenant(over, lambda p: p[0]).items():
            moves: list[tuple[str, str]] = []
            dead: list[str] = []
            evicted: list[str] = []
            delta = TierStats()
            for part in parts:  # only these partitions are read (and they stay cached)
                members = list(self._cache.residents(part).values())
                if len(members) <= self.capacity:
                    continue
                policy = self._policy(part)
                counts = delta.of(part)
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
                        evicted.append(victim.id)
                        counts.evictions += 1
                        notify(policy, "on_evict", victim, now)
            if dest == "mid":
                result.to_mid += evicted
            message = f"maintain: evicted {_named(evicted)} to {dest} by "
            message += _policy_name(self.eviction)
            if dead:
                message += f"; archived {_named(dead)} (no longer holding)"
            result.evicted += dead + evicted
            self._commit(tenant, moves, message, result, delta)

    def _settle_mid(self, now: datetime, result: MaintenanceResult) -> None:
        for tenant in sorted(self._sizes("mid")):  # tenants with anything in mid-term
            found = self.store.find(tenant=tenant, tiers=["mid"], live=False)
            members = [m for m in found if evictable(m)]
            dead = [m for m in members if not m.holds(now)]
            self._commit(
                tenant,
                [(m.id, "archive") for m in dead],
                f"maintain: archived {_named([m.id for m in dead])} from mid-term "
                "(no longer holding)",
                result,
            )
            live = [m for m in members if m.holds(now)]
            segs = segments(live, self._visits(tenant))
            hot = [s for s in segs if s.heat(now) > self.heat_threshold]
            for s in hot:
                result.segments_promoted.append(s.id)
                delta = TierStats()
                delta.of((tenant, s.memories[0].scope)).promotions += len(s.memories)
                self._commit(
                    tenant,
                    [(m.id, "long") for m in s.memories],
                    f"maintain: promoted segment {s.id} ({len(s.memories)} memories, "
                    f"heat {s.heat(now):.2f} > {self.heat_threshold:g}) to long-term",
                    result,
                    delta,
                )
            rest = sorted((s for s in segs if s not in hot), key=lambda s: (s.heat(now), s.id))
            size = sum(len(s.memories) for s in rest)
            kept: set[str] = set()
            for coldest in rest:
                if size > (self.mid_capacity or 0) and self._consolidate(coldest, now, result):
                    size -= len(coldest.memories)
                else:
                    kept.add(coldest.id)
            self._keep_visits(tenant, kept)

    def _keep_visits(self, tenant: str, segment_ids: set[str]) -> None:
        """Forget the visits of segments that left mid-term (in one write, if any left)."""
        io = self._io(tenant)
        gone = set(io.state_get(NAMESPACE, SEGMENTS, {}) or {}) - segment_ids
        if gone:
            io.record_uses(
                [],
                state={
                    (NAMESPACE, SEGMENTS): lambda raw: {
                        k: v for k, v in (raw or {}).items() if k not in gone
                    }
                },
            )

    def _consolidate(self, seg: Segment, now: datetime, result: MaintenanceResult) -> bool:
        """Summarize one segment into a long-term summary and archive its memories.

        A summarizer that raises, or whose summary cannot be stored, leaves the
        segment in mid-term: the failure is reported, never raised. Whether it went.
        """
        first = seg.memories[0]
        tenant = first.tenant
        io = self._io(tenant)
        ids = sorted(m.id for m in seg.memories)
        delta = TierStats()
        counts = delta.of((tenant, first.scope))
        busy, self._busy = self._busy, True  # our commits make room, never call for it
        try:
            trace = io.trace(seg.id) if first.trace_id == seg.id else seg.as_trace()
            content = summary_text(self.summarizer, trace)
            with io.commit(
                message=f"maintain: consolidated segment {seg.id} ({_named(ids)}, heat "
                f"{seg.heat(now):.2f}, the coldest) into one summary; archived its memories",
                author=AUTHOR,
                now=self._stamp,
            ) as tx:
                try:
                    tx.add(
                        content,
                        kind="summary",
                        scope=first.scope,
                        tenant=tenant,
                        importance=max(m.importance for m in seg.memories),
                        tier="long",
                        metadata={"consolidated": ids, "segment": seg.id},
                    )
                except InvalidInput as exc:
                    raise Unusable(f"the summary cannot be stored: {exc}") from exc
                for i in ids:
                    tx.archive(i)
                counts.consolidations += 1
                add_stored(io, delta, tenant)
        except Unusable as exc:
            result.errors.append(ConsolidationError(seg.id, tenant, str(exc)))
            counts.consolidation_errors += 1
            io.record_uses([], state={(NAMESPACE, KEY): increment(delta, tenant)})
            return False
        finally:
            self._busy = busy
        result.commits.append(tx.result)
        result.consolidated.append(seg.id)
        return True

    def _trim_long(self, now: datetime, result: MaintenanceResult) -> None:
        limit = self.long_capacity or 0
        over = sorted(t for t, n in self._sizes("long").items() if n > limit)
        for tenant in over:  # only these tenants' long-term memories are read
            found = self.store.find(tenant=tenant, tiers=["long"], live=False)
            members = [m for m in found if evictable(m)]
            if len(members) <= limit:
                continue
            dead = [m for m in members if not m.holds(now)]
            live = [m for m in members if m.holds(now)]
            moves = [(m.id, "archive") for m in dead]
            if len(live) > limit:
                policy = self._policy((tenant, None, "long"))  # never a partition key
                for victim in policy.victims(self._candidates(live), len(live) - limit, now):
                    moves.append((victim.id, "archive"))
                    notify(policy, "on_evict", victim, now)
            trimmed = [i for i, _ in moves]
            result.trimmed += trimmed
            self._commit(
                tenant,
                moves,
                f"maintain: trimmed long-term to {self.long_capacity}, archived "
                f"{_named(trimmed)} by {_policy_name(self.eviction)}",
                result,
            )
