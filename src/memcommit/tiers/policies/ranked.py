"""Policies that rank candidates by a score: the lowest goes first.

Forgetting, Scored and Learned score each candidate from its use counts,
importance and kind. Their score is monotone in recency among candidates of one
*group* (same frequency level, importance, ...), so the simulator need only
score the oldest (and, for Learned, the newest) member of each group to find
the same victim that scoring every candidate finds.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from datetime import datetime
from typing import Any

from memcommit.tiers.candidate import Candidate


class Ranked:
    """Base of the score-ranked policies: ``victims`` takes the ``n`` lowest keys."""

    #: Whether the newest member of a group may score lowest (the simulator checks both ends).
    both_ends = False

    def prepare(self, size: int) -> None:
        """Told how many candidates there are before each choice (Learned sizes its window)."""

    def context(self, candidates: Iterable[Candidate]) -> Any:
        """Whatever the score needs from the whole candidate set (min/max, ...)."""
        return None

    def group(self, candidate: Candidate) -> Hashable:
        """Candidates of one group are ordered by recency under this policy's score."""
        raise NotImplementedError

    def score(self, candidate: Candidate, context: Any) -> float:
        """Lower is evicted first."""
        raise NotImplementedError

    def key(self, candidate: Candidate, context: Any) -> tuple[float, int, str]:
        """Score, then the least recent, then the id: a total, deterministic order."""
        return (self.score(candidate, context), candidate.recent, candidate.id)

    def victims(
        self, candidates: Sequence[Candidate], n: int, now: datetime | None = None
    ) -> list[Candidate]:
        """The ``n`` candidates with the lowest keys, lowest first."""
        if n <= 0 or not candidates:
            return []
        self.prepare(len(candidates))
        context = self.context(candidates)
        return sorted(candidates, key=lambda c: self.key(c, context))[:n]
