"""Hybrid ranking: a lexical scorer and the dense cosine, fused by reciprocal rank.

The rule (reciprocal-rank fusion, Cormack et al. 2009), over the memories that
passed the filters:

- the lexical ranking is the lexical scorer's (the default ``memory``, or any
  batch scorer); the dense ranking starts from the cosine of the memory's stored
  vector with the query's (`memcommit.recall.index.dense`: every memory up to
  20,000, above that only the sign-code candidates, an approximate first stage; a
  memory outside them is not in the dense window, though its ``dense`` part
  still shows its exact cosine), and ranks the ``wide`` (300) nearest by their
  focus (`memcommit.recall.scoring.focus`): ``(cos − the 300th cosine) × the
  lexical scorer's speaker and date factors``, so who said a memory and when count
  for meaning as they do for words; each ranks its matches by
  score, ties by creation time then id (the order every ranking of recall uses);
- a memory among the first ``depth`` (100) of a ranking gains ``weight / (k + rank)``
  from it (ranks from 1; k = 10; the lexical weight 1, the dense 0.5); the fused
  score is the sum of the two;
- a lexical match below the lexical window keeps its place among lexical
  matches: it scores ``lexical_weight · relevance / (k + depth + 1)`` (its
  scaled lexical score, at most 1), below every memory inside a window;
- a memory that no lexical term matches and that is not in the dense window is
  no match; a memory without a vector yet is ranked by words alone (its
  ``vector`` part is 0).

Ranks, not scores, are fused, so neither side's scale matters (BM25 sums,
cosines of 0.7-0.9 from e5). Measured on LoCoMo's dev split with the offline
model (benchmarks/locomo_eval.py --embedder local --fusion-grid; docs/recall.md):
the default scorer alone 0.755 recall@10, the dense ranking alone 0.547; RRF at
k=60 and equal weights 0.705 (a ranking that much weaker drags the fusion down),
k=10 with the dense ranking at half weight 0.770, the best of the rank rules
tried and no category below the lexical recall; normalised blends of the scaled
relevance and a min-max or z-scored cosine reached 0.759-0.764. The focus took the
dense ranking alone from 0.553 to 0.594 and the fusion to 0.769 (0.767 without it, same
run), and lifted BEAM 100K's temporal questions (docs/recall.md). Everything is computed from
the index's state and the query, with exact integer dot products and
deterministic tie-breaks, so the same store and query give the same bits.

Every scored memory's parts (`Row.components`): the lexical scorer's own
parts, ``lexical`` (its score) and ``lexical_rank``, ``dense`` (the cosine),
``dense_factor`` and ``dense_focused`` (the focus' factor and score) among the
``wide`` nearest, ``dense_rank`` when it is in the dense window, ``vector`` (1
or 0) and ``fused``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from memcommit.embedding import Embedder
from memcommit.embedding.vectors import embedded
from memcommit.recall.scoring import maxscore, params
from memcommit.recall.scoring.components import Components
from memcommit.recall.scoring.cosine import Query
from memcommit.recall.scoring.focus import Focus
from memcommit.recall.scoring.maxscore import Level
from memcommit.recall.scoring.memory import MemoryScorer
from memcommit.recall.scoring.scorers import (
    BatchScorer,
    Presorted,
    PresortedScorer,
    is_explained,
    is_presorted,
)

#: RRF's constant: how fast a rank's weight falls (the paper's 60 spreads the weight over
#: ranks too deep for a ten-memory context; 10 measured best, see the module doc).
K = 10
#: The dense ranking's weight beside the lexical one's 1.
DENSE_WEIGHT = 0.5
#: How many of each ranking take part in the fusion.
DEPTH = 100
#: How many of the nearest memories the dense ranking's focus re-ranks (`focused`).
WIDE = 300


def contenders(scores: np.ndarray, depth: int) -> np.ndarray:
    """The positions that can take one of the ``depth`` first ranks of ``scores`` (ascending):
    every non-NaN score at or above the ``depth``-th best value (ties at it included)."""
    scored = np.flatnonzero(~np.isnan(scores))
    if len(scored) > depth > 0:
        values = scores[scored]
        kth = np.partition(values, len(values) - depth)[len(values) - depth]
        scored = scored[values >= kth]
    return scored


def ranks(
    scores: np.ndarray, births: np.ndarray, depth: int, scored: np.ndarray | None = None
) -> np.ndarray:
    """1-based rank of the ``depth`` best non-NaN scores (higher first, ties by ``births``).

    0 for every other position: a NaN, or a score below the first ``depth``.
    Only the `contenders` (``scored``, when the caller has them) are sorted, and
    only their ``births`` are read.
    """
    out = np.zeros(len(scores), dtype=np.int64)
    scored = contenders(scores, depth) if scored is None else scored
    order = scored[np.lexsort((births[scored], -scores[scored]))][:depth]
    out[order] = np.arange(1, len(order) + 1)
    return out


def focused(
    cosines: np.ndarray,
    births: np.ndarray,
    width: int,
    factors: Callable[[np.ndarray], np.ndarray],
) -> np.ndarray:
    """The focused score of each position (NaN cosine: none): ``(cos − floor) · factor``.

    ``floor`` is the cosine of the ``width``-th nearest (ties by ``births``) or of
    the farthest when fewer; positions below the ``width`` nearest get NaN.
    ``factors`` gives the factor of the positions it is passed (only the nearest).
    """
    out = np.full(len(cosines), np.nan)
    scored = contenders(cosines, width)
    if not len(scored):
        return out
    nearest = scored[np.lexsort((births[scored], -cosines[scored]))][:width]
    out[nearest] = (cosines[nearest] - cosines[nearest[-1]]) * factors(nearest)
    return out


def _aligned(parts: Components, docs: np.ndarray) -> dict[str, np.ndarray]:
    """``parts``' values for ``docs`` (ascending); NaN where a document has none."""
    if not len(parts.docs):
        return {name: np.full(len(docs), np.nan) for name in parts.values}
    at = np.minimum(np.searchsorted(parts.docs, docs), len(parts.docs) - 1)
    found = parts.docs[at] == docs
    return {name: np.where(found, values[at], np.nan) for name, values in parts.values.items()}


