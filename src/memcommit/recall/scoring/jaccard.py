"""Jaccard similarity of a query's terms and a memory's: ``|q ∩ d| / |q ∪ d|``.

Terms are distinct (how often a word is said does not count), as the index
tokenizes them; ``|q ∪ d| = |q| + |d| - |q ∩ d|``, where ``|q|`` counts query
terms no memory holds. Each shared term adds 1 to the sum; `_finish` divides.
Since ``|q ∪ d| >= |q|``, a term adds at most ``1 / |q|``: MaxScore's bound.
Blended with recency like the seed (`memcommit.recall.scoring.scorers.SearchScorer`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from memcommit.recall.index.tenant import TenantIndex
from memcommit.recall.scoring.cosine import Query
from memcommit.recall.scoring.scorers import SearchScorer
from memcommit.recall.scoring.search import Term, TermSearch


class JaccardSearch(TermSearch):
    """Shared distinct terms over the union of the query's and each document's."""

    def __init__(self, index: TenantIndex, terms: Mapping[str, int]) -> None:
        self.sizes = index.lengths()[0]  # distinct terms of each document
        self.query_size = len(terms)
        super().__init__(index, terms)

    def _term(self, index: TenantIndex, term: str, count: int) -> Term | None:
        tid = index.vocabulary.get(term)
        if tid is None:
            return None
        docs, counts = index.postings(tid)
        return Term(("counts", tid), 1.0, docs, counts)

    def _part(self, weight: float, counts: np.ndarray, docs: np.ndarray) -> np.ndarray:
        return np.full(len(docs), weight)

    def _bound(self, term: Term) -> float:
        return term.weight / self.query_size

    def _finish(self, sums: np.ndarray, hits: np.ndarray, docs: np.ndarray) -> None:
        shared = sums[hits]
        sums[hits] = shared / (self.query_size + self.sizes[docs] - shared)


class Jaccard(SearchScorer):
    """``"jaccard"``: Jaccard similarity of the terms, blended with recency."""

    name = "jaccard"

    def search(self, query: Query) -> TermSearch:
        """A Jaccard search of the query's terms."""
        return JaccardSearch(query.index, query.terms)
