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
from dataclasses import dataclass
from datetime import timedelta

import numpy as np

from memcommit.errors import InvalidInput
from memcommit.model import KINDS, STORES, TIERS
from memcommit.recall.index.columns import NO_START, Codes
from memcommit.recall.index.tenant import Snapshot
from memcommit.recall.pipeline.reasons import Reason

#: The code of a document that passed every filter.
PASSED = 0

_ALL = "all"


def parse_kinds(kinds: Iterable[str] | str | None) -> tuple[str, ...] | None:
    """Memory kinds to keep: kind names, store names ("semantic", ...) or "all"; None = all."""
    if kinds is None:
        return None
    items = [kinds] if isinstance(kinds, str) else kinds
    try:
        items = list(items)
    except TypeError:
        raise InvalidInput("kinds", kinds, "must be a list of kinds or memory stores") from None
    out: list[str] = []
    for item in items:
        if item == _ALL:
            return None
        if item in STORES:
            out.extend(STORES[item])
        elif item in KINDS:
            out.append(item)
        else:
            allowed = ", ".join(dict.fromkeys((*STORES, *KINDS, _ALL)))
            raise InvalidInput("kinds", kinds, f"unknown kind {item!r}; allowed: {allowed}")
    return tuple(dict.fromkeys(out))


def _names(
    field: str, values: Iterable[str] | None, allowed: tuple[str, ...] | None = None
) -> tuple[str, ...] | None:
    if values is None:
        return None
    if isinstance(values, str):
        values = (values,)
    try:
        values = tuple(values)
    except TypeError:
        raise InvalidInput(field, values, "must be a list of names") from None
    for value in values:
        if not isinstance(value, str):
            raise InvalidInput(field, values, f"{value!r} is not a name")
        if allowed is not None and value not in allowed:
            raise InvalidInput(field, values, f"unknown {value!r}; allowed: {', '.join(allowed)}")
    return values


@dataclass(frozen=True)
class Scope:
    """The validated scope filters of one recall (see `memcommit.recall.recall`)."""

    kinds: tuple[str, ...] | None = None
    scopes: tuple[str, ...] | None = None
    session: str | None = None
    include_previous_sessions: bool = True
    max_age: timedelta | None = None
    latest_per_key: bool = True
    live: bool = True
    tiers: tuple[str, ...] | None = ("short", "mid", "long")
    #: Kinds the pools draw from (None: all). Always-scope memories pass regardless.
    pool_kinds: tuple[str, ...] | None = None

    @classmethod
    def parse(
        cls,
        *,
        kinds: Iterable[str] | str | None = None,
        scopes: Iterable[str] | None = None,
        session: str | None = None,
        include_previous_sessions: bool = True,
        max_age: timedelta | None = None,
        latest_per_key: bool = True,
        live: bool = True,
        tiers: Iterable[str] | None = ("short", "mid", "long"),
    ) -> Scope:
        """Check every filter argument; InvalidInput names the first bad one."""
        if session is not None and not isinstance(session, str):
            raise InvalidInput("session", session, "must be a session name or None")
        for field, flag in (
            ("include_previous_sessions", include_previous_sessions),
            ("latest_per_key", latest_per_key),
            ("live", live),
        ):
            if not isinstance(flag, bool):
                raise InvalidInput(field, flag, "must be True or False")
        if not include_previous_sessions and session is None:
            raise InvalidInput(
                "include_previous_sessions",
                include_previous_sessions,
                "False keeps only the current session: pass session=...",
            )
        if max_age is not None and (not isinstance(max_age, timedelta) or max_age < timedelta(0)):
            raise InvalidInput("max_age", max_age, "must be a timedelta >= 0 or None")
        return cls(
            kinds=parse_kinds(kinds),
            scopes=_names("scopes", scopes),
            session=session,
            include_previous_sessions=include_previous_sessions,
            max_age=max_age,
            latest_per_key=latest_per_key,
            live=live,
            tiers=_names("tiers", tiers, TIERS),
        )


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
