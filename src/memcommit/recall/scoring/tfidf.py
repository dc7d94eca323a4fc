"""The seed's ranking arithmetic: log tf, smoothed idf, cosine, recency blend.

Scalar functions for one memory and numpy versions for many; both compute the
same formulas, and the index sums terms in a fixed order (sorted by term) so a
score never depends on the order memories were stored in.

    tf weight  = 1 + ln(count)                      (0 when the term is absent)
    idf        = ln((1 + N) / (1 + df)) + 1         (N memories of the tenant)
    cosine     = q · d / (|q| |d|)                  (0 when either vector is 0)
    recency    = 2 ** (-age / half_life)
    blended    = (1 - w) · cosine + w · recency
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np


def tf_weight(count: int) -> float:
    """Log term frequency: ``1 + ln(count)``, 0 for an absent term."""
    return 1.0 + math.log(count) if count > 0 else 0.0


def idf(n_docs: int, df: int) -> float:
    """Smoothed inverse document frequency: ``ln((1 + N) / (1 + df)) + 1``."""
    return math.log((1 + n_docs) / (1 + df)) + 1.0


_TF_WEIGHTS = np.concatenate(([0.0], 1.0 + np.log(np.arange(1, 2**16, dtype=np.float64))))


def tf_weights(counts: np.ndarray) -> np.ndarray:
    """:func:`tf_weight` for an array of counts below 2**16 (the index caps them there).

    A table lookup: a count always gets the same bits, wherever it sits in an array.
    """
    weights: np.ndarray = _TF_WEIGHTS[counts]
    return weights


def idfs(n_docs: int, df: np.ndarray) -> np.ndarray:
    """:func:`idf` for an array of document frequencies."""
    return np.log((1.0 + n_docs) / (1.0 + df.astype(np.float64))) + 1.0


def weights(
    counts: Mapping[str, int], n_docs: int, df_of: Callable[[str], int]
) -> dict[str, float]:
    """The TF-IDF vector of one text's term counts, in sorted term order."""
    return {term: tf_weight(counts[term]) * idf(n_docs, df_of(term)) for term in sorted(counts)}


def norm(vector: Mapping[str, float]) -> float:
    """Euclidean length, summed in sorted term order."""
    return math.sqrt(sum(vector[term] ** 2 for term in sorted(vector)))


def cosine(query: Mapping[str, float], doc: Mapping[str, float]) -> float:
    """``q · d / (|q| |d|)``; 0 when the vectors share no term or one is empty."""
    dot = sum(query[term] * doc[term] for term in sorted(query) if term in doc)
    if dot == 0.0:
        return 0.0
    return dot / (norm(query) * norm(doc))


def recency(age_seconds: float, half_life_seconds: float) -> float:
    """``2 ** (-age / half_life)``; a memory from the future counts as age 0."""
    weight: float = 2.0 ** (-max(0.0, age_seconds) / half_life_seconds)
    return weight


def blend(cos: float, rec: float, weight: float) -> float:
    """``(1 - w) · cosine + w · recency``."""
    return (1.0 - weight) * cos + weight * rec
