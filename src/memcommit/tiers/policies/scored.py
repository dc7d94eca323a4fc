"""Scored: a weighted sum of recency, importance and frequency."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

from memcommit.tiers import inputs
from memcommit.tiers.candidate import Candidate, frequency_level
from memcommit.tiers.policies.ranked import Ranked


class Scored(Ranked):
    """``recency·r + importance·i + frequency·f``, each component in [0, 1]; lowest first.

    ``r`` places the last use between the least (0) and most (1) recent
    candidate, ``i`` is the memory's importance, and ``f`` is its frequency level
    over the highest level among the candidates (a log scale of use counts).
    """

    def __init__(
        self, recency: float = 1.0, importance: float = 1.0, frequency: float = 0.5
    ) -> None:
        self.recency = inputs.number("recency", recency)
        self.importance = inputs.number("importance", importance)
        self.frequency = inputs.number("frequency", frequency)

    def context(self, candidates: Iterable[Candidate]) -> tuple[int, int, int]:
        """Least and most recent tick, and the highest frequency level."""
        lo = hi = None
        top = 0
        for c in candidates:
            r = c.recent
            lo = r if lo is None or r < lo else lo
            hi = r if hi is None or r > hi else hi
            top = max(top, frequency_level(c.uses))
        return (lo or 0, hi or 0, top)

    def group(self, candidate: Candidate) -> Hashable:
        return (frequency_level(candidate.uses), candidate.memory.importance)

    def score(self, candidate: Candidate, context: Any) -> float:
        lo, hi, top = context
        r = (candidate.recent - lo) / (hi - lo) if hi > lo else 1.0
        f = frequency_level(candidate.uses) / top if top else 0.0
        return self.recency * r + self.importance * candidate.memory.importance + self.frequency * f
