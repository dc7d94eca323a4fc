"""Exact TF-IDF cosine of a query against every document of a tenant index.

Only the postings of the query's terms are touched. Query terms are visited in
sorted order, so each document's dot product is summed in the same order no
matter how the index was built; norms come from the index (see index.py).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from memcommit.model import Memory
from memcommit.recall.columns import NO_START, to_micros
from memcommit.recall.index import TenantIndex
from memcommit.recall.text import term_counts
from memcommit.recall.tfidf import blend, cosine, idf, recency, tf_weight, tf_weights, weights


def cosines(index: TenantIndex, terms: Counter[str]) -> np.ndarray:
    """The cosine of every document (retired ones included; mask them) against ``terms``."""
    n_docs = index.n_docs
    dot = np.zeros(index.alive.size, dtype=np.float64)
    squares = 0.0
    for term in sorted(terms):
        tid = index.vocabulary.get(term)
        term_idf = idf(n_docs, index.doc_frequency(tid))
        query_weight = tf_weight(terms[term]) * term_idf
        squares += query_weight**2
        if tid is None:
            continue
        docs, tfs = index.postings(tid)
        if len(docs):
            dot[docs] += (query_weight * term_idf) * tf_weights(tfs)
    hits = np.flatnonzero(dot)
    if len(hits):
        dot[hits] /= math.sqrt(squares) * index.norms(hits)
    return dot


@dataclass(frozen=True)
class Query:
    """What a scorer sees of one recall: the text, its terms, the time and the tenant's index."""

    text: str
    terms: Counter[str]
    now: datetime
    recency_weight: float
    half_life: timedelta
    index: TenantIndex

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
