"""Scope filters: which of a tenant's memories may compete at all, and why not.

Filters run in a fixed order and a memory is reported with the first one it
fails: memory type (the ``kinds`` asked for; then, for memories that are not
always-scope, the kinds some pool draws from), scope, previous session,
maximum age (inclusive), older version of a key, validity, tier.

"Latest per key": of the memories sharing a key, the newest one *that still
holds* wins and the older ones are ``superseded``; the newer ones that no longer
hold (invalidated, ended) fail the validity filter instead, so invalidating a
wrong fact brings back the one it had replaced. This is decided over all of the
tenant's memories before any other filter runs: a newer fact that holds excludes
an older one even when another filter (kind, scope, age, tier) later excludes the
newer one too, so a stale fact is never resurrected by a filter. With
``live=False`` (history, as-of reads) validity does not count: the newest
version wins. Each filter's reason, and its code, is a
`memcommit.recall.pipeline.reasons.Reason`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from datetime import timedelta
from typing import Any

import numpy as np

from memcommit.recall.index.columns import NO_START, Codes
from memcommit.recall.index.snapshot import Snapshot
from memcommit.recall.pipeline.options import RecallOptions
from memcommit.recall.pipeline.reasons import Reason

#: The code of a document that passed every filter.
PASSED = 0


@dataclass(frozen=True)
class Scope:
    """The scope filters of one recall: its `RecallOptions`' filter fields, and the pools' kinds."""

    kinds: tuple[str, ...] | None
    scopes: tuple[str, ...] | None
    session: str | None
    include_previous_sessions: bool
    max_age: timedelta | None
    latest_per_key: bool
    live: bool
    tiers: tuple[str, ...] | None
    #: Kinds the pools draw from (None: all). Always-scope memories pass regardless.
    pool_kinds: tuple[str, ...] | None = None

    @classmethod
    def of(cls, options: RecallOptions, pool_kinds: tuple[str, ...] | None = None) -> Scope:
        """The scope filters of ``options`` (checked when they were made)."""
        own = {f.name: getattr(options, f.name) for f in fields(cls) if f.name != "pool_kinds"}
        return cls(**own, pool_kinds=pool_kinds)

    @classmethod
    def parse(cls, **filters: Any) -> Scope:
        """The scope filters of ``RecallOptions(**filters)``; InvalidInput names a bad one."""
        return cls.of(RecallOptions(**filters))


def _codes(table: Codes, values: Iterable[str]) -> np.ndarray:
    found = [table.get(value) for value in values]
    return np.array([code for code in found if code is not None], dtype=np.int64)


def _failures(
    snap: Snapshot, scope: Scope, now_us: int, docs: np.ndarray
) -> Iterator[tuple[Reason, np.ndarray]]:
    """Each filter the scope sets, in order: its reason, and where ``docs`` fail it."""
    if scope.kinds is not None:
        yield Reason.OTHER_KIND, ~_member(snap.kind[docs], snap.kinds, scope.kinds)
    if scope.pool_kinds is not None:
        drawn = _member(snap.kind[docs], snap.kinds, scope.pool_kinds)
        yield Reason.OTHER_KIND, ~drawn & ~snap.always[docs]
    if scope.scopes is not None:
        yield Reason.OTHER_SCOPE, ~_member(snap.scope[docs], snap.scopes, scope.scopes)
    if not scope.include_previous_sessions:
        current = snap.sessions.get(scope.session)
        yield Reason.PREVIOUS_SESSION, snap.session[docs] != (-2 if current is None else current)
    if scope.max_age is not None:
        created = snap.created[docs]
        ages = now_us - np.where(created == NO_START, now_us, created)  # unknown: age 0
        yield Reason.TOO_OLD, ages > scope.max_age // timedelta(microseconds=1)
    if scope.latest_per_key:
        winners = snap.key_winners(now_us) if scope.live else snap.latest
        yield Reason.SUPERSEDED, ~winners[docs]
    if scope.live:
        yield Reason.NO_LONGER_HOLDS, ~snap.holds(now_us, docs)
    if scope.tiers is not None:
        tier = snap.tier[docs]
        kept = ~_member(tier, snap.tiers, scope.tiers)
        archive = snap.tiers.get("archive")
        is_archive = tier == (-2 if archive is None else archive)
        yield Reason.ARCHIVED, kept & is_archive
        yield Reason.OTHER_TIER, kept & ~is_archive


def apply(snap: Snapshot, scope: Scope, now_us: int, docs: np.ndarray) -> np.ndarray:
    """The code of the first filter each of ``docs`` fails (`Reason.code`; PASSED: none)."""
    reasons = np.zeros(len(docs), dtype=np.int8)
    for reason, failed in _failures(snap, scope, now_us, docs):
        reasons[(reasons == PASSED) & failed] = reason.code
    return reasons


def passes(snap: Snapshot, scope: Scope, now_us: int, docs: np.ndarray) -> np.ndarray:
    """True where a document of ``docs`` passes every filter: ``apply(...) == PASSED``.

    Ranking asks only this of the few documents it reads; the reasons are
    worked out by `apply` when an explanation is read.
    """
    ok = np.ones(len(docs), dtype=bool)
    if len(docs):
        for _, failed in _failures(snap, scope, now_us, docs):
            ok &= ~failed
    return ok


def _member(column: np.ndarray, table: Codes, names: Iterable[str]) -> np.ndarray:
    """Where ``column`` (codes of ``table``, -1: none) holds one of ``names``: a table lookup."""
    wanted = np.zeros(len(table.values) + 1, dtype=bool)  # -1 reads the last slot: False
    wanted[_codes(table, names)] = True
    found: np.ndarray = wanted[column]
    return found
