"""``recall()``: stored → scope filters → ranking → packing, with a row for every memory.

Recall only reads: it never records a use, so ranking cannot feed on its own
retrieval history.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, cast

import numpy as np

import poolsplit
from memcommit import inputs
from memcommit.errors import EmbedderError, InvalidInput, ScorerError
from memcommit.model import KINDS, Memory
from memcommit.recall.index.columns import to_micros
from memcommit.recall.index.live import RESAVE_AFTER
from memcommit.recall.index.text import term_counts
from memcommit.recall.index.vectors import fill
from memcommit.recall.pipeline.budget import Tokens, Words
from memcommit.recall.pipeline.context import Context
from memcommit.recall.pipeline.explain import Explanation
from memcommit.recall.pipeline.filters import Scope, passes
from memcommit.recall.pipeline.options import RecallOptions
from memcommit.recall.pipeline.pack import Packed, Packer
from memcommit.recall.pipeline.ranking import Ranking, exhaustive
from memcommit.recall.pipeline.sources import (
    Source,
    from_memories,
    from_store,
    rebuilt_when_damaged,
)
from memcommit.recall.scoring.components import Components
from memcommit.recall.scoring.cosine import Query
from memcommit.recall.scoring.fusion import HybridScorer, fused_scorer
from memcommit.recall.scoring.registry import make_scorer
from memcommit.recall.scoring.scorers import (
    BatchScorer,
    Presorted,
    Scorer,
    is_batch,
    is_explained,
    is_lexical,
    is_presorted,
)
from memcommit.store.protocols import CommitRef, ViewLike

DEFAULT_POOL = "context"
#: The pool that loads always-scope memories of kinds none of the caller's pools draws from.
ALWAYS_POOL = "always"
#: The cap of a pool without one: poolsplit caps are ints, and no sum of real caps reaches it.
_NO_CAP = sys.maxsize


@rebuilt_when_damaged
def recall(
    store_or_view: ViewLike | Sequence[Memory] | Source,
    query: str,
    options: RecallOptions | None = None,
    **overrides: Any,
) -> Context:
    """Pack a bounded context for ``query`` from one tenant's memories, explaining every one.

    ``store_or_view`` is a store, a tenant view, or a list of `Memory`. How to
    recall is a `RecallOptions` (``options``, default ``RecallOptions()``) with
    ``overrides`` by field name: ``recall(store, q, tenant="acme", budget=Words(80))``
    and ``recall(store, q, RecallOptions(tenant="acme", budget=Words(80)))`` are
    one call. Filters (``kinds`` .. ``tiers``) run first; by default the latest
    fact wins (``latest_per_key=True``: of memories sharing a key only the newest
    competes; ``as_of`` reads an earlier state, where an older one may still be
    the newest); survivors are ranked by ``scorer`` (the default ``"memory"``;
    ``"tfidf"`` is the seed's exact formula, blended with recency by
    ``recency_weight`` and ``half_life``); poolsplit packs them into ``pools``
    (default: one pool of ``budget`` and ``max_records``), always-scope memories
    first and outside every cap (when the pools leave kinds out, a first pool
    "always" loads those kinds' always-scope memories). ``now`` is the time ages
    are measured at (default: the current UTC time). Rows are computed when
    first read (``explain=True`` builds them all before returning), so the common
    path stays fast at a million memories; ``ctx.explanation`` counts them and
    builds them a page at a time. An unknown tenant gives an empty context
    with a ``note``, as does a query the store's embedder failed to embed (ranked
    by words; ``hybrid=True`` raises instead); a bad argument raises InvalidInput naming it.
    """
    if not isinstance(query, str):
        raise InvalidInput("query", query, "must be a str")
    if options is None:
        options = RecallOptions(**overrides)
    elif not isinstance(options, RecallOptions):
        raise InvalidInput("options", options, "must be a RecallOptions or None")
    else:
        options = options.replace(**overrides)
    budget = options.budget
    unit = budget if budget is not None else Words(0)
    pool_list = _pools(options)
    chosen = _scorer(options.scorer)
    moment = _now(options.now)
    tenant = _tenant(store_or_view, options.tenant)

    scope = Scope.of(options)
    if options.pools is not None:
        scope = _limit_kinds(scope, pool_list)
        pool_list = _with_always_pool(pool_list)
    source = _source(store_or_view, tenant, options.as_of)
    chosen, note = _fused(chosen, source, options.hybrid, query)
    weight, half_life = options.recency_weight, options.half_life
    run = _Run(
        source,
        scope,
        Query(query, term_counts(query), moment, weight, half_life, source.index),
        chosen,
        unit,
        pool_list,
    )
    packed = run.pack()
    chosen_docs = [doc for docs in packed.pools.values() for doc in docs]
    memories = dict(zip(chosen_docs, run.memories(chosen_docs), strict=True))
    if source.measure is not None:  # what this recall put into the index counts now
        source.measure()
    context = Context(
        query=query,
        tenant=tenant,
        now=moment,
        unit=unit.unit,
        budget=budget.n if budget is not None else None,
        selected=[memories[doc] for doc in chosen_docs],
        pools={name: [memories[doc] for doc in docs] for name, docs in packed.pools.items()},
        used=packed.used,
        scorer=getattr(chosen, "name", getattr(chosen, "__name__", type(chosen).__name__)),
        explanation=run.explanation(packed),
        note=note,
    )
    if not source.known:
        context.note = f"unknown tenant {tenant!r}: it has no memories"
    if options.explain:
        context.rows  # noqa: B018 - built now, as asked
    return context


class _Run:
    """One recall over one tenant index: filter, score, pack, then explain on demand.

    Everything after scoring reads a snapshot of the index, so commits landing
    meanwhile (or before lazily built rows are read) change no decision here.
    A scorer whose ranking is known before filtering (`PresortedScorer`, with no
    recency blended in) has only its best matches filtered, as deep as packing
    reads (`memcommit.recall.pipeline.ranking`); any other scorer scores every memory
    that passes the filters. The query's TF-IDF search is taken with the
    snapshot, for the explanation's cosines; its sums, bounds and lookups are
    computed only when a scorer or the explanation reads them.
    """

    def __init__(
        self,
        source: Source,
        scope: Scope,
        query: Query,
        scorer: Scorer | BatchScorer,
        unit: Words | Tokens,
        pools: list[poolsplit.Pool],
    ) -> None:
        index = source.index
        self.source, self.scope, self.query, self.pools = source, scope, query, pools
        self.now_us = to_micros(query.now, 0)
        self.components: Callable[[], Components] = Components  # the parts of each score, if given
        with index.lock:
            snap = self.snap = index.snapshot()
            self.tfidf = query.tfidf  # of this state of the index, whenever rows read it
            if query.recency_weight == 0.0 and is_presorted(scorer):
                always = self._presorted(scorer.presort(query))
            else:
                always = self._scored(scorer)
        created, ids = snap.created, snap.ids
        self.always = sorted(always.tolist(), key=lambda d: (int(created[d]), ids[d]))
        self.packer = Packer(snap, unit, pools, query.now, source.load)

    def _passes(self, docs: np.ndarray) -> np.ndarray:
        return passes(self.snap, self.scope, self.now_us, docs)

    def _presorted(self, presorted: Presorted) -> np.ndarray:
        """Rank the matches before filtering; filter only the best. Returns the always docs."""
        always: np.ndarray = self.snap.always_docs
        # the filter as a partial, not a bound method: the ranking then holds no reference
        # back to this run (a cycle would keep its arrays until a cyclic collection)
        passing = functools.partial(passes, self.snap, self.scope, self.now_us)
        always = always[passing(always)]
        ranking = self.ranking = Ranking(self.snap, presorted.levels, passing)
        mine = presorted.relevance(always) if len(always) else np.zeros(0)

        def best() -> float:
            """The highest relevance of any passing memory (scores scale by it)."""
            return max(ranking.best(), float(mine.max()) if len(mine) else 0.0)

        scale = presorted.scale
        if scale is not None:  # the scale needs the best now; otherwise only parts may
            highest = best()
            if highest > 0.0:
                ranking.scaled(lambda values: scale(values, highest))
                mine = np.where(mine > 0.0, scale(mine, highest), np.nan)
            self.components = functools.partial(presorted.parts, highest)
        else:
            self.components = lambda: presorted.parts(best())
        self.always_scores = np.where(mine > 0.0, mine, np.nan)
        self._always_docs = always
        return always

    def _scored(self, scorer: Scorer | BatchScorer) -> np.ndarray:
        """Filter every memory, then score every one that passed. Returns the always docs."""
        snap = self.snap
        alive = snap.alive
        if is_lexical(scorer):  # only shared terms score: skip the rest
            docs = np.flatnonzero((self.tfidf.all() > 0.0) | snap.always)
            docs = docs[alive[docs]]
        else:
            docs = np.flatnonzero(alive)
        candidates = docs[self._passes(docs)]
        scores = np.full(len(candidates), np.nan)
        if len(candidates):
            scores = self._score(scorer, candidates)
        always_flags = snap.always[candidates]
        ranked = ~always_flags & ~np.isnan(scores)
        levels = exhaustive(candidates[ranked], scores[ranked])
        self.ranking = Ranking(snap, levels, lambda d: np.ones(len(d), dtype=bool))
        self._always_docs = candidates[always_flags]
        self.always_scores = scores[always_flags]
        return self._always_docs

    def _score(self, scorer: Scorer | BatchScorer, docs: np.ndarray) -> np.ndarray:
        if is_explained(scorer):
            scores, parts = scorer.score_parts(self.query, docs)
            self.components = lambda: parts
            return np.asarray(scores, dtype=float)
        if is_batch(scorer):
            return np.asarray(scorer.score_docs(self.query, docs), dtype=float)
        call = cast(Scorer, scorer)  # not a batch scorer: a callable (`_scorer` checked)
        out = np.empty(len(docs))
        memories = self.source.load([self.snap.ids[doc] for doc in docs.tolist()])
        for position, memory in enumerate(memories):
            try:
                value = call(memory, self.query)
            except Exception as exc:
                raise ScorerError(memory.id, f"raised {exc!r}") from exc
            if value is None:
                out[position] = np.nan
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
                raise ScorerError(memory.id, f"returned {value!r}, not a number")
            if not math.isfinite(value):
                raise ScorerError(memory.id, f"returned {value!r}")
            out[position] = value
        return out

    def pack(self) -> Packed:
        """Hand always-scope memories and the best ranked ones to poolsplit."""
        return self.packer.pack(self.always, self.ranking)

    def memories(self, docs: Sequence[int]) -> list[Memory]:
        """The memories of ``docs``, in that order."""
        return self.source.load([self.snap.ids[doc] for doc in docs])

    def scores(self) -> np.ndarray:
        """Every document's score (NaN: filtered out or no match), for the explanation."""
        scores = self.ranking.full_scores()
        scores[self._always_docs] = self.always_scores
        return scores

    def explanation(self, packed: Packed) -> Explanation:
        """Every memory's row, from the filters, scores and poolsplit's decisions, on demand."""
        return Explanation(
            self.snap,
            self.scope,
            self.now_us,
            self.tfidf.all,
            self.scores,
            self.pools,
            packed,
            self.components,
            self.packer,
            self.source.load,
        )


