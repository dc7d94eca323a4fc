"""Top-k over sums of per-term scores without reading every posting (MaxScore).

A query's score of a document is a sum over the query's terms. Each term has
a bound: the most it adds to any document. Order the terms by bound, highest
first; the documents holding one of the first j terms are the candidates of
level j, and a document outside them holds only the other terms, so it scores
at most the sum of their bounds: the level's ceiling. When the k-th best
candidate beats the ceiling, no document outside can reach the top k, and the
common terms' long postings are only looked up for the candidates, never
summed over. The last level holds every match (ceiling 0), so the search is
always exact; it only stops early when it may.

A formula that can rank each term's own parts (BM25, whose part of a document
depends on that document alone) adds impact levels: the union of every term's
``n`` highest-part documents, whose ceiling is the sum of each term's
``n + 1``-th highest part (a document outside holds each term at most that
much), for ``n`` = 256, 1,024, 4,096, ... (the threshold algorithm of Fagin et
al. 2001, in blocks). A query of common words only ("as baba") has no level of
terms small enough to read: at a million memories its top 100 summed 0.9 M
documents, 50-110 ms, where the best 1,024 of each term usually decide.
Levels of both kinds are read smallest first.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Sequence

import numpy as np

#: Candidate documents (ascending), their exact values, and the ceiling of every other document.
Level = tuple[np.ndarray, np.ndarray, float]

#: Candidates scored by lookup up to this many postings, or up to a quarter (1 / SHARE) of
#: the query's postings when that is more; beyond, every posting is summed. A query of a
#: rare term and two common ones ("a nazoke baba") otherwise jumps from the rare term's
#: few documents to every match: at a million memories a window of 100 (hybrid recall)
#: then summed 0.1-0.9 M documents, 10-30 ms, where a level of a quarter usually decides.
SMALL = 30_000
SHARE = 4
#: Relative margin on a ceiling, above any rounding in the sum of bounds.
SLACK = 1e-9
#: The first impact level takes each term's this many highest-part documents ...
FIRST_TOP = 256
#: ... and each next one this many times more.
TOP_GROWTH = 4

#: A term's ``n`` highest-part documents (ascending) and the most it adds to any other.
Top = Callable[[int], tuple[np.ndarray, float]]


def levels(
    postings: Sequence[np.ndarray],
    bounds: Sequence[float],
    value_of: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    everything: Callable[[], Level],
    factor: float = 1.0,
    tops: Sequence[Top] | None = None,
) -> list[Callable[[], Level]]:
    """Ever wider levels of candidates, smallest first; the last is ``everything``.

    ``postings`` are each term's documents (ascending) and ``bounds`` what
    the term adds at most; ``value_of(docs)`` scores a level's candidates
    exactly (and may add documents a candidate lends score to). ``factor``
    scales every ceiling: what a sum may be multiplied by afterwards. ``tops``
    (one per term, when the formula ranks parts) give the impact levels.
    """
    order = sorted(range(len(postings)), key=lambda t: -bounds[t])
    found: list[tuple[int, Callable[[], Level]]] = []  # (most candidates, level)
    limit = max(SMALL, sum(len(docs) for docs in postings) // SHARE)
    for j in range(1, len(order)):
        chosen = [postings[t] for t in order[:j]]
        size = sum(len(docs) for docs in chosen)
        if size > limit:
            break
        ceiling = sum(bounds[t] for t in order[j:]) * factor * (1.0 + SLACK)
        found.append((size, functools.partial(_level, chosen, ceiling, value_of)))
    count, longest = FIRST_TOP, max((len(docs) for docs in postings), default=0)
    while tops is not None and count < longest:
        size = sum(min(count, len(docs)) for docs in postings)
        if size > limit:
            break
        found.append((size, functools.partial(_top_level, tops, count, factor, value_of)))
        count *= TOP_GROWTH
    found.sort(key=lambda sized: sized[0])  # (stable: terms before impacts at a size)
    return [level for _, level in found] + [everything]


def _level(
    chosen: list[np.ndarray],
    ceiling: float,
    value_of: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
) -> Level:
    docs, values = value_of(union(chosen))
    return docs, values, ceiling


def _top_level(
    tops: Sequence[Top],
    count: int,
    factor: float,
    value_of: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
) -> Level:
    """Every term's ``count`` highest-part documents; the ceiling: the sum of what each
    term adds at most to a document outside its own ``count``."""
    chosen, below = zip(*(top(count) for top in tops), strict=True)
    docs, values = value_of(union(list(chosen)))
    return docs, values, sum(below) * factor * (1.0 + SLACK)


def union(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """The sorted union of sorted arrays: merged runs, not a hash of every element."""
    if len(arrays) <= 1:
        return arrays[0] if arrays else np.zeros(0, dtype=np.int64)
    merged = np.sort(np.concatenate(arrays), kind="stable")  # a merge of sorted runs
    if not len(merged):
        return merged
    keep = np.empty(len(merged), dtype=bool)
    keep[0] = True
    np.not_equal(merged[1:], merged[:-1], out=keep[1:])
    found: np.ndarray = merged[keep]
    return found


def best(found: Sequence[Callable[[], Level]], count: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``count`` best documents and every one tied with the last, with their values.

    Exact: reads levels until one decides (the last always does).
    """
    *early, last = found
    for level in early:
        docs, values, ceiling = level()
        if len(docs) > count:
            kth = np.partition(values, len(docs) - count)[len(docs) - count]
            if kth > ceiling:
                return docs[values >= kth], values[values >= kth]
    docs, values, _ = last()
    if len(docs) > count:
        kth = np.partition(values, len(docs) - count)[len(docs) - count]
        return docs[values >= kth], values[values >= kth]
    return docs, values


