"""Parse and validate the workbench's query parameters into one recall request.

Every bad value raises ``InvalidInput`` naming the field, which the server turns
into a 400 JSON error; nothing here ranks, filters or packs. A request becomes
one `RecallOptions` (`recall_options`); a live page starts from recall's own
defaults, so it shows the recall an agent gets.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import poolsplit
from memcommit.errors import InvalidInput
from memcommit.model import KINDS, LIVE_TIERS, STORES, TIERS
from memcommit.recall import RecallOptions, Words
from memcommit.recall.scoring.registry import DEFAULT_SCORER
from memcommit.recall.scoring.registry import SCORERS as NAMED_SCORERS

#: Memory store choices of the page: one of STORES, or every kind.
STORE_CHOICES = (*STORES, "all")

#: Scorers a live page may choose: recall's own names, its default first.
SCORERS = tuple(NAMED_SCORERS)

#: recall()'s defaults, which a live page starts from.
RECALL_DEFAULTS = RecallOptions()

#: Which rows of the table a page shows.
OUTCOMES = ("all", "selected", "excluded")

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 500
MAX_NUMBER = 10_000_000
MAX_QUERY = 2000
#: The largest word budget and record count one recall of the page may ask for: the page
#: draws what recall selects, so these bound its answer (docs/workbench.md, "Bounds").
MAX_BUDGET = 20_000
MAX_RECORDS = 1_000

#: A whole number as the page's fields take it: ASCII digits (``int()`` also reads
#: "١٠" and "10_000", which nobody means to type into a number field).
WHOLE = re.compile(r"[-+]?[0-9]+")


@dataclass(frozen=True)
class Defaults:
    """The settings a page starts from (and a request falls back to)."""

    tenant: str
    store: str = "all"
    previous: bool = RECALL_DEFAULTS.include_previous_sessions
    max_age: int | None = None
    latest: bool = RECALL_DEFAULTS.latest_per_key
    recency: float = RECALL_DEFAULTS.recency_weight
    budget: int = 200
    max_records: int = 10
    question: str = ""
    query: str = ""
    session: str | None = None
    kinds: tuple[str, ...] = KINDS
    tiers: tuple[str, ...] = LIVE_TIERS
    scopes: str = ""
    pools: str = ""
    scorer: str = DEFAULT_SCORER


@dataclass(frozen=True)
class TypedPool:
    """One reserved pool as typed on the page: ``name:words:entries[:kind,kind]``."""

    name: str
    words: int
    entries: int
    kinds: tuple[str, ...] | None
    text: str = ""  # as the user typed it, which an error about it quotes


@dataclass(frozen=True)
class RecallRequest:
    """Everything one recompute needs, already checked."""

    query: str
    tenant: str
    store: str
    previous: bool
    max_age_hours: int | None
    latest: bool
    recency: float
    budget: int
    max_records: int
    question: str | None = None
    session: str | None = None
    kinds: tuple[str, ...] | None = None
    scopes: tuple[str, ...] | None = None
    tiers: tuple[str, ...] = LIVE_TIERS
    pools: tuple[TypedPool, ...] = ()
    scorer: str = DEFAULT_SCORER
    offset: int = 0
    limit: int = DEFAULT_PAGE_SIZE
    outcome: str = "all"

    def kind_filter(self) -> tuple[str, ...] | None:
        """Kinds allowed by the memory store choice and (live mode) the kind boxes."""
        chosen = None if self.store == "all" else STORES[self.store]
        if self.kinds is None:
            return chosen
        if chosen is None:
            return self.kinds
        return tuple(k for k in chosen if k in self.kinds)


def recall_pools(request: RecallRequest) -> tuple[poolsplit.Pool, ...] | None:
    """The typed pools as poolsplit pools (word caps under a word budget); None for one pool."""
    if not request.pools:
        return None
    return tuple(poolsplit.Pool(p.name, p.words, p.entries, p.kinds) for p in request.pools)


def recall_options(request: RecallRequest, *, session: str | None, now: datetime) -> RecallOptions:
    """The `RecallOptions` a page's request stands for (a word budget; ages at ``now``).

    ``explain`` stays off: the selection is ready at once, and rows are built
    only for the page the table asks for. recall's own refusal of the pools
    (more words than the budget, ...) quotes them as the user typed them.
    """
    hours = request.max_age_hours
    try:
        return options_of(request, session, now, hours)
    except InvalidInput as exc:
        if exc.field != "pools":
            raise
        typed = " ".join(pool.text for pool in request.pools)
        raise InvalidInput("pools", typed, exc.reason) from None


def options_of(
    request: RecallRequest, session: str | None, now: datetime, hours: int | None
) -> RecallOptions:
    """`recall_options` before its errors are put in the page's words."""
    return RecallOptions(
        tenant=request.tenant,
        kinds=request.kind_filter(),
        scopes=request.scopes,
        session=session,
        include_previous_sessions=request.previous,
        max_age=None if hours is None else timedelta(hours=hours),
        latest_per_key=request.latest,
        tiers=request.tiers,
        recency_weight=request.recency,
        budget=Words(request.budget),
        max_records=request.max_records,
        pools=recall_pools(request),
        scorer=request.scorer,
        now=now,
    )


