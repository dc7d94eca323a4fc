"""poolsplit: reserved-budget pools and always-loading corrections for agent-memory retrieval.

Ranking a mixed-type memory store with one score against one token budget lets
high-priority types take the whole context while low-priority types never load,
and lets a burst of fresh content push out a long-standing behavioural
correction. poolsplit gives each group of types its own reserved budget (a
:class:`Pool`, filled independently) and loads entries with ``scope="always"``
before and outside every budget.

Entries are plain dicts; every key is optional:

    content        str          the text (cost and message overlap are read from it)
    type           str          entry type used by pool filtering; default "note"
    scope          str          "always" loads unconditionally; anything else competes
    tags           list[str]    topical tags
    project        str | None   owning project; None means general
    created        str          ISO-8601 time (a trailing Z allowed); drives recency
    token_count    int          precomputed cost; used when a positive int
    base_priority  number       ranking weight; default 5
    status         str          "active" (the default) loads; anything else drops
    superseded_by  any          when set, the entry is retired and drops
    id             str          stable identifier, used in the sort tie-break

Usage::

    pools = [Pool("corrections", 400, 10, ("correction",)), Pool("rest", 1200, 20)]
    chosen = retrieve_pools(entries, pools, {"message": "deploy the api", "project": "api"})

Explaining a selection: pass the keyword-only ``on_decision`` callback to
:func:`retrieve` or :func:`retrieve_pools` and it is called with a
:class:`Decision` for every entry a pool considers (active, of the pool's types,
not taken by an earlier pool), from inside the loop that packs. ``outcome`` is
``"always"`` (loaded unconditionally), ``"selected"``, ``"over_budget"`` (did not
fit the tokens left when its turn came, or could no longer fit any) or
``"over_record_limit"`` (the pool's ``max_entries`` was already reached).
Decisions come in pool order, always-scope entries first, then in rank order;
``score`` is None for always-scope entries, ``cost`` is always filled in. An
entry skipped by one pool may be selected by a later one, so it can get one
decision per pool. Without the callback nothing extra is computed and results
are identical either way.

Speed: one call filters, scores and costs each entry at most once (shared by
every pool of a :func:`retrieve_pools` call), tokenizes the context message
once, and takes contextual entries from a heap in rank order instead of sorting
them all. Results are identical to a full sort.

One file, standard library only, Python 3.9 or newer: vendor it by copying.
API-compatible with poolsplit 0.1.0, which it replaces with identical results.
"""

import datetime
import functools
import heapq
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Protocol, Sequence, Tuple

__all__ = ["ALWAYS", "OUTCOMES", "OVER_BUDGET", "OVER_RECORD_LIMIT", "SELECTED", "ActiveTest",
    "Decision", "DecisionListener", "Pool", "PoolError", "Scorer", "TokenCounter",
    "default_is_active", "default_scorer", "default_token_counter", "retrieve",
    "retrieve_pools"]  # fmt: skip

__version__ = "0.2.0"

ALWAYS = "always"
SELECTED = "selected"
OVER_BUDGET = "over_budget"
OVER_RECORD_LIMIT = "over_record_limit"
OUTCOMES = (ALWAYS, SELECTED, OVER_BUDGET, OVER_RECORD_LIMIT)


class Scorer(Protocol):
    """Relevance of one entry to a context; higher ranks first."""

    def __call__(
        self, entry: Dict[str, Any], context: Optional[Dict[str, Any]], *, now: Any
    ) -> float: ...


class TokenCounter(Protocol):
    """Cost of a text against a pool's ``max_tokens``."""

    def __call__(self, text: str, /) -> Any: ...


class ActiveTest(Protocol):
    """Whether an entry is live and may be retrieved at all."""

    def __call__(self, entry: Dict[str, Any]) -> bool: ...


class DecisionListener(Protocol):
    """Told of every :class:`Decision` a pool makes (see ``on_decision``)."""

    def __call__(self, decision: "Decision", /) -> None: ...


