"""One ``maintain``: compact, promote, evict over-capacity partitions, settle mid-term, trim long.

A ``Maintenance`` lives for one call and holds that call's time and result.
Each step lands one commit by "tiers" per tenant it moves memories of. The
steps decide at the call's ``now`` (what still holds, how hot a segment is);
their commits are dated ``stamp`` (the caller's now, or the triggering commit's
time), or the newest commit's time when a later commit landed first.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from memcommit.commit_time import landed
from memcommit.compaction.summary import UnusableSummary, summarize, summarizer_name
from memcommit.errors import Conflict, InvalidInput, NotFound, Purged
from memcommit.model import Memory, Trace
from memcommit.tiers.cache import evictable
from memcommit.tiers.partitions import long_term
from memcommit.tiers.promotion import Never
from memcommit.tiers.results import ConsolidationError, MaintenanceResult
from memcommit.tiers.segments import Segment, segments
from memcommit.tiers.setup import Setup
from memcommit.tiers.stats import KEY, NAMESPACE, TierStats, add_stored, increment
from memcommit.tiers.touching import SEGMENTS
from memcommit.tiers.writes import by_tenant, land, named, policy_name, tiers_commit


class Maintenance:
    """One call of ``maintain``: its time, its commits' time and the result so far."""

    def __init__(self, setup: Setup, *, now: datetime, stamp: datetime | None) -> None:
        self.setup = setup
        self.parts = setup.partitions
        self.now = now
        self.stamp = stamp
        self.result = MaintenanceResult()

    def run(self) -> MaintenanceResult:
        """Every step, in the seed's order."""
        setup, result = self.setup, self.result
        try:
            setup.cache.sync()
            if setup.compactor is not None:
                result.compacted = setup.compactor.compact(now=self.now)
            self._promote()
            self._evict()
            if setup.mid_capacity is not None:
                self._settle_mid()
            if setup.long_capacity is not None:
                self._trim_long()
        except BaseException:
            setup.cache.forget()
            raise
        return result

    def _land(
        self,
        tenant: str,
        moves: list[tuple[str, str]],
        message: str,
        delta: TierStats | None = None,
    ) -> None:
        commit = land(self.setup.io(tenant), tenant, moves, message, self.stamp, delta)
        if commit is not None:
            self.result.commits.append(commit)

    def _promote(self) -> None:
        promotion, now = self.parts.promotion, self.now
        if isinstance(promotion, Never):
            return  # nothing to read: Never selects nothing
        found = self.setup.store.find(tiers=["short", "mid"], live=False)
        found = [m for m in found if m.holds(now)]
        if not found:
            return
        chosen = promotion.select(self.parts.candidates(found), now)
        for c in chosen:
            if c.tier == "short":
                self.parts.tell("on_evict", c, now)
        self.result.promoted = [c.id for c in chosen]
        for tenant, mine in by_tenant(chosen, lambda c: c.memory.tenant).items():
            delta = TierStats()
            for c in mine:
                delta.of((tenant, c.memory.scope)).promotions += 1
            self._land(
                tenant,
                [(c.id, "long") for c in mine],
                f"maintain: promoted {named([c.id for c in mine])} to long-term by "
                f"{policy_name(promotion)}",
                delta,
            )

    def _evict(self) -> None:
        setup, parts, now = self.setup, self.parts, self.now
        dest, capacity = setup.evict_to, setup.capacity
        over = sorted(p for p, n in setup.sizes("short").items() if n > capacity)
        for tenant, over_parts in by_tenant(over, lambda p: p[0]).items():
            moves: list[tuple[str, str]] = []
            dead: list[str] = []
            evicted: list[str] = []
            delta = TierStats()
            for part in over_parts:  # only these partitions are read (and they stay cached)
                members = list(setup.cache.residents(part).values())
                if len(members) <= capacity:
                    continue
                counts = delta.of(part)
                for m in members:
                    if not m.holds(now):
                        moves.append((m.id, "archive"))
                        dead.append(m.id)
                        counts.evictions += 1
                        parts.evict_dead(m, now)
                holding = [m for m in members if m.holds(now)]
                if len(holding) > capacity:
                    chosen = parts.victims(parts.candidates(holding), len(holding) - capacity, now)
                    for victim in chosen:
                        moves.append((victim.id, dest))
                        evicted.append(victim.id)
                        counts.evictions += 1
            if dest == "mid":
                self.result.to_mid += evicted
            message = f"maintain: evicted {named(evicted)} to {dest} by "
            message += policy_name(parts.eviction)
            if dead:
                message += f"; archived {named(dead)} (no longer holding)"
            self.result.evicted += dead + evicted
            self._land(tenant, moves, message, delta)

    def _settle_mid(self) -> None:
        setup, now, result = self.setup, self.now, self.result
        for tenant in sorted(setup.sizes("mid")):  # tenants with anything in mid-term
            found = setup.store.find(tenant=tenant, tiers=["mid"], live=False)
            members = [m for m in found if evictable(m)]
            dead = [m for m in members if not m.holds(now)]
            self._land(
                tenant,
                [(m.id, "archive") for m in dead],
                f"maintain: archived {named([m.id for m in dead])} from mid-term "
                "(no longer holding)",
            )
            live = [m for m in members if m.holds(now)]
            segs = segments(live, self._visits(tenant))
            hot = [s for s in segs if s.heat(now) > setup.heat_threshold]
            for s in hot:
                result.segments_promoted.append(s.id)
                delta = TierStats()
                delta.of((tenant, s.memories[0].scope)).promotions += len(s.memories)
                self._land(
                    tenant,
                    [(m.id, "long") for m in s.memories],
                    f"maintain: promoted segment {s.id} ({len(s.memories)} memories, "
                    f"heat {s.heat(now):.2f} > {setup.heat_threshold:g}) to long-term",
                    delta,
                )
            rest = sorted((s for s in segs if s not in hot), key=lambda s: (s.heat(now), s.id))
            size = sum(len(s.memories) for s in rest)
            kept: set[str] = set()
            for coldest in rest:
                if size > (setup.mid_capacity or 0) and self._consolidate(coldest):
                    size -= len(coldest.memories)
                else:
                    kept.add(coldest.id)
            self._keep_visits(tenant, kept)

    def _visits(self, tenant: str) -> dict[str, tuple[int, datetime | None]]:
        raw = self.setup.io(tenant).state_get(NAMESPACE, SEGMENTS, {}) or {}
        return {
            k: (int(v[0]), datetime.fromisoformat(v[1]) if v[1] else None) for k, v in raw.items()
        }

    def _keep_visits(self, tenant: str, segment_ids: set[str]) -> None:
        """Forget the visits of segments that left mid-term (in one write, if any left)."""
        io = self.setup.io(tenant)
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

    def _source(self, seg: Segment, first: Memory) -> Trace:
        """What the segment's summary is made from: its whole trace (the root and every
        step, in mid-term or not) when the segment is part of one, else its members."""
        if first.trace_id == seg.id:
            return self.setup.io(first.tenant).trace(seg.id)
        return seg.as_trace()

    def _summary(self, seg: Segment, trace: Trace) -> tuple[str, dict[str, Any]]:
        """The segment's summary of ``trace`` through the compactor's path: (content, metadata).

        Like a compaction's, its ``provenance`` lists in ``built_from`` every memory
        whose text the summarizer was given, so purging any of them purges the
        summary too; ``consolidated`` lists the mid-term members it replaces.
        """
        io = self.setup.io(seg.tenant)
        summarizer = self.setup.summarizer
        content, data = summarize(
            functools.partial(summarizer, trace),
            content_bytes=getattr(io, "max_content_bytes", None),
        )
        carried = [trace.root, *trace.steps]
        return content, {
            "summary": data,
            "summarizer": summarizer_name(summarizer),
            "consolidated": sorted(m.id for m in seg.memories),
            "segment": seg.id,
            "provenance": {
                "built_from": [m.id for m in carried],
                "versions": {m.id: m.version for m in carried},
            },
        }

    def _consolidate(self, seg: Segment) -> bool:
        """Summarize one segment into a long-term summary and archive its memories.

        A summarizer that raises, a summary that cannot be stored, or a memory the
        summary carries that another writer changed or purged since it was read (the
        summary would keep text that had to go) leaves the segment in mid-term: the
        failure is reported, never raised. Whether it went.
        """
        first = seg.memories[0]
        tenant = first.tenant
        io = self.setup.io(tenant)
        ids = sorted(m.id for m in seg.memories)
        delta = TierStats()
        try:
            trace = self._source(seg, first)
            content, metadata = self._summary(seg, trace)
            with tiers_commit(
                io,
                f"maintain: consolidated segment {seg.id} ({named(ids)}, heat "
                f"{seg.heat(self.now):.2f}, the coldest) into one summary; archived its memories",
                self.stamp,
            ) as tx:
                # the members as chosen, and everything summarized, still as they were read
                tx.read_unchanged([*seg.memories, trace.root, *trace.steps])
                try:
                    tx.add(
                        content,
                        kind="summary",
                        scope=first.scope,
                        tenant=tenant,
                        importance=max(m.importance for m in seg.memories),
                        tier="long",
                        metadata=metadata,
                    )
                except InvalidInput as exc:
                    raise UnusableSummary(f"the summary cannot be stored: {exc}") from exc
                for i in ids:
                    tx.archive(i)
                delta.of((tenant, first.scope)).consolidations += 1
                add_stored(io, delta, tenant)
        except UnusableSummary as exc:
            return self._failed(seg, str(exc))
        except (Conflict, Purged, NotFound) as exc:
            return self._failed(seg, f"changed meanwhile: {exc}")
        self.result.commits.append(landed(tx))
        self.result.consolidated.append(seg.id)
        return True

    def _failed(self, seg: Segment, reason: str) -> bool:
        """Report a segment left in mid-term, and count it in the stats; False (it stayed)."""
        tenant = seg.tenant
        self.result.errors.append(ConsolidationError(seg.id, tenant, reason))
        delta = TierStats()
        delta.of((tenant, seg.memories[0].scope)).consolidation_errors += 1
        self.setup.io(tenant).record_uses([], state={(NAMESPACE, KEY): increment(delta, tenant)})
        return False

    def _trim_long(self) -> None:
        setup, parts, now = self.setup, self.parts, self.now
        limit = setup.long_capacity or 0
        over = sorted(t for t, n in setup.sizes("long").items() if n > limit)
        for tenant in over:  # only these tenants' long-term memories are read
            found = setup.store.find(tenant=tenant, tiers=["long"], live=False)
            members = [m for m in found if evictable(m)]
            if len(members) <= limit:
                continue
            dead = [m for m in members if not m.holds(now)]
            live = [m for m in members if m.holds(now)]
            moves = [(m.id, "archive") for m in dead]
            if len(live) > limit:
                cands = parts.candidates(live, partition=long_term(tenant))
                for victim in parts.victims(cands, len(live) - limit, now):
                    moves.append((victim.id, "archive"))
            trimmed = [i for i, _ in moves]
            self.result.trimmed += trimmed
            self._land(
                tenant,
                moves,
                f"maintain: trimmed long-term to {setup.long_capacity}, archived "
                f"{named(trimmed)} by {policy_name(parts.eviction)}",
            )