def one(params: Mapping[str, Sequence[str]], field: str, default: str | None = None) -> str:
    """The single value of ``field``; missing uses ``default`` or is an error."""
    values = params.get(field)
    if not values:
        if default is None:
            raise InvalidInput(field, None, "is required")
        return default
    if len(values) > 1:
        raise InvalidInput(field, list(values), "give one value")
    return values[0]


def choice(
    params: Mapping[str, Sequence[str]],
    field: str,
    allowed: Sequence[str],
    default: str | None = None,
) -> str:
    """A value that must be one of ``allowed``."""
    value = one(params, field, default)
    if value not in allowed:
        raise InvalidInput(field, value, "must be one of " + ", ".join(repr(a) for a in allowed))
    return value


def flag(params: Mapping[str, Sequence[str]], field: str, default: bool) -> bool:
    """A boolean given as 1/0, true/false, on/off."""
    value = one(params, field, "1" if default else "0").strip().lower()
    if value in ("1", "true", "on", "yes"):
        return True
    if value in ("0", "false", "off", "no"):
        return False
    raise InvalidInput(field, value, "must be 1 or 0 (true or false)")


def whole(field: str, raw: str, low: int, high: int) -> int:
    """``raw`` as a whole number in ``[low, high]``, written in ASCII digits."""
    if not WHOLE.fullmatch(raw):
        raise InvalidInput(field, raw, "must be a whole number")
    value = int(raw)
    if not low <= value <= high:
        raise InvalidInput(field, raw, f"must be between {low} and {high}")
    return value


def integer(
    params: Mapping[str, Sequence[str]],
    field: str,
    default: int,
    *,
    low: int = 0,
    high: int = MAX_NUMBER,
) -> int:
    """A whole number in ``[low, high]``."""
    return whole(field, one(params, field, str(default)).strip(), low, high)


def optional_integer(
    params: Mapping[str, Sequence[str]], field: str, default: int | None
) -> int | None:
    """A whole number in ``[0, MAX_NUMBER]``, or None when blank."""
    raw = one(params, field, "" if default is None else str(default)).strip()
    return None if raw == "" else whole(field, raw, 0, MAX_NUMBER)


def fraction(params: Mapping[str, Sequence[str]], field: str, default: float) -> float:
    """A number between 0 and 1 inclusive."""
    raw = one(params, field, str(default)).strip()
    try:
        if not raw.isascii() or "_" in raw:  # (float() reads other digits, and "1_0")
            raise ValueError(raw)
        value = float(raw)
    except ValueError:
        raise InvalidInput(field, raw, "must be a number between 0 and 1") from None
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise InvalidInput(field, raw, "must be a number between 0 and 1")
    return value


def names(
    params: Mapping[str, Sequence[str]], field: str, allowed: Sequence[str] | None = None
) -> tuple[str, ...] | None:
    """A comma-separated list; blank or missing means no restriction (None)."""
    raw = one(params, field, "")
    items = tuple(dict.fromkeys(part.strip() for part in raw.split(",") if part.strip()))
    if not items:
        return None
    if allowed is not None:
        for item in items:
            if item not in allowed:
                raise InvalidInput(
                    field, item, "must be among " + ", ".join(repr(a) for a in allowed)
                )
    return items


