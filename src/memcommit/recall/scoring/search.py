"""One query's search over postings, for any formula that sums per-term parts: written once.

A formula is a small subclass that supplies, for each query term, its
postings and weight (`_term`), what the term adds to a document holding it
(`_part`), the most it adds to any document (`_bound`) and, if it needs one,
a step per document after the sum (`_finish`: the cosine divides by the
norms). The way Lucene's ``Similarity`` plugs into one search, the rest is
here: every document's score by summing the postings (`all`), chosen
documents' scores by lookup with the same arithmetic in the same term order,
so both give the same bits (`of`), the documents with a score (`matched`),
and levels for a top-k search that skips common terms' long postings
(`levels`, `memcommit.recall.scoring.maxscore`). Terms are visited sorted by
text, so a score never depends on the order the index was built in.

Built under the index lock, a search keeps what it reads of that state of the
index (postings, statistics, norms), so scores computed later (an explanation
read after more commits) are those of the moment it was built. Bounds and
lookup tables are computed when first needed (many recalls never rank by a
given formula) and cached in the index only while it is unchanged.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from memcommit.recall.index.tenant import TenantIndex
from memcommit.recall.scoring import maxscore
from memcommit.recall.scoring.maxscore import Level

_T = TypeVar("_T")

#: Scores a level's candidates: (documents, their values); may add documents they lend to.
ValueOf = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Term:
    """One query term as a search reads it: its postings at the search's moment, and its weight."""

    key: Hashable  # names these postings among what the index caches
    weight: float
    docs: np.ndarray  # ascending
    counts: np.ndarray  # > 0, one per document


class TermSearch(ABC):
    """A sum over the query's terms of each term's part, for every or chosen documents."""

    def __init__(self, index: TenantIndex, terms: Mapping[str, int]) -> None:
        self.size = index.alive.size
        self.memo = _while_unchanged(index)
        self.terms: list[Term] = []  # sorted by term text; those with postings only
        for term in sorted(terms):
            found = self._term(index, term, terms[term])
            if found is not None and len(found.docs):
                self.terms.append(found)
        self._bounds: list[float] | None = None
        self._finders: list[Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]] | None = None
        self._all: tuple[np.ndarray, np.ndarray] | None = None
        self._looked_up = maxscore.Memo()

    # ── what a formula supplies ─────────────────────────────────────────────

    @abstractmethod
    def _term(self, index: TenantIndex, term: str, count: int) -> Term | None:
        """The postings and weight of a query term said ``count`` times (None: not indexed)."""

    @abstractmethod
    def _part(self, weight: float, counts: np.ndarray, docs: np.ndarray) -> np.ndarray:
        """What a term of ``weight`` adds to ``docs``, which hold it ``counts`` times."""

    @abstractmethod
    def _bound(self, term: Term) -> float:
        """The most ``term`` adds to any document's (finished) score."""

    def _tops(self) -> list[maxscore.Top] | None:
        """Per term, its ``n`` documents of highest part (ascending) and the most it adds to
        any other document's finished score, for the impact levels; None (the default): a
        formula whose finished score is not a sum of parts each document has alone."""
        return None

    def _finish(self, sums: np.ndarray, hits: np.ndarray, docs: np.ndarray) -> None:
        """Turn the sums at ``hits`` (those of ``docs``) into scores, in place; sums by default."""
        return  # a plain sum is the score

    # ── the search ──────────────────────────────────────────────────────────

    @property
    def bounds(self) -> list[float]:
        """What each term adds at most to any document (computed when first asked)."""
        if self._bounds is None:
            self._bounds = [self._bound(term) for term in self.terms]
        return self._bounds

    def all(self) -> np.ndarray:
        """The score of every document of the index state (0 where no term is held)."""
        return self._sums()[0]

    def _sums(self) -> tuple[np.ndarray, np.ndarray]:
        """Every document's score, summed over the postings, and where it is not 0."""
        if self._all is None:
            out = np.zeros(self.size, dtype=np.float64)
            for term in self.terms:
                out[term.docs] += self._part(term.weight, term.counts, term.docs)
            hits = np.flatnonzero(out)
            if len(hits):
                self._finish(out, hits, hits)
            self._all = out, hits
        return self._all

    def matched(self) -> np.ndarray:
        """The documents holding a query term (ascending): every one with a score.

        Few postings are merged; many are summed into `all`, which finds them.
        """
        if self._all is None and sum(len(term.docs) for term in self.terms) * 16 < self.size:
            return maxscore.union([term.docs for term in self.terms])
        return self._sums()[1]

    def of(self, docs: np.ndarray) -> np.ndarray:
        """The scores of ``docs`` (ascending, unique), with the same bits as `all` gives."""
        if self._all is not None:
            found: np.ndarray = self._all[0][docs]
            return found
        return self._looked_up(docs, self._lookup)

    def _lookup(self, docs: np.ndarray) -> np.ndarray:
        if self._finders is None:
            self._finders = [
                maxscore.finder(self.memo, term.key, term.docs, term.counts, self.size)
                for term in self.terms
            ]
        out = np.zeros(len(docs), dtype=np.float64)
        for term, find in zip(self.terms, self._finders, strict=True):
            present, counts = find(docs)
            out[present] += self._part(term.weight, counts, docs[present])
        hits = np.flatnonzero(out)
        if len(hits):
            self._finish(out, hits, docs[hits])
        return out

    def levels(
        self, value_of: ValueOf | None = None, factor: float = 1.0
    ) -> list[Callable[[], Level]]:
        """Ever wider candidate sets for a top-k search (`memcommit.recall.scoring.maxscore`).

        ``value_of`` scores candidates (by default: their scores here); ``factor``
        is the most it multiplies a document's score by.
        """
        values: ValueOf = value_of or self._candidates

        def everything() -> Level:
            docs, found = values(self.matched())
            return docs, found, 0.0

        postings = [term.docs for term in self.terms]
        return maxscore.levels(postings, self.bounds, values, everything, factor, self._tops())

    def _candidates(self, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return docs, self.of(docs)


def _while_unchanged(index: TenantIndex) -> Callable[[Hashable, Callable[[], _T]], _T]:
    """``index.memo`` while the index is as it is now; afterwards, computed and not kept.

    What a search derives from its postings then belongs to an older state, and
    must neither read nor fill the cache of the newer one.
    """
    generation = index.generation

    def memo(key: Hashable, compute: Callable[[], _T]) -> _T:
        with index.lock:
            if index.generation == generation:
                return index.memo(key, compute)
        return compute()

    return memo