class Memo:
    """Values of documents, each computed at most once: a wider level reuses a narrower one's.

    Kept as sorted arrays of the documents seen, not arrays over the tenant: a
    query at a million memories reads a few thousand. The values are computed by
    the function given at each call, not kept here: a memo held by the object
    whose method computes them makes no reference cycle, so a finished recall's
    arrays are freed at once rather than at the next cyclic garbage collection.
    """

    def __init__(self) -> None:
        #: The documents seen (ascending) and their values: one tuple, replaced whole, so a
        #: thread reading it (an explanation's parts beside a ranking widening) never
        #: sees new documents with old values.
        self._known: tuple[np.ndarray, np.ndarray] = (np.zeros(0, dtype=np.int64), np.zeros(0))

    def __call__(self, docs: np.ndarray, compute: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """The values of ``docs`` (ascending, unique), those not seen yet by ``compute``."""
        known, known_values = self._known
        values = np.empty(len(docs))
        if len(known) and len(docs) > len(known):  # a wider level: place the known in it
            at = np.minimum(np.searchsorted(docs, known), len(docs) - 1)
            hit = docs[at] == known
            seen = np.zeros(len(docs), dtype=bool)
            seen[at[hit]] = True
            values[at[hit]] = known_values[hit]
        elif len(known):
            at = np.minimum(np.searchsorted(known, docs), len(known) - 1)
            seen = known[at] == docs
            values[seen] = known_values[at[seen]]
        else:
            seen = np.zeros(len(docs), dtype=bool)
        fresh = ~seen
        if fresh.any():
            values[fresh] = compute(docs[fresh])
        if int(seen.sum()) == len(known):  # nested levels: docs holds everything seen
            self._known = docs, values
        else:
            merged = union([known, docs])
            merged_values = np.empty(len(merged))
            merged_values[np.searchsorted(merged, known)] = known_values
            merged_values[np.searchsorted(merged, docs)] = values
            self._known = merged, merged_values
        return values


#: A term in more than one document in this many is looked up in a dense array, not bisected.
DENSE = 8


def finder(
    memo: Callable[[Hashable, Callable[[], np.ndarray]], np.ndarray],
    key: Hashable,
    docs: np.ndarray,
    counts: np.ndarray,
    size: int,
) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Looks documents up in one term's postings (``docs`` ascending, ``counts`` > 0).

    Returns, for sorted candidates, where the term is present and its counts
    there. A common term's counts are spread over an array of every document
    (kept by ``memo`` until the index changes), a rare one's bisected.
    """
    if len(docs) * DENSE > size:
        dtype = np.uint16 if counts.dtype == np.uint16 else np.float32  # counts are integers

        def spread() -> np.ndarray:
            dense = np.zeros(size, dtype=dtype)
            dense[docs] = counts
            return dense

        dense = memo(key, spread)

        def spread_find(wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            found = dense[wanted]
            present = found > 0
            return present, found[present].astype(counts.dtype)

        return spread_find

    def bisect_find(wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        at = np.minimum(np.searchsorted(docs, wanted), len(docs) - 1)
        present = docs[at] == wanted
        return present, counts[at[present]]

    return bisect_find
