"""Stem-class BM25 of one query against one state of a tenant index, on demand.

Each query term counts every stored term with its stem ("hiking" finds
"hiked"): the variants' postings are merged into one per stem (kept until the
index changes). `Bm25Search.all` scores every document by summing the
postings; `Bm25Search.of` scores chosen documents by lookup, with the same
arithmetic in the same term order, so both give the same bits; `levels`
serves a top-k search that skips the long postings of common terms
(`memcommit.recall.scoring.maxscore`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from memcommit.recall.index.tenant import TenantIndex
from memcommit.recall.scoring import maxscore
from memcommit.recall.scoring.maxscore import Level

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


class Bm25Search:
    """BM25 (saturation ``k1``, length normalization ``b``) of every or chosen documents."""

    def __init__(
        self, index: TenantIndex, terms: dict[str, int], k1: float, b: float, *, stems: bool
    ) -> None:
        self.size = index.alive.size
        self.k1, self.b = k1, b
        lengths, average = index.lengths()
        self._lengths, self._average = lengths, max(average, 1e-9)
        self.terms: list[tuple[float, np.ndarray, np.ndarray]] = []  # sorted by term text
        self.bounds: list[float] = []
        self._finders: list[Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]] = []
        n_docs = index.n_docs
        for term in sorted(terms) if n_docs else ():
            if stems:
                tids = tuple(sorted(index.vocabulary.variants(term)))
            else:
                tids = (tid,) if (tid := index.vocabulary.get(term)) is not None else ()
            docs, tf = stem_postings(index, tids)
            if not len(docs):
                continue
            df = len(docs)
            factor = terms[term] * math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            self.terms.append((factor, docs, tf))
            self._finders.append(
                maxscore.finder(index.memo, ("stem counts", tids), docs, tf, self.size)
            )
            self.bounds.append(
                factor * index.memo(("bm25 bound", tids, k1, b), self._bound(docs, tf))
            )
        self._all: tuple[np.ndarray, np.ndarray] | None = None
        self._looked_up = maxscore.Memo(self._lookup)

    def _norm(self, docs: np.ndarray) -> np.ndarray:
        norm: np.ndarray = self.k1 * (1.0 - self.b + self.b * self._lengths[docs] / self._average)
        return norm

    def _part(self, factor: float, tf: np.ndarray, docs: np.ndarray) -> np.ndarray:
        """What one term adds to ``docs`` holding it ``tf`` times."""
        part: np.ndarray = factor * tf * (self.k1 + 1.0) / (tf + self._norm(docs))
        return part

    def _bound(self, docs: np.ndarray, tf: np.ndarray) -> Callable[[], float]:
        return lambda: float(self._part(1.0, tf, docs).max())

    def all(self) -> tuple[np.ndarray, np.ndarray]:
        """Every document's BM25 (0: no term), and the documents above 0 (ascending)."""
        if self._all is None:
            out = np.zeros(self.size, dtype=np.float64)
            for factor, docs, tf in self.terms:
                out[docs] += self._part(factor, tf, docs)
            self._all = out, np.flatnonzero(out)
        return self._all

    def matched(self) -> np.ndarray:
        """The documents holding a query term (ascending): every one with a BM25 above 0.

        Few postings are merged; many are summed into `all`, which finds them.
        """
        if self._all is None and sum(len(docs) for _, docs, _ in self.terms) * 16 < self.size:
            return maxscore.union([docs for _, docs, _ in self.terms])
        return self.all()[1]

    def of(self, docs: np.ndarray) -> np.ndarray:
        """The BM25 of ``docs`` (ascending, unique), with the same bits as `all` gives."""
        if self._all is not None:
            found: np.ndarray = self._all[0][docs]
            return found
        return self._looked_up(docs)

    def _lookup(self, docs: np.ndarray) -> np.ndarray:
        out = np.zeros(len(docs), dtype=np.float64)
        for (factor, _, _), find in zip(self.terms, self._finders, strict=True):
            present, tf = find(docs)
            out[present] += self._part(factor, tf, docs[present])
        return out

    def levels(
        self, value_of: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], factor: float = 1.0
    ) -> list[Callable[[], Level]]:
        """Levels for a top-k search whose values ``value_of`` derives from BM25.

        ``factor``: the most ``value_of`` multiplies a document's BM25 by.
        """
        postings = [docs for _, docs, _ in self.terms]

        def everything() -> Level:
            docs, values = value_of(self.matched())
            return docs, values, 0.0

        return maxscore.levels(postings, self.bounds, value_of, everything, factor)
