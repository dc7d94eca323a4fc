"""BM25 of one query against one state of a tenant index: of exact terms, or of stems.

`StemBm25Search` (the default scorer's) lets each query term count every
stored term with its stem ("hiking" finds "hiked"): the variants' postings are
merged into one per stem (kept until the index changes). Both are formulas
over `memcommit.recall.scoring.search`'s one search.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping

import numpy as np

from memcommit.recall.index.tenant import TenantIndex
from memcommit.recall.scoring import maxscore
from memcommit.recall.scoring.search import Term, TermSearch

_EMPTY = (np.zeros(0, dtype=np.int32), np.zeros(0))


def stem_postings(index: TenantIndex, tids: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(documents ascending, summed counts) of every term in ``tids``, current documents only."""
    parts = [index.postings(tid) for tid in tids]
    parts = [part for part in parts if len(part[0])]
    if not parts:
        return _EMPTY
    if len(parts) == 1:  # one stored variant: postings are already one per document
        return parts[0][0], parts[0][1].astype(np.float64)

    def merge() -> tuple[np.ndarray, np.ndarray]:
        docs = np.concatenate([part[0] for part in parts])
        tfs = np.concatenate([part[1] for part in parts]).astype(np.float64)
        unique, inverse = np.unique(docs, return_inverse=True)
        return unique, np.bincount(inverse, weights=tfs)

    return index.memo(("stem postings", tids), merge)


class Bm25Search(TermSearch):
    """BM25 (saturation ``k1``, length normalization ``b``) of the query's exact terms.

    A term said ``c`` times adds ``c · idf · tf (k1 + 1) / (tf + k1 (1 - b + b |d| / avgdl))``
    with ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``.
    """

    def __init__(self, index: TenantIndex, terms: Mapping[str, int], k1: float, b: float) -> None:
        self.k1, self.b, self.n_docs = k1, b, index.n_docs
        lengths, average = index.lengths()
        self._lengths, self._average = lengths, max(average, 1e-9)
        super().__init__(index, terms)

    def _tids(self, index: TenantIndex, term: str) -> tuple[int, ...]:
        """The stored terms a query term counts: itself."""
        return (tid,) if (tid := index.vocabulary.get(term)) is not None else ()

    def _term(self, index: TenantIndex, term: str, count: int) -> Term | None:
        tids = self._tids(index, term)
        docs, tf = stem_postings(index, tids)
        df = len(docs)
        weight = count * math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))
        return Term(("stem counts", tids), weight, docs, tf)

    def _part(self, weight: float, counts: np.ndarray, docs: np.ndarray) -> np.ndarray:
        norm = self.k1 * (1.0 - self.b + self.b * self._lengths[docs] / self._average)
        part: np.ndarray = weight * counts * (self.k1 + 1.0) / (counts + norm)
        return part

    def _bound(self, term: Term) -> float:
        def highest() -> float:
            return float(self._unit_parts(term).max())

        return term.weight * self.memo(("bm25 bound", term.key, self.k1, self.b), highest)

    def _unit_parts(self, term: Term) -> np.ndarray:
        """What ``term`` adds to each of its documents at weight 1 (its bound and its
        impact levels read one pass over its postings, kept while the index is unchanged)."""

        def parts() -> np.ndarray:
            return self._part(1.0, term.counts, term.docs)

        found: np.ndarray = self.memo(("bm25 parts", term.key, self.k1, self.b), parts)
        return found

    def _tops(self) -> list[maxscore.Top]:
        return [functools.partial(self._top, term) for term in self.terms]

    def _top(self, term: Term, count: int) -> tuple[np.ndarray, float]:
        """The documents of ``term``'s ``count`` highest parts (ascending), and the
        ``count + 1``-th highest part: the most it adds to any other document."""

        def top() -> tuple[np.ndarray, float]:
            unit = self._unit_parts(term)
            if len(unit) <= count:
                return term.docs, 0.0
            cut = len(unit) - count - 1  # the highest ``count`` lie after it
            at = np.argpartition(unit, cut)
            return np.sort(term.docs[at[cut + 1 :]]), float(unit[at[cut]])

        docs, below = self.memo(("bm25 top", term.key, self.k1, self.b, count), top)
        return docs, term.weight * below


class StemBm25Search(Bm25Search):
    """BM25 where each query term counts every stored term with its stem ("hiking": "hiked")."""

    def _tids(self, index: TenantIndex, term: str) -> tuple[int, ...]:
        return tuple(sorted(index.vocabulary.variants(term)))
