"""Exact TF-IDF cosine of a query against the documents of a tenant index, and the `Query`.

A term adds ``q_t · idf_t · tf_weight(d, t)`` to a document's dot product; the
sum is divided by ``|q| |d|``, with norms from the index (see index/tenant.py).
The search itself is `memcommit.recall.scoring.search`'s.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from memcommit.model import Memory
from memcommit.recall.index.columns import NO_START, to_micros
from memcommit.recall.index.tenant import TenantIndex
from memcommit.recall.index.text import term_counts
from memcommit.recall.scoring.search import Term, TermSearch
from memcommit.recall.scoring.tfidf import (
    blend,
    cosine,
    idf,
    recency,
    tf_weight,
    tf_weights,
    weights,
)


def cosines(index: TenantIndex, terms: Counter[str]) -> np.ndarray:
    """The cosine of every document (retired ones included; mask them) against ``terms``."""
    return CosineSearch(index, terms).all()


class CosineSearch(TermSearch):
    """One query's exact TF-IDF cosines against one state of a tenant index, on demand."""

    def __init__(self, index: TenantIndex, terms: Mapping[str, int]) -> None:
        n_docs = index.n_docs
        squares = 0.0
        self._query: dict[str, tuple[int | None, float]] = {}  # term -> (id, q_t · idf_t)
        for term in sorted(terms):  # |q| counts the terms no memory holds too
            tid = index.vocabulary.get(term)
            term_idf = idf(n_docs, index.doc_frequency(tid))
            query_weight = tf_weight(terms[term]) * term_idf
            squares += query_weight**2
            self._query[term] = tid, query_weight * term_idf
        self.length = math.sqrt(squares)
        self.norms = index.norm_reader()
        super().__init__(index, terms)

    def _term(self, index: TenantIndex, term: str, count: int) -> Term | None:
        tid, weight = self._query[term]
        if tid is None:
            return None
        docs, tfs = index.postings(tid)
        return Term(("counts", tid), weight, docs, tfs)

    def _part(self, weight: float, counts: np.ndarray, docs: np.ndarray) -> np.ndarray:
        part: np.ndarray = weight * tf_weights(counts)
        return part

    def _bound(self, term: Term) -> float:
        """The weight times the term's highest ``tf_weight / |d|``, over ``|q|``."""

        def highest() -> float:
            return float((tf_weights(term.counts) / self.norms(term.docs)).max())

        bound = term.weight * self.memo(("cosine bound", term.key), highest)
        return bound / self.length if self.length else bound

    def _finish(self, sums: np.ndarray, hits: np.ndarray, docs: np.ndarray) -> None:
        sums[hits] /= self.length * self.norms(docs)


@dataclass(frozen=True)
class Query:
    """What a scorer sees of one recall: the text, its terms, the time and the tenant's index."""

    text: str
    terms: Counter[str]
    now: datetime
    recency_weight: float
    half_life: timedelta
    index: TenantIndex

    @functools.cached_property
    def tfidf(self) -> CosineSearch:
        """This query's TF-IDF search, taken the first time it is asked for.

        Recall takes it as it starts, under the index lock: its cosines (a
        scorer's, and the explanation's read later) are those of the state it ranks.
        """
        return CosineSearch(self.index, self.terms)

    @property
    def now_us(self) -> int:
        """``now`` in microseconds since the epoch."""
        return to_micros(self.now, 0)

    def cosine(self, memory: Memory) -> float:
        """The exact TF-IDF cosine of one memory under the tenant's statistics."""
        index = self.index

        def df(term: str) -> int:
            return index.doc_frequency(index.vocabulary.get(term))

        n_docs = index.n_docs
        return cosine(
            weights(self.terms, n_docs, df), weights(term_counts(memory.content), n_docs, df)
        )

    def recency(self, memory: Memory) -> float:
        """``2 ** (-age / half_life)`` of one memory (unknown creation time: age 0)."""
        micros = to_micros(memory.created_at, NO_START)
        age = 0 if micros == NO_START else self.now_us - micros
        return recency(age / 1e6, self.half_life.total_seconds())

    def blend(self, relevance: float, memory: Memory) -> float:
        """``(1 - w) · relevance + w · recency`` for one memory."""
        return blend(relevance, self.recency(memory), self.recency_weight)

    def recencies(self, docs: np.ndarray) -> np.ndarray:
        """``2 ** (-age / half_life)`` of documents of the index."""
        created = self.index.created.data[docs]
        now = self.now_us
        ages = (now - np.where(created == NO_START, now, created)).astype(np.float64) / 1e6
        return np.exp2(-np.maximum(ages, 0.0) / self.half_life.total_seconds())