def _pools(options: RecallOptions) -> list[poolsplit.Pool]:
    """The caller's pools (checked in `RecallOptions`), or one pool of the budget and cap."""
    if options.pools is not None:
        return list(options.pools)
    cap = options.budget.n if options.budget is not None else _NO_CAP
    entries = options.max_records if options.max_records is not None else _NO_CAP
    return [poolsplit.Pool(DEFAULT_POOL, cap, entries)]


def _with_always_pool(pools: list[poolsplit.Pool]) -> list[poolsplit.Pool]:
    """``pools``, after a first pool "always" (no caps) when some kind no pool draws from.

    Always-scope memories load in every pool whose types include their kind; a
    correction whose kind the caller's pools leave out would load nowhere. The
    "always" pool takes exactly those (its caps are 0: nothing else fits).
    """
    if any(pool.types is None for pool in pools):
        return pools
    drawn = {kind for pool in pools for kind in pool.types or ()}
    left = tuple(kind for kind in KINDS if kind not in drawn)
    if not left:
        return pools
    if any(pool.name == ALWAYS_POOL for pool in pools):
        raise InvalidInput(
            "pools",
            pools,
            f"{ALWAYS_POOL!r} names the pool that loads always-scope memories of the kinds "
            f"no pool draws from ({', '.join(left)}); rename yours",
        )
    return [poolsplit.Pool(ALWAYS_POOL, 0, 0, left), *pools]


