"""Exact TF-IDF cosine of a query against every document of a tenant index.

Only the postings of the query's terms are touched. Query terms are visited in
sorted order, so each document's dot product is summed in the same order no
matter how the index was built; norms come from the index (see index.py).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from memcommit.model import Memory
from memcommit.recall.index.columns import NO_START, to_micros
from memcommit.recall.index.tenant import TenantIndex
from memcommit.recall.index.text import term_counts
from memcommit.recall.scoring import maxscore
from memcommit.recall.scoring.maxscore import Level
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


class CosineSearch:
    """One query's exact TF-IDF cosines against one state of a tenant index, on demand.

    Built under the index lock, it keeps the query terms' postings, weights and
    a norm reader, so cosines computed later (an explanation read after more
    commits) are those of the moment it was built. `all` sums every posting;
    `of` scores chosen documents by lookup, with the same arithmetic and in the
    same order, so both give the same bits. `levels` serves a top-k search
    (`memcommit.recall.scoring.maxscore`).
    """

    def __init__(self, index: TenantIndex, terms: Counter[str]) -> None:
        n_docs = index.n_docs
        self.size = index.alive.size
        squares = 0.0
        self.terms: list[tuple[float, np.ndarray, np.ndarray]] = []  # sorted by term text
        bounds: list[float] = []
        self._finders: list[Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]] = []
        for term in sorted(terms):
            tid = index.vocabulary.get(term)
            term_idf = idf(n_docs, index.doc_frequency(tid))
            query_weight = tf_weight(terms[term]) * term_idf
            squares += query_weight**2
            if tid is None:
                continue
            docs, tfs = index.postings(tid)
            if len(docs):
                self.terms.append((query_weight * term_idf, docs, tfs))
                self._finders.append(
                    maxscore.finder(index.memo, ("counts", tid), docs, tfs, self.size)
                )
                bounds.append(query_weight * term_idf * index.term_bound(tid))
        self.length = math.sqrt(squares)
        self.bounds = [bound / self.length for bound in bounds] if self.length else bounds
        self.norms = index.norm_reader()
        self._all: np.ndarray | None = None
        self._hits = np.zeros(0, dtype=np.int64)  # where `all` is not 0
        self._looked_up = maxscore.Memo(self._lookup)

    def all(self) -> np.ndarray:
        """The cosine of every document of the index state (0 where no term is shared)."""
        if self._all is None:
            dot = np.zeros(self.size, dtype=np.float64)
            for weight, docs, tfs in self.terms:
                dot[docs] += weight * tf_weights(tfs)
            hits = np.flatnonzero(dot)
            if len(hits):
                dot[hits] /= self.length * self.norms(hits)
            self._all, self._hits = dot, hits
        return self._all

    def of(self, docs: np.ndarray) -> np.ndarray:
        """The cosines of ``docs`` (ascending, unique), with the same bits as `all` gives."""
        if self._all is not None:
            found: np.ndarray = self._all[docs]
            return found
        return self._looked_up(docs)

    def _lookup(self, docs: np.ndarray) -> np.ndarray:
        dot = np.zeros(len(docs), dtype=np.float64)
        for (weight, _, _), find in zip(self.terms, self._finders, strict=True):
            present, tfs = find(docs)
            dot[present] += weight * tf_weights(tfs)
        hits = np.flatnonzero(dot)
        if len(hits):
            dot[hits] /= self.length * self.norms(docs[hits])
        return dot

    def levels(self) -> list[Callable[[], Level]]:
        """Ever wider candidate sets for a top-k search (`memcommit.recall.scoring.maxscore`)."""
        postings = [docs for _, docs, _ in self.terms]
        return maxscore.levels(postings, self.bounds, self._candidates, self._everything)

    def _candidates(self, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return docs, self.of(docs)

    def _everything(self) -> Level:
        if self._all is None and sum(len(docs) for _, docs, _ in self.terms) * 16 < self.size:
            docs = maxscore.union([docs for _, docs, _ in self.terms])  # few: no array of all
            return docs, self.of(docs), 0.0
        values = self.all()
        return self._hits, values[self._hits], 0.0


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
