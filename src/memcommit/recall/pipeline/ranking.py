"""The ranked memories of one recall, scored and filtered only as deep as packing reads.

A query can match a third of a tenant (every memory with "the"), yet packing
ten memories reads ten. When the ranking is known before the filters run (the
built-in scorers at recency weight 0), a scorer hands over its matches in
levels: each a set of candidates with their exact values and a ceiling that
no document outside the set exceeds, the last holding every match. The best
candidates are filtered first, a chunk at a time, until enough pass; a
level is widened only while its ceiling could still beat the best that
passed. The result is exact: a document never read scores strictly below
every document returned.

``Ranking.top(take)`` gives the ``take`` best that pass (and every one tied
with the last), in poolsplit's order: score descending, then creation time,
then id. ``Ranking.rest(seen)`` gives every other ranked memory.

A scorer may scale its scores by the best passing value, known only once the
filters found it (`Ranking.best`): `Ranking.scaled` then ranks by the scaled
scores (an order-keeping function), reusing what was filtered.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

from memcommit.recall.index.snapshot import Snapshot
from memcommit.recall.scoring.maxscore import Level

#: Filters a chunk of documents: True where a document passes every filter.
Passes = Callable[[np.ndarray], np.ndarray]
#: Scales values into scores, keeping their order.
Scale = Callable[[np.ndarray], np.ndarray]


def exhaustive(docs: np.ndarray, values: np.ndarray) -> list[Callable[[], Level]]:
    """One level holding every match: for a scorer that values everything at once."""
    return [lambda: (docs, values, 0.0)]


class Ranking:
    """Matched documents ranked by value (higher first), widened and filtered on demand.

    ``levels`` are called in turn, each only when the previous one cannot
    decide; ``passes`` is applied to a document at most once, and only when it
    could be in the top. Always-scope and retired documents are never ranked.
    """

    def __init__(
        self, snap: Snapshot, levels: Sequence[Callable[[], Level]], passes: Passes
    ) -> None:
        self.snap, self.passes = snap, passes
        self._levels = list(levels)
        self._scale: Scale | None = None
        self.docs = np.zeros(0, dtype=np.int64)
        self._checked = np.zeros(0, dtype=bool)  # filtered already (by position in docs)
        self._passed = np.zeros(0, dtype=bool)
        self._depth = -1
        self._lock = threading.RLock()  # an explanation may be read from several threads
        self._widen()

    def _widen(self) -> None:
        self._depth += 1
        docs, values, ceiling = self._levels[self._depth]()
        kept = self.snap.alive[docs] & ~self.snap.always[docs]
        docs = docs[kept]
        checked, passed = np.zeros(len(docs), dtype=bool), np.zeros(len(docs), dtype=bool)
        if len(self.docs) and len(docs):  # what the narrower level filtered carries over
            at = np.minimum(np.searchsorted(docs, self.docs), len(docs) - 1)
            same = docs[at] == self.docs
            checked[at[same]], passed[at[same]] = self._checked[same], self._passed[same]
        self.docs, self.raw, self.ceiling = docs, values[kept], ceiling
        self._checked, self._passed = checked, passed
        self._rescale()

    def _rescale(self) -> None:
        scale = self._scale
        self.values = self.raw if scale is None else scale(self.raw)
        self.limit = self.ceiling if scale is None else float(scale(np.array([self.ceiling]))[0])

    @property
    def complete(self) -> bool:
        """True when every match is among the candidates."""
        return self._depth == len(self._levels) - 1

    def scaled(self, scale: Scale) -> None:
        """Rank by ``scale(value)`` from now on (an order-keeping function)."""
        with self._lock:
            self._scale = scale
            self._rescale()

    def _filter(self, positions: np.ndarray) -> np.ndarray:
        """Which of ``positions`` pass the filters (each document filtered once)."""
        fresh = positions[~self._checked[positions]]
        if len(fresh):
            self._passed[fresh] = self.passes(self.docs[fresh])
            self._checked[fresh] = True
        passed: np.ndarray = self._passed[positions]
        return passed

    def _best_positions(self, count: int) -> np.ndarray:
        """Positions of the ``count`` best values, and every one tied with the last of them."""
        n = len(self.docs)
        if count >= n:
            return np.arange(n)
        kth = np.partition(self.values, n - count)[n - count]
        return np.flatnonzero(self.values >= kth)

    def _top_positions(self, take: int) -> np.ndarray:
        """Positions of the ``take`` best passing documents and their ties (any order)."""
        while True:
            count = take
            while True:
                positions = self._best_positions(count)
                passed: np.ndarray = positions[self._filter(positions)]
                if len(passed) >= take or len(positions) == len(self.docs):
                    break
                count *= 4
            if len(passed) > take:  # keep the take best, with their ties
                values = self.values[passed]
                kth = np.partition(values, len(passed) - take)[len(passed) - take]
                passed = passed[values >= kth]
            if self.complete:
                return passed
            if len(passed) >= take and float(self.values[passed].min()) > self.limit:
                return passed  # nothing outside the candidates can reach the last of them
            self._widen()

    def best(self) -> float:
        """The highest value of any passing document (0.0 when none passes)."""
        with self._lock:
            passed = self._top_positions(1)
            return float(self.values[passed].max()) if len(passed) else 0.0

    def top(self, take: int) -> tuple[np.ndarray, np.ndarray]:
        """(documents, scores) of the ``take`` best passing documents and their ties, in order."""
        if take <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        with self._lock:
            passed = self._top_positions(take)
            docs, values = self.docs[passed].tolist(), self.values[passed].tolist()
        created, ids = self.snap.created, self.snap.ids
        times = created[docs].tolist()
        keys = list(zip(values, times, strict=True))
        if len(set(keys)) == len(keys):  # no tie to break by id: ids stay unread
            order = sorted(range(len(docs)), key=lambda p: (-values[p], times[p]))
        else:
            order = sorted(range(len(docs)), key=lambda p: (-values[p], times[p], ids[docs[p]]))
        return (
            np.array([docs[p] for p in order], dtype=np.int64),
            np.array([values[p] for p in order], dtype=np.float64),
        )

    def passing(self) -> tuple[np.ndarray, np.ndarray]:
        """(documents, scores) of every matched document that passes the filters (any order)."""
        with self._lock:
            while not self.complete:
                self._widen()
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
