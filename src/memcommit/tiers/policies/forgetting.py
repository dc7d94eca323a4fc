"""Forgetting: an Ebbinghaus curve, as in MemoryBank."""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

from memcommit.tiers import inputs
from memcommit.tiers.candidate import Candidate, frequency_level
from memcommit.tiers.policies.ranked import Ranked


class Forgetting(Ranked):
    """Retention ``R = exp(-t / S)``: the memory that has faded most goes first.

    ``t`` is the number of ticks since the last use; the strength
    ``S = scale · (1 + level) · (1 + importance)`` grows with each doubling of
    uses (the frequency level) and with importance, so what is used often or
    marked important fades slowest.
    """

    def __init__(self, scale: float = 64.0) -> None:
        self.scale = inputs.number("scale", scale, above_zero=True)

    def strength(self, candidate: Candidate) -> float:
        """S, in ticks."""
        level = frequency_level(candidate.uses)
        return self.scale * (1 + level) * (1.0 + candidate.memory.importance)

    def retention(self, candidate: Candidate) -> float:
        """R in (0, 1]: 1 right after a use."""
        return math.exp(self.score(candidate, None))

    def group(self, candidate: Candidate) -> Hashable:
        return (frequency_level(candidate.uses), candidate.memory.importance)

    def score(self, candidate: Candidate, context: Any) -> float:
        """log R, which orders like R but never underflows to a tie at 0."""
        return -(candidate.tick - candidate.recent) / self.strength(candidate)