def _limit_kinds(scope: Scope, pools: list[poolsplit.Pool]) -> Scope:
    """Kinds no pool draws from cannot be selected: filter them as other_kind (not always ones)."""
    if any(pool.types is None for pool in pools):
        return scope
    drawn = tuple(kind for kind in KINDS if any(kind in (pool.types or ()) for pool in pools))
    return Scope(**{**scope.__dict__, "pool_kinds": drawn})


def _scorer(scorer: str | Scorer | BatchScorer) -> Scorer | BatchScorer:
    """A fresh scorer for a name (checked in `RecallOptions`), or the caller's own."""
    return make_scorer(scorer) if isinstance(scorer, str) else scorer


def _fused(
    scorer: Scorer | BatchScorer, source: Source, hybrid: bool | None, query: str
) -> tuple[Scorer | BatchScorer, str | None]:
    """``scorer`` fused with the dense cosine when the source has an embedder (and ``hybrid``),
    and a note for the context when it could not be.

    A `HybridScorer` passed as the scorer keeps its own embedder and settings.
    The query is embedded and the tenant's stored vectors are put into its index
    here, before recall takes the index's lock. When the store's embedder fails
    on the query (its service down) and hybrid ranking was not asked for by
    name (``hybrid=True``, a `HybridScorer`), recall ranks by words and says so:
    an agent keeps its memory while a provider is away.
    """
    if isinstance(scorer, HybridScorer):
        fused = scorer
    else:
        configured = source.embedder if hybrid is not False else None
        if configured is None or not is_batch(scorer):
            if hybrid:
                why = "a batch scorer" if configured else "a store opened with embedder="
                raise InvalidInput("hybrid", hybrid, f"needs {why}")
            return scorer, None
        fused = fused_scorer(configured, scorer)
    if source.vectors is None:
        raise InvalidInput("scorer", scorer, "hybrid ranking reads vectors from a store")
    try:
        fused.query_vector(query)  # (first: an HTTP embedder learns its size from this answer)
    except EmbedderError as exc:
        if hybrid or fused is scorer:
            raise
        return scorer, f"ranked by words only: the query could not be embedded ({exc})"
    put = fill(source.index, fused.embedder, source.vectors)
    if put >= RESAVE_AFTER and source.save is not None:  # the next process reads them from disk
        source.save()
    return fused, None


