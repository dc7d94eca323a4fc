"""Learned: an online logistic model of reuse, trained from its own evictions."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Hashable
from datetime import datetime
from typing import Any

from memcommit.errors import InvalidInput
from memcommit.model import KINDS
from memcommit.tiers import inputs
from memcommit.tiers.candidate import Candidate, frequency_level
from memcommit.tiers.policies.ranked import Ranked

#: Feature names, in the order of the weights (one per kind follows these).
FEATURES = ("bias", "recency", "frequency", "importance", "age")
_KIND_INDEX = {kind: i for i, kind in enumerate(KINDS)}
_PRIOR = (0.0, -1.0, 2.0, 1.0, 0.0)


class Learned(Ranked):
    """Evicts the memory with the lowest predicted chance of reuse.

    Features: recency (log ticks since the last use), frequency level, importance,
    age (log ticks between first and last use, coarse) and kind. Each eviction is
    a training example: a memory paged back in within ``window`` ticks was a
    mistake (label 1), one not used again within it was right (label 0). Updates
    are plain SGD in event order, so the same touches give the same model.
    ``window`` defaults to twice the number of candidates at the last eviction.
    """

    both_ends = True  # a negative weight on recency would make the newest score lowest

    def __init__(self, learning_rate: float = 0.1, window: int | None = None) -> None:
        self.learning_rate = inputs.number("learning_rate", learning_rate, above_zero=True)
        if window is not None and (
            isinstance(window, bool) or not isinstance(window, int) or window < 1
        ):
            raise InvalidInput("window", window, "must be an integer of at least 1, or None")
        self.window = window
        self.weights = [*_PRIOR, *([0.0] * (len(KINDS) + 1))]
        self.examples = 0
        self._horizon = window or 1
        self._evicted: OrderedDict[str, tuple[list[float], int]] = OrderedDict()

    @staticmethod
    def _age_level(candidate: Candidate) -> int:
        first, last = candidate.first_tick, candidate.last_tick
        span = last - first if first is not None and last is not None else 0
        return span.bit_length() // 3

    def features(self, candidate: Candidate) -> list[float]:
        """The feature vector of one candidate (bias first, kind one-hot last)."""
        x = [
            1.0,
            math.log2(1 + max(candidate.tick - candidate.recent, 0)) / 20.0,
            frequency_level(candidate.uses) / 20.0,
            float(candidate.memory.importance),
            self._age_level(candidate) / 8.0,
        ]
        kinds = [0.0] * (len(KINDS) + 1)
        kinds[_KIND_INDEX.get(candidate.memory.kind, len(KINDS))] = 1.0
        return x + kinds

    def group(self, candidate: Candidate) -> Hashable:
        m = candidate.memory
        return (frequency_level(candidate.uses), self._age_level(candidate), m.importance, m.kind)

    def score(self, candidate: Candidate, context: Any) -> float:
        """The logit of the predicted reuse (orders like the probability)."""
        return sum(w * v for w, v in zip(self.weights, self.features(candidate), strict=True))

    def prepare(self, size: int) -> None:
        if self.window is None:
            self._horizon = 2 * size

    def _train(self, x: list[float], label: float) -> None:
        z = sum(w * v for w, v in zip(self.weights, x, strict=True))
        p = 1.0 / (1.0 + math.exp(-z)) if z > -60 else 0.0
        step = self.learning_rate * (label - p)
        self.weights = [w + step * v for w, v in zip(self.weights, x, strict=True)]
        self.examples += 1

    def _expire(self, tick: int) -> None:
        """Evictions not reused within the window were right: label 0."""
        evicted = self._evicted
        while evicted:
            key, (x, at) = next(iter(evicted.items()))
            if tick - at <= self._horizon:
                break
            del evicted[key]
            self._train(x, 0.0)

    def on_evict(self, candidate: Candidate, now: datetime | None = None) -> None:
        """Remember the features at eviction; the outcome comes later."""
        self._expire(candidate.tick)
        self._evicted.pop(candidate.id, None)
        self._evicted[candidate.id] = (self.features(candidate), candidate.tick)

    def on_page_in(self, candidate: Candidate, now: datetime | None = None) -> None:
        """A recently evicted memory came back: that eviction was a mistake."""
        self._expire(candidate.tick)
        seen = self._evicted.pop(candidate.id, None)
        if seen is not None:
            self._train(seen[0], 1.0)