class Columns(NamedTuple):
    """Per document of a fused ranking: what its parts are computed from.

    The scaled lexical score and its rank, the cosine, the focus' factor and
    focused score (`focused`), the dense rank and the fused score; a rank
    is 0 where a document has none, a value NaN.
    """

    lexical: np.ndarray
    lexical_rank: np.ndarray
    dense: np.ndarray
    factor: np.ndarray
    focused: np.ndarray
    dense_rank: np.ndarray
    fused: np.ndarray


class HybridScorer:
    """``lexical`` fused with the cosine of ``embedder``'s vectors (see the module doc).

    The vectors are read from the query's index (``query.index.dense``), where
    recall put the store's vectors of the tenant before scoring; the query is
    embedded once per query text.
    """

    name = "hybrid"

    def __init__(
        self,
        embedder: Embedder,
        lexical: BatchScorer,
        *,
        k: float = K,
        depth: int = DEPTH,
        lexical_weight: float = 1.0,
        dense_weight: float = DENSE_WEIGHT,
        wide: int = WIDE,
        focus: Focus | None = None,
    ) -> None:
        self.embedder, self.base = embedder, lexical
        self.k = params.weight("k", k)
        self.depth = params.count("depth", depth)
        self.wide = params.count("wide", wide)
        if focus is None:  # the lexical scorer's own factors; none for another scorer
            memory = lexical if isinstance(lexical, MemoryScorer) else None
            focus = Focus(memory.speaker, memory.dates) if memory else Focus(0.0, 0.0)
        self.focus = focus
        self.lexical_weight = params.weight("lexical_weight", lexical_weight)
        self.dense_weight = params.weight("dense_weight", dense_weight)
        self._query: tuple[str, np.ndarray] | None = None

    def query_vector(self, text: str) -> np.ndarray:
        """The query's vector (kept for the last text asked)."""
        if self._query is None or self._query[0] != text:
            self._query = (text, embedded(self.embedder, [text], "query")[0])
        return self._query[1]

    def window(self, query: Query, size: int, allowed: np.ndarray) -> np.ndarray:
        """Exact cosines of the dense candidates among ``allowed`` documents, NaN elsewhere.

        ``size`` long; the candidates are `DenseRows.nearest`'s for the focus'
        width (every allowed row with a vector in a small tenant; the best by a
        sign-code Hamming stage in a large one).
        """
        out = np.full(size, np.nan)
        rows = query.index.dense.get(self.embedder.name)
        if rows is not None:
            mask = np.zeros(max(size, rows.size), dtype=bool)
            mask[:size] = allowed[:size]
            found, cosines = rows.nearest(self.query_vector(query.text), self.wide, mask)
            inside = found < size
            out[found[inside]] = cosines[inside]
        return out

    def nearest(self, query: Query, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The documents among ``allowed`` that can be among the focus' ``wide`` nearest
        (ascending), and their exact cosines (`DenseRows.window`); none without rows."""
        rows = query.index.dense.get(self.embedder.name)
        if rows is None:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        mask = allowed[: rows.size]
        if len(mask) < rows.size:  # documents the snapshot does not hold yet: not allowed
            mask = np.concatenate([mask, np.zeros(rows.size - len(mask), dtype=bool)])
        return rows.window(self.query_vector(query.text), self.wide, mask)

    def explained(self, query: Query, docs: np.ndarray, known: np.ndarray) -> np.ndarray:
        """The cosine of each of ``docs``: ``known`` where given, else the exact int8 one."""
        rows = query.index.dense.get(self.embedder.name)
        unknown = np.isnan(known)
        if rows is None or not unknown.any():
            return known
        out = known.copy()
        out[unknown] = rows.cosines(self.query_vector(query.text), docs[unknown])
        return out

    def fuse(
        self, lexical: np.ndarray, lexical_rank: np.ndarray, dense_rank: np.ndarray
    ) -> np.ndarray:
        """The fused score from the scaled lexical score (NaN: no match) and the ranks (0: none)."""
        k, depth = self.k, self.depth
        fused = np.zeros(len(lexical))
        inside, near = lexical_rank > 0, dense_rank > 0
        fused[inside] += self.lexical_weight / (k + lexical_rank[inside])
        below = ~inside & ~np.isnan(lexical)
        fused[below] += self.lexical_weight * np.minimum(lexical[below], 1.0) / (k + depth + 1)
        fused[near] += self.dense_weight / (k + dense_rank[near])
        fused[~(inside | below | near)] = np.nan
        return fused

    @staticmethod
    def parts(docs: np.ndarray, lexical_parts: Components, columns: Columns) -> Components:
        """The parts of ``docs``' fused scores from their `Columns`."""
        matched = ~np.isnan(columns.fused)
        scored = docs[matched]

        def rank(values: np.ndarray) -> np.ndarray:
            return np.where(values[matched] > 0, values[matched], np.nan)

        return Components(
            scored,
            {
                **_aligned(lexical_parts, scored),
                "lexical": columns.lexical[matched],
                "lexical_rank": rank(columns.lexical_rank),
                "dense": columns.dense[matched],
                "dense_factor": columns.factor[matched],
                "dense_focused": columns.focused[matched],
                "dense_rank": rank(columns.dense_rank),
                "vector": (~np.isnan(columns.dense[matched])).astype(np.float64),
                "fused": columns.fused[matched],
            },
        )

    def focus_of(
        self, query: Query, docs: np.ndarray, cosines: np.ndarray, births: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The focus' factor and focused score of each of ``docs`` (NaN outside its window)."""
        factor = np.full(len(docs), np.nan)

        def factors(at: np.ndarray) -> np.ndarray:
            found = self.focus.factors(query, docs[at])
            factor[at] = found
            return found

        return factor, focused(cosines, births, self.wide, factors)

    def score_parts(self, query: Query, docs: np.ndarray) -> tuple[np.ndarray, Components]:
        """Fused scores of ``docs`` (NaN: no match) and the parts of each scored one."""
        if is_explained(self.base):
            lexical, lexical_parts = self.base.score_parts(query, docs)
        else:
            lexical, lexical_parts = self.base.score_docs(query, docs), Components()
        lexical = np.asarray(lexical, dtype=np.float64)
        size = query.index.alive.size
        allowed = np.zeros(size, dtype=bool)
        allowed[docs[docs < size]] = True
        window = np.full(len(docs), np.nan)
        window[docs < size] = self.window(query, size, allowed)[docs[docs < size]]
        births = query.index.snapshot().birth_rank[docs]
        lexical_rank = ranks(lexical, births, self.depth)
        factor, focus = self.focus_of(query, docs, window, births)
        dense_rank = ranks(focus, births, self.depth)
        fused = self.fuse(lexical, lexical_rank, dense_rank)
        dense = window.copy()
        shown = ~np.isnan(fused)
        dense[shown] = self.explained(query, docs[shown], window[shown])
        columns = Columns(lexical, lexical_rank, dense, factor, focus, dense_rank, fused)
        return fused, self.parts(docs, lexical_parts, columns)

    def score_docs(self, query: Query, docs: np.ndarray) -> np.ndarray:
        """`score_parts`' scores only."""
        return self.score_parts(query, docs)[0]


class PresortedHybrid(HybridScorer):
    """`HybridScorer` over a presorted lexical scorer: both windows found before the filters.

    At recency weight 0 recall asks for `presort`: the lexical window comes from
    the lexical scorer's top-k search (MaxScore, `memcommit.recall.scoring.maxscore`),
    the dense one from one scan of the rows, and recall filters only the best
    candidates (`memcommit.recall.pipeline.ranking`). Ranks are then among the
    tenant's current memories, the filters' losers included; a memory outside both
    windows scores at most ``lexical_weight / (k + depth + 1)``, the ceiling of the
    first level. ``relevance`` of the lexical search is scaled by its best match.
    """

    base: PresortedScorer

    def presort(self, query: Query) -> Presorted:
        """The fused ranking in two levels: the windows, then every match.

        Both windows are kept as sorted arrays of their documents (ranks and
        cosines looked up by bisection), not as arrays over the tenant.
        """
        lexical = self.base.presort(query)
        snap = query.index.snapshot()
        top, top_values = maxscore.best(lexical.levels, self.depth)
        near, cosines = self.nearest(query, snap.alive)
        ranked = maxscore.union([np.sort(top), near])
        births = snap.births_of(ranked)  # the tie-break, among the ranked ones only

        def born(docs: np.ndarray) -> np.ndarray:
            found: np.ndarray = births[np.searchsorted(ranked, docs)]
            return found

        order = top[np.lexsort((born(top), -top_values))][: self.depth]
        factor, focus = self.focus_of(query, near, cosines, born(near))
        inside = ~np.isnan(focus)
        focal = near[inside]
        closest = focal[np.lexsort((born(focal), -focus[inside]))][: self.depth]
        lexical_rank = _Table(order, np.arange(1, len(order) + 1))
        dense_rank = _Table(closest, np.arange(1, len(closest) + 1))
        dense, factors, focuses = _Table(near, cosines), _Table(near, factor), _Table(near, focus)
        best = float(top_values.max()) if len(top_values) else 0.0
        windows = maxscore.union([np.sort(order), np.sort(closest)])

        def columns(docs: np.ndarray, relevance: np.ndarray) -> Columns:
            scaled = np.where(relevance > 0, relevance / best if best > 0 else 0.0, np.nan)
            ranks_of, near_of = lexical_rank.of(docs, 0), dense_rank.of(docs, 0)
            return Columns(
                scaled,
                ranks_of,
                dense.of(docs, np.nan),
                factors.of(docs, np.nan),
                focuses.of(docs, np.nan),
                near_of,
                self.fuse(scaled, ranks_of, near_of),
            )

        def level(docs: np.ndarray, relevance: np.ndarray, ceiling: float) -> Level:
            fused = columns(docs, relevance).fused
            kept = ~np.isnan(fused)
            return docs[kept], fused[kept], ceiling

        def first() -> Level:
            ceiling = self.lexical_weight / (self.k + self.depth + 1) * (1 + maxscore.SLACK)
            return level(windows, lexical.relevance(windows), ceiling)

        def everything() -> tuple[np.ndarray, np.ndarray]:
            matched, values, _ = lexical.levels[-1]()
            docs = maxscore.union([matched, windows])
            relevance = np.zeros(len(docs))
            relevance[np.searchsorted(docs, matched)] = values
            return docs, relevance

        def last() -> Level:
            return level(*everything(), 0.0)

        def relevance(docs: np.ndarray) -> np.ndarray:
            return columns(docs, lexical.relevance(docs)).fused

        def parts(_best: float) -> Components:
            docs, found = everything()
            lexical_parts = lexical.parts(best)
            cols = columns(docs, found)
            cols = cols._replace(dense=self.explained(query, docs, cols.dense))
            return self.parts(docs, lexical_parts, cols)

        return Presorted([first, last], relevance, None, parts)


class _Table:
    """Values of a few documents (kept sorted by document), looked up by bisection."""

    __slots__ = ("docs", "values")

    def __init__(self, docs: np.ndarray, values: np.ndarray) -> None:
        sorter = np.argsort(docs, kind="stable")
        self.docs, self.values = docs[sorter], values[sorter]

    def of(self, docs: np.ndarray, missing: float | int) -> np.ndarray:
        """The value of each of ``docs``; ``missing`` where a document has none."""
        dtype = np.float64 if isinstance(missing, float) else self.values.dtype
        out = np.full(len(docs), missing, dtype=dtype)
        if len(self.docs) and len(docs):
            at = np.minimum(np.searchsorted(self.docs, docs), len(self.docs) - 1)
            found = self.docs[at] == docs
            out[found] = self.values[at[found]]
        return out


def fused_scorer(embedder: Embedder, lexical: BatchScorer, **settings: Any) -> HybridScorer:
    """The hybrid scorer of ``lexical``: presorted when ``lexical`` is (see `PresortedHybrid`)."""
    kind = PresortedHybrid if is_presorted(lexical) else HybridScorer
    return kind(embedder, lexical, **settings)
