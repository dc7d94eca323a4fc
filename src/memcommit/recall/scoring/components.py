"""The parts of one score, kept per memory so a row can say why it ranked where it did.

A scorer that explains itself returns, beside its scores, a `Components`: the
documents it gave any relevance and, for each named part, one value per
document (aligned arrays, documents ascending). `Row.components` reads one
document's parts as a plain dict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Components:
    """Named per-document parts of a score, over ``docs`` (ascending index documents)."""

    docs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    values: dict[str, np.ndarray] = field(default_factory=dict)

    def of(self, doc: int) -> dict[str, float] | None:
        """The parts of one document's score, or None when it has none.

        A part that is NaN for this document (a dense cosine of a memory without a
        vector, say) is left out.
        """
        position = int(np.searchsorted(self.docs, doc))
        if position >= len(self.docs) or self.docs[position] != doc:
            return None
        found = {name: float(values[position]) for name, values in self.values.items()}
        return {name: value for name, value in found.items() if not math.isnan(value)}