class Decision(NamedTuple):
    """What one pool did with one entry it considered (see ``on_decision``)."""

    pool: str
    outcome: str
    entry: Dict[str, Any]
    index: int
    score: Optional[float]
    cost: Any


class PoolError(ValueError, TypeError):
    """A :class:`Pool` field is wrong; the message names it and the value. Both a ValueError
    and a TypeError, so code written for either (or 0.1.0's ValueError) catches it."""


def _check_cap(field: str, value: Any) -> None:
    """A cap is a number >= 0: an int, or a float as 0.1.0 allowed (``inf``: no cap).
    Bools, NaN and non-numbers would silently mean 0, 1 or "never fits": refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PoolError("Pool.%s must be a number >= 0, got %r" % (field, value))
    if value != value or value < 0:
        raise PoolError("Pool.%s must be >= 0, got %r" % (field, value))


@dataclass(frozen=True)
class Pool:
    """A reserved budget for a group of entry types.

    ``name`` keys the pool's results and must be unique among the pools of one
    :func:`retrieve_pools` call. ``max_tokens`` and ``max_entries`` cap the
    contextual (non-always) entries only. ``types`` is the tuple of entry types
    the pool draws from; None accepts every type.

    Raises :class:`PoolError` naming the field for an empty or non-string name,
    a cap that is not a number >= 0, or ``types`` not a tuple of strings or None.
    """

    name: str
    max_tokens: int
    max_entries: int
    types: Optional[Tuple[str, ...]] = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise PoolError("Pool.name must be a non-empty str, got %r" % (self.name,))
        _check_cap("max_tokens", self.max_tokens)
        _check_cap("max_entries", self.max_entries)
        if self.types is not None:
            if not isinstance(self.types, tuple):
                raise PoolError("Pool.types must be a tuple of str or None, got %r" % (self.types,))
            for position, kind in enumerate(self.types):
                if not isinstance(kind, str):
                    raise PoolError("Pool.types[%d] must be a str, got %r" % (position, kind))


def default_token_counter(text: str) -> int:
    """Estimate tokens as ``max(1, len(text) // 4)``: coarse on purpose, never 0."""
    return max(1, len(text) // 4)


def default_is_active(entry: Dict[str, Any]) -> bool:
    """True when ``status`` is "active" (the default) and there is no ``superseded_by``."""
    return entry.get("status", "active") == "active" and not entry.get("superseded_by")


_STOP_WORD_TEXT = (  # the 0.1.0 list, verbatim
    "the and for are but not you all can her was one our out day has had his how man new now "
    "old see two way who did its let put say she too use that this with from they them then "
    "than have will your what when were been into some more very just over only"
)
_STOP_WORDS = frozenset(_STOP_WORD_TEXT.split())
_WORD = re.compile(r"[a-z0-9]+")
_from_iso = datetime.datetime.fromisoformat


def _significant_words(text: str) -> frozenset:
    """Lowercased ``[a-z0-9]+`` tokens longer than two characters, minus stop words."""
    return frozenset(
        word for word in _WORD.findall(text.lower()) if len(word) > 2 and word not in _STOP_WORDS
    )


class _Context(NamedTuple):
    """What the default scorer needs from a context, prepared once per call."""

    now: datetime.datetime  # naive UTC
    tags: frozenset
    project: Any
    words: frozenset  # significant words of the message
    min_hits: int  # fewest shared words whose overlap exceeds 0.15


def _prepare(context: Optional[Dict[str, Any]], now: Optional[datetime.datetime]) -> _Context:
    """Read the context once: naive reference time, tag set, project, message words."""
    context = {} if context is None else context
    now = datetime.datetime.now(datetime.timezone.utc) if now is None else now
    message = context.get("message") or ""
    words = _significant_words(message if isinstance(message, str) else str(message))
    size = len(words)
    min_hits = next((hits for hits in range(1, size + 1) if hits / size > 0.15), size + 1)
    return _Context(
        now=now.replace(tzinfo=None),
        tags=frozenset(context.get("tags") or ()),
        project=context.get("project"),
        words=words,
        min_hits=min_hits,
    )


def _number(value: Any, entry: Dict[str, Any]) -> float:
    """``base_priority`` as a float; the error names the field and the entry."""
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise type(exc)(
            "entry base_priority must be a number, got %r (entry id %r)" % (value, entry.get("id"))
        ) from None


def _partial_score(entry: Dict[str, Any], ctx: _Context) -> float:
    """Base priority × recency × tags × project: every factor but the message's.
    Runs once per entry, so helpers are inlined."""
    get = entry.get
    priority = get("base_priority", 5)
    score = float(priority) if type(priority) in (int, float) else _number(priority, entry)
    created = get("created")
    if created and isinstance(created, str):  # anything else is 0 days old
        try:  # a trailing Z allowed; an offset is dropped, not applied
            moment: Optional[datetime.datetime] = _from_iso(created.rstrip("Z"))
        except ValueError:
            moment = None  # unparseable: 0 days old
        if moment is not None:
            if moment.tzinfo is not None:
                moment = moment.replace(tzinfo=None)
            days = (ctx.now - moment).total_seconds() / 86400.0
            if days > 0.0:  # a zero (or future, so zero) age multiplies by exactly 1.0
                recency = 1.0 - (days / 90.0) * 0.7
                score *= recency if recency > 0.3 else 0.3  # max(0.3, ...), minus a call
    if ctx.tags:
        tags = get("tags")
        if tags:
            try:
                tags = frozenset(tags)
            except TypeError:  # not an iterable of hashables: no tags
                tags = None
            if tags:
                score *= 1.0 + (len(tags & ctx.tags) / len(tags)) * 0.5
    project = get("project")
    if project is not None:
        score *= 1.5 if project == ctx.project else 0.5
    return score


_MAX_MESSAGE_FACTOR = 2.5  # 1 + 1.5 * overlap, overlap <= 1


def _message_factor(entry: Dict[str, Any], ctx: _Context) -> Optional[float]:
    """``1 + 1.5 * overlap`` when the message overlap exceeds 0.15, else None."""
    words = ctx.words
    if not words:
        return None
    content = entry.get("content", "")
    text = (content if type(content) is str else str(content)).lower()
    # A message word found as a substring may not be a whole token, so this bounds
    # the shared-word count from above: tokenize only the entries that could pass.
    if sum(map(text.__contains__, words)) < ctx.min_hits:
        return None
    overlap = len(words.intersection(_WORD.findall(text))) / len(words)
    return 1.0 + overlap * 1.5 if overlap > 0.15 else None


def _score(entry: Dict[str, Any], ctx: _Context) -> float:
    """The default score; the message factor comes last, as the float result depends on order."""
    score = _partial_score(entry, ctx)
    factor = _message_factor(entry, ctx)
    return score if factor is None else score * factor


def default_scorer(
    entry: Dict[str, Any],
    context: Optional[Dict[str, Any]],
    *,
    now: Optional[datetime.datetime] = None,
) -> float:
    """Score an entry: base priority × recency × tag overlap × project × message overlap.

    base_priority defaults to 5; recency is ``max(0.3, 1 - days/90 * 0.7)`` for the
    age of ``created``; tags give ``1 + 0.5 * shared/entry tags``; the project
    gives ×1.0 when the entry has none, ×1.5 when it equals the context's, else
    ×0.5; message overlap (shared significant words / message words) above 0.15
    gives ``1 + 1.5 * overlap``. ``now`` defaults to the current UTC time.
    There is no access-frequency term: ranking never feeds on retrieval history.
    """
    return _score(entry, _prepare(context, now))


class _Ordered:
    """Wraps a sort-key value that is not a str so it compares natively when it
    can and by type name and repr when it cannot, so sorting never raises."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    @staticmethod
    def _fallback(value: Any) -> Tuple[str, str]:
        return (type(value).__qualname__, repr(value))

    def _compare(self, other: Any, native: Callable[[Any, Any], bool]) -> bool:
        other_value = other.value if isinstance(other, _Ordered) else other
        try:
            return bool(native(self.value, other_value))
        except TypeError:
            return native(self._fallback(self.value), self._fallback(other_value))

    def __eq__(self, other: Any) -> bool:
        return self._compare(other, lambda a, b: a == b)

    def __lt__(self, other: Any) -> bool:
        return self._compare(other, lambda a, b: a < b)

    def __gt__(self, other: Any) -> bool:
        return self._compare(other, lambda a, b: a > b)


def _comparable(value: Any) -> Any:
    """A sort-key value as is when a str, else wrapped so that comparing it never raises."""
    return value if type(value) is str else _Ordered(value)


_UNHASHABLE_TYPE = object()  # group key for entries whose type cannot be hashed


class _Run:
    """One retrieval call, shared by all the pools it fills ("Speed" in the module docstring).

    With the default scorer the message factor, the costly part, is left out
    at first: an entry is ranked by an upper bound of its score (the rest of
    the score times the largest message factor) and scored exactly only when
    that bound reaches the top of a pool's heap. An exact key on top is then
    smaller than every other entry's exact key, so heap order stays the order
    a full sort of exact keys gives.
    """

    def __init__(
        self,
        entries: Sequence[Dict[str, Any]],
        context: Optional[Dict[str, Any]],
        scorer: Scorer,
        token_counter: TokenCounter,
        is_active: ActiveTest,
        now: Optional[datetime.datetime],
        on_decision: Optional[DecisionListener],
    ) -> None:
        self.items = entries if isinstance(entries, list) else list(entries)
        self.context = context
        self.scorer = scorer
        self.token_counter = token_counter
        self.now = now
        self.on_decision = on_decision
        self.prepared = _prepare(context, now) if scorer is default_scorer else None
        size = len(self.items)
        self.keys: List[Any] = [None] * size  # (-score or -bound, created, id, index)
        self.scores: List[Any] = [None] * size  # exact scores (or partial ones while inexact)
        self.exact = bytearray(size)  # 1 once keys[index] holds the exact score
        self.costs: Dict[int, Any] = {}
        self.unclean: set = set()  # indexes whose key needs the safe full sort
        self.claimed: set = set()  # id() of every entry an earlier pool selected
        self.always: List[int] = []
        self.contextual: List[int] = []
        self.groups: Dict[Any, Tuple[List[int], List[int]]] = {}
        for index, entry in enumerate(self.items):
            if not is_active(entry):
                continue
            kind = entry.get("type", "note")
            try:
                group = self.groups.get(kind)
            except TypeError:
                kind, group = _UNHASHABLE_TYPE, self.groups.get(_UNHASHABLE_TYPE)
            if group is None:
                group = self.groups[kind] = ([], [])
            always = entry.get("scope") == "always"
            (self.always if always else self.contextual).append(index)
            group[0 if always else 1].append(index)

    def cost(self, index: int) -> Any:
        """``token_count`` when a positive int, else the counter over the content."""
        cost = self.costs.get(index)
        if cost is None:
            entry = self.items[index]
            count = entry.get("token_count")
            if isinstance(count, int) and not isinstance(count, bool) and count > 0:
                cost = count
            else:
                content = entry.get("content", "")
                cost = self.token_counter(content if type(content) is str else str(content))
            self.costs[index] = cost
        return cost

    def _rank(self, indexes: List[int]) -> None:
        """Give every index that has no key yet an exact key or an upper-bound one."""
        keys, scores, items, unclean = self.keys, self.scores, self.items, self.unclean
        prepared = self.prepared
        if prepared is None:
            scorer, context, now = self.scorer, self.context, self.now
            for index in indexes:
                if keys[index] is None:
                    entry = items[index]
                    score = scorer(entry, context, now=now)
                    created = entry.get("created") or ""
                    ident = entry.get("id") or ""
                    scores[index] = score
                    keys[index] = (-score, created, ident, index)
                    self.exact[index] = 1
                    odd = type(score) not in (float, int) or score != score
                    if type(created) is not str or type(ident) is not str or odd:
                        unclean.add(index)
            return
        bound = _MAX_MESSAGE_FACTOR if prepared.words else None
        exact = self.exact
        for index in indexes:
            if keys[index] is None:
                entry = items[index]
                score = _partial_score(entry, prepared)  # always a float
                created = entry.get("created") or ""
                ident = entry.get("id") or ""
                scores[index] = score
                if bound is not None and score > 0.0:
                    keys[index] = (-(score * bound), created, ident, index)
                else:  # exact, or a factor >= 1 cannot raise a score <= 0 (still a bound)
                    keys[index] = (-score, created, ident, index)
                    exact[index] = bound is None or score != score
                if type(created) is not str or type(ident) is not str or score != score:
                    unclean.add(index)

    def _refine(self, index: int) -> None:
        """Replace an upper-bound key with the exact one."""
        partial = self.scores[index]
        factor = _message_factor(self.items[index], self.prepared)  # type: ignore[arg-type]
        score = partial if factor is None else partial * factor
        self.scores[index] = score
        _, created, ident, _ = self.keys[index]
        self.keys[index] = (-score, created, ident, index)
        self.exact[index] = 1

    def _pop(self, queue: List[Any]) -> Any:
        """The smallest exact key of a heap of exact and upper-bound keys."""
        exact, keys = self.exact, self.keys
        while True:
            index = queue[0][3]
            if exact[index]:
                return heapq.heappop(queue)
            self._refine(index)
            heapq.heapreplace(queue, keys[index])

    def _members(self, pool: Pool) -> Tuple[List[int], List[int]]:
        """Indexes of the active always-scope and contextual entries of the pool's types."""
        if pool.types is None:
            return self.always, self.contextual
        always: List[int] = []
        contextual: List[int] = []
        groups = [self.groups[kind] for kind in set(pool.types) if kind in self.groups]
        for group in groups:
            always.extend(group[0])
            contextual.extend(group[1])
        if len(groups) > 1:
            always.sort()
        return always, contextual

    def _report(self, pool: Pool, outcome: str, index: int) -> None:
        score = None if outcome == ALWAYS else self.scores[index]
        self.on_decision(  # type: ignore[misc]
            Decision(pool.name, outcome, self.items[index], index, score, self.cost(index))
        )

    def fill(self, pool: Pool) -> List[Dict[str, Any]]:
        """The pool's entries in render order: always-scope (input order), then ranked."""
        items, claimed, report = self.items, self.claimed, self.on_decision is not None
        always, contextual = self._members(pool)
        if claimed:  # else packing skips claimed entries as they come up
            always = [i for i in always if id(items[i]) not in claimed]
            if report:
                contextual = [i for i in contextual if id(items[i]) not in claimed]
        if report:
            for index in always:
                self._report(pool, ALWAYS, index)
        chosen = self._pack(pool, contextual, report)
        result = [items[i] for i in always]
        result.extend(items[i] for i in chosen)
        claimed.update(id(entry) for entry in result)
        return result

    def _pack(self, pool: Pool, contextual: List[int], report: bool) -> List[int]:
        """Greedy skip-and-continue over the contextual entries in rank order."""
        cap, budget = pool.max_entries, pool.max_tokens
        if cap <= 0 and not report:
            return []
        self._rank(contextual)
        lazy = not (self.unclean and any(i in self.unclean for i in contextual))
        if report or not lazy:  # every score is shown, or the full sort needs them all
            for index in contextual:
                if not self.exact[index]:
                    self._refine(index)
        keys = self.keys
        queue = [keys[i] for i in contextual]
        if lazy:  # keys are totally ordered: heap order is the sorted order
            heapq.heapify(queue)
            take: Callable[[], Any] = functools.partial(self._pop, queue)
        else:  # exactly the full sort 0.1.0 did, with odd values made comparable
            queue.sort(key=lambda key: key[3])
            queue = [(score, _comparable(created), _comparable(ident), index)
                     for score, created, ident, index in queue]  # fmt: skip
            queue.sort()
            queue.reverse()
            take = queue.pop
        chosen: List[int] = []
        used: Any = 0
        skipped = 0
        floor = None  # least cost among the entries not yet taken, once known
        out_of_room = False
        items, claimed = self.items, self.claimed
        while queue and len(chosen) < cap:
            index = take()[3]
            if claimed and id(items[index]) in claimed:
                continue  # taken by an earlier pool, so not a candidate here
            cost = self.cost(index)
            if used + cost > budget:
                if report:
                    self._report(pool, OVER_BUDGET, index)
                skipped += 1
                if floor is None and skipped >= 32:
                    floor = min((self.cost(key[3]) for key in queue), default=None)
                if floor is not None and used + floor > budget:
                    out_of_room = True  # nothing left can fit, and nothing more gets in
                    break
                continue
            chosen.append(index)
            used += cost
            if report:
                self._report(pool, SELECTED, index)
        if report and queue:
            rest = sorted(queue) if lazy else reversed(queue)
            outcome = OVER_BUDGET if out_of_room else OVER_RECORD_LIMIT
            for key in rest:
                self._report(pool, outcome, key[3])
        return chosen


def retrieve(
    entries: Sequence[Dict[str, Any]],
    pool: Pool,
    context: Optional[Dict[str, Any]] = None,
    *,
    scorer: Scorer = default_scorer,
    token_counter: TokenCounter = default_token_counter,
    is_active: ActiveTest = default_is_active,
    now: Optional[datetime.datetime] = None,
    on_decision: Optional[DecisionListener] = None,
) -> List[Dict[str, Any]]:
    """Fill one pool; return the same dict objects, always-scope first, then ranked.

    Keeps the active entries, then those of the pool's types (an entry without
    ``type`` is a "note"). Always-scope entries load first in input order,
    bypassing both caps. Contextual entries are ranked by ``(-score,
    created-or-"", id-or-"", original index)`` and taken greedily: an entry that
    does not fit the tokens left is skipped and the next one tried, until
    ``max_entries`` are taken. Cost is ``token_count`` when a positive int, else
    ``token_counter(content)``. Entries are never modified. ``scorer`` is called
    as ``scorer(entry, context, now=now)``; ``on_decision`` is described in the
    module docstring.
    """
    run = _Run(entries, context, scorer, token_counter, is_active, now, on_decision)
    return run.fill(pool)


def retrieve_pools(
    entries: Sequence[Dict[str, Any]],
    pools: Sequence[Pool],
    context: Optional[Dict[str, Any]] = None,
    *,
    scorer: Scorer = default_scorer,
    token_counter: TokenCounter = default_token_counter,
    is_active: ActiveTest = default_is_active,
    now: Optional[datetime.datetime] = None,
    on_decision: Optional[DecisionListener] = None,
) -> Dict[str, List[Dict[str, Any]]]:
    """Fill several pools in order from one entry set; map each pool name to its entries.

    An entry selected by an earlier pool (by object identity, so entries without
    an ``id`` dedupe too) is left out of later pools: each lands in at most one.
    Raises ValueError when two pools share a name.
    """
    pools = list(pools)
    names = set()
    for pool in pools:
        if pool.name in names:
            raise ValueError("duplicate pool name: %r" % (pool.name,))
        names.add(pool.name)
    run = _Run(entries, context, scorer, token_counter, is_active, now, on_decision)
    return {pool.name: run.fill(pool) for pool in pools}
