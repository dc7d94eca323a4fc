"""TieredMemory: short-term partitions, mid-term segments, long-term and the archive.

A partition is ``(tenant, scope)``: short-term capacity and the stats are per
partition, so one tenant never evicts another's memories. Every tier move is a
commit by author "tiers", one per tenant, whose message says what moved and by
which policy and names only that tenant's memories. Use counts live in the store
on its logical clock; the counters and segment visits in each tenant's own
state, added to inside the same writes.

The work is split by job: ``touching`` (a touch and its page-ins),
``maintenance`` (the maintain steps), ``partitions`` (the policies and the
candidates they see), ``cache`` (what is known of the store, kept in step with
every writer's commits) and ``writes`` (how tier commits land). Each call makes
its own ``Touch`` or ``Maintenance`` object; nothing of a call stays here.

The ``now`` of a call decides what still holds and how hot a segment is, and
dates its commits (the store's clock does when it is not given); maintenance
run after a commit runs at that commit's time. With several writers on one
store, another one may land a later commit first: the commit is then dated by
the newest commit's time (`commit_time.commit_at_or_after`), so a commit that
landed is never reported as failed and the same calls give the same history.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from memcommit.compaction import outline
from memcommit.errors import InvalidInput, NotFound
from memcommit.model import Commit, Memory
from memcommit.tiers import inputs
from memcommit.tiers.cache import TierCache
from memcommit.tiers.maintenance import Maintenance
from memcommit.tiers.partitions import Partitions
from memcommit.tiers.policies.base import (
    EvictionPolicy,
    PromotionPolicy,
    check_capacity,
    check_eviction,
    check_promotion,
)
from memcommit.tiers.policies.classic import LRU
from memcommit.tiers.promotion import Never
from memcommit.tiers.results import MaintenanceResult, TouchResult
from memcommit.tiers.setup import Setup
from memcommit.tiers.stats import StoreOrView, TierStats, tenant_of
from memcommit.tiers.touching import Touch
from memcommit.tiers.writes import at_work, is_at_work

#: Operations after which a tier may be over capacity.
_GROWS = frozenset({"add", "update", "move", "restore", "page_in", "begin_trace", "step"})

__all__ = ["MaintenanceResult", "TieredMemory", "TouchResult"]


class TieredMemory:
    """A working memory over ``store``: touch what you use, read what is in short-term.

    ``capacity`` bounds each short-term partition; ``eviction`` (LRU by default)
    picks what leaves it. The policy object given is the one used, for every
    partition: it hears every ``on_use``, ``on_page_in`` and ``on_evict``, and is
    never copied (a policy holding a lock works). Each candidate it is offered
    names its partition (``candidate.partition``); a policy keeping a queue per
    cache keys it by that, as the classics (FIFO, LRU, LFU, TwoQueue, ARC) do.
    ``promotion`` (Never by default) picks what moves to long-term;
    ``compactor`` (any object with ``compact(now=None)``) runs first in
    ``maintain``; with ``mid_capacity`` evicted memories wait in mid-term
    segments, promoted whole past ``heat_threshold`` and consolidated by
    ``summarizer`` (default: the compactor's, else ``outline``) when mid-term is
    full, through the compactor's own summary path (readable text, the data in
    metadata); ``long_capacity`` trims long-term.

    With ``auto`` (the default) it maintains itself: after a commit through
    ``store`` that leaves a tier over capacity, and at each ``touch`` or
    ``working`` that finds one over capacity, whichever writer (another
    process, another Store object) filled it. Opened on the whole store or on a
    tenant's view, it keeps the counters in each tenant's own state, so every
    reader of ``stats`` sees the same ones.
    """

    def __init__(
        self,
        store: StoreOrView,
        *,
        capacity: int = 64,
        eviction: EvictionPolicy | None = None,
        promotion: PromotionPolicy | None = None,
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
        eviction = check_eviction(LRU() if eviction is None else eviction)
        promotion = check_promotion(Never() if promotion is None else promotion)
        if compactor is not None and not callable(getattr(compactor, "compact", None)):
            raise InvalidInput("compactor", compactor, "must be an object with compact(now=None)")
        self.compactor = compactor
        if summarizer is not None and not callable(summarizer):
            raise InvalidInput("summarizer", summarizer, "must be a callable from a Trace to JSON")
        # Consolidation summarizes like compaction does: the compactor's summarizer, or outline.
        own = getattr(compactor, "summarizer", None)
        self.summarizer = summarizer or (own if callable(own) else outline)
        self.store = store
        self.auto = auto
        # Counts, memories and residents, kept in step with every commit: those of
        # ``store`` as they land (on_commit), any other writer's at the next call,
        # which first compares the store's head_seq with the last seen (sync).
        self._cache = TierCache(store)
        self._partitions = Partitions(store, eviction, promotion)
        self._unsubscribe: Callable[[], None] | None = store.on_commit(self._after_commit)

    @property
    def eviction(self) -> EvictionPolicy:
        """The eviction policy: the caller's own object, serving every partition."""
        return self._partitions.eviction

    @property
    def promotion(self) -> PromotionPolicy:
        """The promotion policy."""
        return self._partitions.promotion

    def close(self) -> None:
        """Stop watching the store's commits (and so stop maintaining on its own)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def _setup(self) -> Setup:
        return Setup(
            store=self.store,
            cache=self._cache,
            partitions=self._partitions,
            capacity=self.capacity,
            mid_capacity=self.mid_capacity,
            long_capacity=self.long_capacity,
            heat_threshold=self.heat_threshold,
            summarizer=self.summarizer,
            compactor=self.compactor,
        )

    # -- reading --------------------------------------------------------------------

    @property
    def stats(self) -> TierStats:
        """The counters persisted so far, read from the store: every writer's, not only ours.

        Every tenant's on the whole store; on a tenant's view, that tenant's only.
        """
        return TierStats.read(self.store)

    def _tenant(self, tenant: object) -> str:
        asked = inputs.tenant(tenant)
        own = tenant_of(self.store)
        if asked is None:
            return own or "default"
        if own is not None and asked != own:
            raise InvalidInput("tenant", asked, f"this store view holds only tenant {own!r}")
        return asked

    def working(
        self,
        scopes: Iterable[str] | None = None,
        *,
        tenant: str | None = None,
        now: datetime | None = None,
    ) -> list[Memory]:
        """Memories in short-term memory that hold, of one tenant (and the given scopes).

        With ``auto``, a tier another writer left over capacity is maintained first.
        """
        scopes = inputs.scopes(scopes)
        tenant = self._tenant(tenant)
        stamp = inputs.moment(now) if now is not None else None
        now = stamp or inputs.moment(None)
        if self.auto:
            self._catch_up(now, stamp)
        found = self.store.find(tenant=tenant, scopes=scopes, tiers=["short"], live=False)
        return [m for m in found if m.holds(now)]

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
        stamp = inputs.moment(now) if now is not None else None
        now = stamp or inputs.moment(None)
        with at_work(self):
            result = Touch(self._setup(), now=now, stamp=stamp).run(ids, tenant)
        if self.mid_capacity is not None and result.evicted:
            self._maintain(now, stamp)  # the evictions went to mid-term, maybe over capacity now
        elif self.auto:
            self._catch_up(now, stamp)  # another writer may have filled a partition
        if result.unknown:
            error = NotFound("ids", result.unknown)
            error.result = result  # type: ignore[attr-defined]
            raise error
        return result

    # -- maintenance ----------------------------------------------------------------

    def _after_commit(self, commit: Commit) -> None:
        """After a commit through this store: follow it; maintain if a tier is now over capacity.

        Commits of other writers landed before it are replayed first, so what they
        filled is maintained too.
        """
        before = self._cache.seen
        self._cache.observe(commit)
        if not self.auto or is_at_work(self):
            return  # our own moves make room, never call for it
        others = commit.seq > before + 1
        if (others or {c.op for c in commit.changes} & _GROWS) and self._setup().over_capacity():
            self.store.defer(functools.partial(self.maintain, commit.time))  # at its time

    def _catch_up(self, now: datetime, stamp: datetime | None) -> None:
        """Follow every writer's commits; maintain when they left a tier over capacity."""
        self._cache.sync()
        if self._setup().over_capacity():
            self._maintain(now, stamp)

    def maintain(self, now: datetime | None = None) -> MaintenanceResult:
        """Compact, promote, evict over-capacity partitions, settle mid-term, trim long-term.

        Each step lands one commit per tenant it moves memories of. A summarizer
        that fails leaves its segment in mid-term, reported in ``errors``.
        """
        stamp = inputs.moment(now) if now is not None else None
        return self._maintain(stamp or inputs.moment(None), stamp)

    def _maintain(self, now: datetime, stamp: datetime | None) -> MaintenanceResult:
        with at_work(self):
            return Maintenance(self._setup(), now=now, stamp=stamp).run()