def _now(now: Any) -> datetime:
    return inputs.now("now", now)


def _tenant(source: object, tenant: Any) -> str:
    own = getattr(source, "name", None) if _is_view(source) else None
    if tenant is None:
        tenant = own
    if not isinstance(tenant, str) or not tenant:
        raise InvalidInput("tenant", tenant, "must name the tenant to recall for")
    if own is not None and tenant != own:
        raise InvalidInput("tenant", tenant, f"this view reads only tenant {own!r}")
    return tenant


def _is_view(source: object) -> bool:
    from memcommit.store import TenantView

    return isinstance(source, TenantView)


def _source(
    source: ViewLike | Sequence[Memory] | Source, tenant: str, as_of: CommitRef | None
) -> Source:
    if isinstance(source, Source):  # a prebuilt index (benchmarks, custom backends)
        if source.index.tenant != tenant:
            raise InvalidInput("tenant", tenant, f"this index holds tenant {source.index.tenant!r}")
        return source
    if isinstance(source, (list, tuple)):
        if as_of is not None:
            raise InvalidInput("as_of", as_of, "needs a store; a list has no history")
        return from_memories(source, tenant)
    if callable(getattr(source, "on_commit", None)) and callable(getattr(source, "find", None)):
        return from_store(cast(ViewLike, source), tenant, as_of)
    raise InvalidInput(
        "store_or_view", source, "must be a store, a tenant view or a list of Memory"
    )
