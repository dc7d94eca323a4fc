"""The ranked memories of one recall, filtered only as deep as packing reads.

A query can match a third of a tenant (every memory with "the"), yet packing
ten memories reads ten. When the ranking is known before the filters run (the
built-in scorers at recency weight 0), the filters are applied to the best
matches first, a chunk at a time, until enough pass; the rest is filtered only
if an explanation asks for it. The result is exact: a memory outside the
chunks read scores strictly below every memory inside them.

``Ranking.top(take)`` gives the ``take`` best that pass (and every one tied
with the last), in poolsplit's order: score descending, then creation time,
then id. ``Ranking.rest(seen)`` gives every other ranked memory.

A scorer may scale its scores by the best passing one, known only once the
filters found it (`Ranking.best`); `Ranking.rescored` then ranks by the scaled
scores, reusing what was filtered.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from memcommit.recall.index import Snapshot


#: Filters a chunk of documents: True where a document passes every filter.
Passes = Callable[[np.ndarray], np.ndarray]


class Ranking:
    """Matched documents ranked by their scores (higher first), filtered on demand.

    ``passes`` is applied to a document at most once, and only when it could
    be in the top.
    """

    def __init__(self, snap: Snapshot, docs: np.ndarray, scores: np.ndarray, passes: Passes):
        self.snap, self.docs, self.values, self.passes = snap, docs, scores, passes
        self._checked = np.zeros(len(docs), dtype=bool)  # filtered already
        self._passed = np.zeros(len(docs), dtype=bool)

    def rescored(self, scores: np.ndarray) -> Ranking:
        """The same documents ranked by ``scores``, sharing what was filtered already."""
        ranking = Ranking(self.snap, self.docs, scores, self.passes)
        ranking._checked, ranking._passed = self._checked, self._passed
        return ranking

    def _filter(self, positions: np.ndarray) -> np.ndarray:
        """Which of ``positions`` pass the filters (each position filtered once)."""
        fresh = positions[~self._checked[positions]]
        if len(fresh):
            self._passed[fresh] = self.passes(self.docs[fresh])
            self._checked[fresh] = True
        passed: np.ndarray = self._passed[positions]
        return passed

    def _best_positions(self, count: int) -> np.ndarray:
        """Positions of the ``count`` best scores, and every one tied with the last of them."""
        n = len(self.docs)
        if count >= n:
            return np.arange(n)
        kth = np.partition(self.values, n - count)[n - count]
        return np.flatnonzero(self.values >= kth)

    def _top_positions(self, take: int) -> np.ndarray:
        """Positions of the ``take`` best passing documents and their ties (any order)."""
        count = take
        while True:
            positions = self._best_positions(count)
            passed = positions[self._filter(positions)]
            if len(passed) >= take or len(positions) == len(self.docs):
                break
            count *= 4
        if len(passed) > take:  # keep the take best, with their ties
            values = self.values[passed]
            kth = np.partition(values, len(passed) - take)[len(passed) - take]
            passed = passed[values >= kth]
        return passed

    def best(self) -> float:
        """The highest value of any passing document (0.0 when none passes)."""
        passed = self._top_positions(1)
        return float(self.values[passed].max()) if len(passed) else 0.0

    def top(self, take: int) -> tuple[np.ndarray, np.ndarray]:
        """(documents, scores) of the ``take`` best passing documents and their ties, in order."""
        if take <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        passed = self._top_positions(take)
        docs, values = self.docs[passed].tolist(), self.values[passed].tolist()
        created, ids = self.snap.created, self.snap.ids
        order = sorted(
            range(len(docs)), key=lambda p: (-values[p], int(created[docs[p]]), ids[docs[p]])
        )
        return np.array([docs[p] for p in order], dtype=np.int64), np.array(
            [values[p] for p in order]
        )

    def passing(self) -> tuple[np.ndarray, np.ndarray]:
        """(documents, scores) of every matched document that passes the filters (any order)."""
        everything = np.arange(len(self.docs))
        kept = everything[self._filter(everything)]
        return self.docs[kept], self.values[kept]

    def rest(self, seen: np.ndarray) -> np.ndarray:
        """Every passing document not in ``seen`` (ranked below all of them), in no order."""
        docs, _ = self.passing()
        return docs[~np.isin(docs, seen)].astype(np.int64)

    def full_scores(self) -> np.ndarray:
        """The score of every document of the snapshot that passes and matched; NaN elsewhere."""
        out = np.full(self.snap.size, np.nan)
        docs, scores = self.passing()
        out[docs] = scores
        return out
