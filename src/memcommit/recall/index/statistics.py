"""The term statistics the index keeps: log-tf weights, smoothed idfs and TF-IDF document norms.

    tf weight  = 1 + ln(count)                      (0 when the term is absent)
    idf        = ln((1 + N) / (1 + df)) + 1         (N memories of the tenant)
    |d|        = sqrt(sum over d's terms of (tf weight * idf) ** 2)

These are the array forms of the seed's formulas (`memcommit.recall.scoring.tfidf`
has them for one memory, and imports these); they live here because the
index computes, caches and persists document norms.

Document norms depend on every idf, and every idf on the document count N, so
any change makes every norm stale. Exact cosine needs the norm only of the
documents a query shares a term with, so norms are computed for those (each
document's terms summed in sorted term order, the same arithmetic for one
document or all) and kept until the statistics change; once queries have
summed half of all postings since the last change, all are computed in one
vectorized pass (`Norms`). A change therefore costs the next query the norms
of its own hits, not a pass over the whole tenant.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from memcommit.recall.index.postings import Postings, gathered, spans
from memcommit.recall.index.sections import Section

_TF_WEIGHTS = np.concatenate(([0.0], 1.0 + np.log(np.arange(1, 2**16, dtype=np.float64))))


def tf_weights(counts: np.ndarray) -> np.ndarray:
    """``1 + ln(count)`` (0 for 0) of an array of counts below 2**16 (the index caps them there).

    A table lookup: a count always gets the same bits, wherever it sits in an array.
    """
    weights: np.ndarray = _TF_WEIGHTS[counts]
    return weights


def idfs(n_docs: int, df: np.ndarray) -> np.ndarray:
    """``ln((1 + N) / (1 + df)) + 1`` of an array of document frequencies."""
    return np.log((1.0 + n_docs) / (1.0 + df.astype(np.float64))) + 1.0


def norm_sums(
    starts: np.ndarray, terms: np.ndarray, tfs: np.ndarray, idf: np.ndarray, docs: np.ndarray
) -> np.ndarray:
    """|d| of ``docs`` from forward lists, each summed over its sorted terms.

    The terms of ``docs`` are gathered into one contiguous array and summed
    per document, so a norm has the same bits whichever documents it is
    computed with.
    """
    first, lengths = spans(starts, len(terms), docs)
    entries, firsts = gathered(first, lengths)
    out = np.zeros(len(docs), dtype=np.float64)
    if not len(entries):
        return out
    weights = tf_weights(tfs[entries])
    weights *= idf[terms[entries]]
    weights *= weights
    nonempty = lengths > 0
    out[nonempty] = np.add.reduceat(weights, firsts[nonempty])
    return np.sqrt(out)


class Norms:
    """|d| of one tenant's documents under one state of its statistics, computed where asked."""

    def __init__(self) -> None:
        self.values = np.zeros(0)  # NaN where not computed under the current statistics
        self.generation = -1  # the index state they belong to
        self.idf = np.zeros(0)
        self._work = 0  # postings summed for norms since the statistics changed
        self._complete = False

    def of(self, docs: np.ndarray, generation: int, n_docs: int, terms: Postings) -> np.ndarray:
        """|d| of ``docs`` in index state ``generation`` (N: ``n_docs``), computing the unknown."""
        if self.generation != generation:
            self.values = np.full(terms.size, np.nan)
            self.generation = generation
            self._work = 0
            self._complete = False
            self.idf = idfs(n_docs, terms.frequencies())
        norms = self.values
        if self._complete:
            known: np.ndarray = norms[docs]
            return known
        missing = docs[np.isnan(norms[docs])]
        if len(missing):
            self._work += int(terms.spans(missing)[1].sum())
            forward = terms.fwd_start.view(), terms.fwd_terms.view(), terms.fwd_tf.view()
            if 2 * self._work > terms.fwd_terms.size:  # one pass is cheaper now
                norms[:] = norm_sums(*forward, self.idf, np.arange(terms.size))
                self._complete = True
            else:
                norms[missing] = norm_sums(*forward, self.idf, missing)
        found: np.ndarray = norms[docs]
        return found

    def nbytes(self) -> int:
        """The norms and idfs held for the current statistics."""
        return int(self.values.nbytes) + int(self.idf.nbytes)

    def adopt(self, values: np.ndarray, generation: int, n_docs: int, terms: Postings) -> None:
        """Every norm of state ``generation`` at once (a snapshot's)."""
        self.values, self.generation, self._complete = values, generation, True
        self.idf = idfs(n_docs, terms.frequencies())

    def frozen(
        self, forward: tuple[np.ndarray | Section, ...]
    ) -> Callable[[np.ndarray], np.ndarray]:
        """|d| under the statistics of now, from the norms known now and ``forward`` lists.

        For reads after the index changed: the norms not known yet are summed
        from the forward lists as they were (`Postings.forward`) with the idfs of now.
        """
        idf, known = self.idf, self.values

        def read(docs: np.ndarray) -> np.ndarray:
            found: np.ndarray = known[docs].copy()
            missing = np.isnan(found)
            starts, terms, tfs = (a.whole() if isinstance(a, Section) else a for a in forward)
            found[missing] = norm_sums(starts, terms, tfs, idf, docs[missing])
            return found

        return read
