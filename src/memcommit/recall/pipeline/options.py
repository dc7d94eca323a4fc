"""`RecallOptions`: every recall argument but the store and the query, checked once.

The Python API, the CLI, the MCP tool, the workbench and the framework adapters
each turn their own spelling (flags, JSON arguments, query parameters) into one
`RecallOptions` and hand it to `memcommit.recall.recall`; the checks, the
defaults and the normal forms live here only. A value is frozen and already
normal (kinds as kind names, lists as tuples, ``scorer=None`` as the default
name), so two spellings of one request compare equal.

What needs the store is checked by ``recall`` itself: the tenant a view is bound
to, and whether ``as_of`` names a commit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

import poolsplit
from memcommit import inputs
from memcommit.errors import InvalidInput
from memcommit.model import KINDS, LIVE_TIERS, STORES, TIERS
from memcommit.recall.pipeline.budget import Pool, Tokens, Words
from memcommit.recall.scoring.registry import DEFAULT_SCORER, SCORERS
from memcommit.recall.scoring.scorers import BatchScorer, PoolsplitScore, Scorer, is_batch
from memcommit.store.protocols import CommitRef

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
class RecallOptions:
    """How one recall filters, ranks and packs (see `memcommit.recall.recall`).

    Filters: ``kinds`` (kind or store names), ``scopes``, ``session`` with
    ``include_previous_sessions``, ``max_age`` (inclusive), ``latest_per_key``,
    ``live`` (only memories that hold at ``now``) and ``tiers``. Ranking:
    ``scorer`` (a name of `scoring.registry.SCORERS`, or a scorer) blended with recency by
    ``recency_weight`` and ``half_life``, fused with the dense cosine of the
    store's embedder (`memcommit.recall.scoring.fusion`) unless ``hybrid`` is
    False (None: when the store has an embedder; True: it must). Packing: ``budget`` (`Words` or
    `Tokens`), ``max_records`` and ``pools``. Reading: ``tenant``, ``as_of``,
    ``now`` (None: the time of the call) and ``explain`` (build every row at once).
    A bad value raises `InvalidInput` naming its field; ``dataclasses.replace``
    checks again.
    """

    tenant: str | None = None
    kinds: tuple[str, ...] | None = None
    scopes: tuple[str, ...] | None = None
    session: str | None = None
    include_previous_sessions: bool = True
    max_age: timedelta | None = None
    latest_per_key: bool = True
    live: bool = True
    tiers: tuple[str, ...] | None = LIVE_TIERS
    recency_weight: float = 0.0
    half_life: timedelta = timedelta(hours=24)
    budget: Words | Tokens | None = None
    max_records: int | None = None
    pools: tuple[poolsplit.Pool, ...] | None = None
    scorer: str | Scorer | BatchScorer = DEFAULT_SCORER
    hybrid: bool | None = None
    as_of: CommitRef | None = None
    now: datetime | None = None
    explain: bool = False

    def __post_init__(self) -> None:
        """Check every field (InvalidInput names the first bad one), then keep its normal form."""
        self._check_filters()
        normal: dict[str, Any] = {
            "kinds": parse_kinds(self.kinds),
            "scopes": _names("scopes", self.scopes),
            "tiers": _names("tiers", self.tiers, TIERS),
            "recency_weight": _unit_interval("recency_weight", self.recency_weight),
        }
        self._check_packing()
        normal["pools"] = _pools(self.pools, self.budget, self.max_records)
        normal["scorer"] = _scorer(self.scorer, normal["recency_weight"])
        if self.now is not None:
            normal["now"] = inputs.moment("now", self.now, optional=False)
        if self.tenant is not None and (not isinstance(self.tenant, str) or not self.tenant):
            raise InvalidInput("tenant", self.tenant, "must name the tenant to recall for")
        if not isinstance(self.explain, bool):
            raise InvalidInput("explain", self.explain, "must be True or False")
        if self.hybrid is not None and not isinstance(self.hybrid, bool):
            raise InvalidInput("hybrid", self.hybrid, "must be True, False or None")
        for name, value in normal.items():
            object.__setattr__(self, name, value)

    def _check_filters(self) -> None:
        if self.session is not None and not isinstance(self.session, str):
            raise InvalidInput("session", self.session, "must be a session name or None")
        for field in ("include_previous_sessions", "latest_per_key", "live"):
            if not isinstance(getattr(self, field), bool):
                raise InvalidInput(field, getattr(self, field), "must be True or False")
        if not self.include_previous_sessions and self.session is None:
            raise InvalidInput(
                "include_previous_sessions",
                self.include_previous_sessions,
                "False keeps only the current session: pass session=...",
            )
        max_age = self.max_age
        if max_age is not None and (not isinstance(max_age, timedelta) or max_age < timedelta(0)):
            raise InvalidInput("max_age", max_age, "must be a timedelta >= 0 or None")

    def _check_packing(self) -> None:
        half_life = self.half_life
        if not isinstance(half_life, timedelta) or half_life <= timedelta(0):
            raise InvalidInput("half_life", half_life, "must be a timedelta > 0")
        if self.budget is not None and not isinstance(self.budget, (Words, Tokens)):
            raise InvalidInput("budget", self.budget, "must be Words(n), Tokens(n) or None")
        records = self.max_records
        if records is not None and (
            isinstance(records, bool) or not isinstance(records, int) or records < 0
        ):
            raise InvalidInput("max_records", records, "must be an int >= 0 or None")

    def replace(self, **changes: Any) -> RecallOptions:
        """These options with ``changes`` (recall's keywords), checked again."""
        return dataclasses.replace(self, **changes) if changes else self


#: The names of `RecallOptions`' fields: recall's keyword arguments.
FIELDS = tuple(field.name for field in dataclasses.fields(RecallOptions))


def _unit_interval(field: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise InvalidInput(field, value, "must be a number in [0, 1]")
    return float(value)


def _pools(
    pools: Any, budget: Words | Tokens | None, max_records: int | None
) -> tuple[poolsplit.Pool, ...] | None:
    """The caller's pools as a tuple of `Pool`, each checked, together within the budget and cap.

    A plain ``poolsplit.Pool`` becomes the equal `Pool`, so either spelling gives
    equal options.
    """
    if pools is None:
        return None
    if isinstance(pools, poolsplit.Pool):
        pools = [pools]
    try:
        pools = tuple(pools)
    except TypeError:
        raise InvalidInput("pools", pools, "must be a list of poolsplit.Pool") from None
    names: set[str] = set()
    for pool in pools:
        if not isinstance(pool, poolsplit.Pool):
            raise InvalidInput("pools", pools, f"{pool!r} is not a poolsplit.Pool")
        if pool.name in names:
            raise InvalidInput("pools", pools, f"duplicate pool name {pool.name!r}")
        names.add(pool.name)
        for kind in pool.types or ():
            if kind not in KINDS:
                raise InvalidInput(
                    "pools",
                    pools,
                    f"pool {pool.name!r}: unknown kind {kind!r}; allowed: " + ", ".join(KINDS),
                )
    if not pools:
        raise InvalidInput("pools", pools, "must hold at least one pool")
    normal: tuple[poolsplit.Pool, ...] = tuple(
        Pool(pool.name, pool.max_tokens, pool.max_entries, pool.types)
        if type(pool) is poolsplit.Pool
        else pool
        for pool in pools
    )
    if isinstance(budget, (Words, Tokens)) and sum(pool.max_tokens for pool in normal) > budget.n:
        raise InvalidInput("pools", normal, f"reserve more than the budget of {budget.n}")
    if isinstance(max_records, int) and sum(pool.max_entries for pool in normal) > max_records:
        raise InvalidInput("pools", normal, f"allow more entries than max_records={max_records}")
    return normal


def _scorer(scorer: Any, weight: float) -> str | Scorer | BatchScorer:
    """A scorer name of `scorers` (None: the default) or a scorer, checked against the weight."""
    if scorer is None:
        scorer = DEFAULT_SCORER
    if isinstance(scorer, str):
        if scorer not in SCORERS:
            raise InvalidInput(
                "scorer", scorer, "allowed: " + ", ".join(SCORERS) + ", or a callable"
            )
        poolsplits = SCORERS[scorer] is PoolsplitScore
    elif callable(scorer) or is_batch(scorer):
        poolsplits = isinstance(scorer, PoolsplitScore)
    else:
        raise InvalidInput("scorer", scorer, "must be a scorer name or callable(memory, query)")
    if poolsplits and weight != 0.0:
        raise InvalidInput(
            "recency_weight", weight, "poolsplit's scorer has its own recency; use 0 with it"
        )
    return cast("str | Scorer | BatchScorer", scorer)