def pools(params: Mapping[str, Sequence[str]]) -> tuple[TypedPool, ...]:
    """Pools typed as ``name:words:entries[:kind,kind]``, separated by spaces."""
    specs: list[TypedPool] = []
    for part in one(params, "pools", "").split():
        bits = part.split(":")
        if len(bits) not in (3, 4) or not bits[0]:
            raise InvalidInput("pools", part, "write each pool as name:words:entries[:kind,kind]")
        words = pool_number(part, "words", bits[1], MAX_BUDGET)
        entries = pool_number(part, "entries", bits[2], MAX_RECORDS)
        kinds = None
        if len(bits) == 4:
            kinds = tuple(k for k in bits[3].split(",") if k)
            for kind in kinds:
                if kind not in KINDS:
                    raise InvalidInput(
                        "pools", kind, "kind must be among " + ", ".join(repr(k) for k in KINDS)
                    )
        if any(spec.name == bits[0] for spec in specs):
            raise InvalidInput("pools", bits[0], "pool names must be unique")
        specs.append(TypedPool(bits[0], words, entries, kinds, part))
    return tuple(specs)


def pool_number(part: str, name: str, raw: str, high: int) -> int:
    """The ``name`` number of one typed pool; an error quotes the pool as typed."""
    try:
        return whole("pools", raw, 0, high)
    except InvalidInput as exc:
        raise InvalidInput("pools", part, f"{name} {exc.reason}") from None


def parse_bank(
    params: Mapping[str, Sequence[str]],
    questions: Mapping[str, str],
    tenants: Sequence[str],
    defaults: Defaults,
) -> RecallRequest:
    """A request over the teaching bank: one of its fixed questions, the seed's controls."""
    question = choice(params, "question", list(questions), defaults.question)
    return RecallRequest(
        query=questions[question],
        question=question,
        scorer=defaults.scorer,
        **common(params, tenants, defaults),
    )


def parse_live(
    params: Mapping[str, Sequence[str]],
    tenants: Sequence[str],
    defaults: Defaults,
) -> RecallRequest:
    """A request over a real store: free-text query plus kinds, scopes, tiers and pools."""
    query = one(params, "query", defaults.query).strip()
    if not query:
        raise InvalidInput("query", query, "type a question to rank memories against")
    if len(query) > MAX_QUERY:
        raise InvalidInput("query", query, f"must be at most {MAX_QUERY} characters")
    tiers = names(params, "tiers", TIERS) if "tiers" in params else defaults.tiers
    if tiers is None:
        raise InvalidInput("tiers", "", "choose at least one tier")
    session = one(params, "session", "").strip() or None
    shared = common(params, tenants, defaults)
    if session is None and not shared["previous"]:
        raise InvalidInput("previous", "0", "previous sessions off needs a current session")
    return RecallRequest(
        query=query,
        session=session,
        kinds=names(params, "kinds", KINDS),
        scopes=names(params, "scopes"),
        tiers=tiers,
        pools=pools(params),
        scorer=choice(params, "scorer", SCORERS, defaults.scorer),
        **shared,
    )


def common(
    params: Mapping[str, Sequence[str]], tenants: Sequence[str], defaults: Defaults
) -> dict[str, Any]:
    """The controls both modes share, and the table page."""
    if not tenants:
        raise InvalidInput("tenant", None, "the store has no tenants yet")
    return {
        "tenant": choice(params, "tenant", list(tenants), defaults.tenant),
        "store": choice(params, "store", STORE_CHOICES, defaults.store),
        "previous": flag(params, "previous", defaults.previous),
        "max_age_hours": optional_integer(params, "max_age", defaults.max_age),
        "latest": flag(params, "latest", defaults.latest),
        "recency": fraction(params, "recency", defaults.recency),
        "budget": integer(params, "budget", defaults.budget, high=MAX_BUDGET),
        "max_records": integer(params, "max_records", defaults.max_records, high=MAX_RECORDS),
        "offset": integer(params, "offset", 0),
        "limit": integer(params, "limit", DEFAULT_PAGE_SIZE, low=1, high=MAX_PAGE_SIZE),
        "outcome": choice(params, "outcome", OUTCOMES, "all"),
    }
