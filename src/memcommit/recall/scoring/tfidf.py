"""The seed's ranking arithmetic: log tf, smoothed idf, cosine, recency blend.

Scalar functions for one memory; the numpy versions for many are the
index's statistics (`memcommit.recall.index.statistics`: `tf_weights`,
imported here, and ``idfs``). Both compute the same formulas, and the index sums terms in a
fixed order (sorted by term) so a score never depends on the order memories
were stored in.

    tf weight  = 1 + ln(count)                      (0 when the term is absent)
    idf        = ln((1 + N) / (1 + df)) + 1         (N memories of the tenant)
    cosine     = q · d / (|q| |d|)                  (0 when either vector is 0)
    recency    = 2 ** (-age / half_life)
    blended    = (1 - w) · cosine + w · recency
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from memcommit.recall.index.statistics import tf_weights as tf_weights


def tf_weight(count: int) -> float:
    """Log term frequency: ``1 + ln(count)``, 0 for an absent term."""
    return 1.0 + math.log(count) if count > 0 else 0.0


def idf(n_docs: int, df: int) -> float:
    """Smoothed inverse document frequency: ``ln((1 + N) / (1 + df)) + 1``."""
    return math.log((1 + n_docs) / (1 + df)) + 1.0


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
