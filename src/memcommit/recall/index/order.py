"""Orders of an index's documents that break ties by memory id: birth order and session links.

Both sort in numpy first (by time, and commit) and order by id in Python only
the few documents that tie (one commit's memories share an instant), so ids
are decoded only for those.
"""

from __future__ import annotations

import numpy as np

from memcommit.recall.index.blobs import DocIds


def order_ties_by_id(ids: DocIds, docs: np.ndarray, same: np.ndarray) -> None:
    """Sort, in place and by id, each run of ``docs`` that ``same`` marks as tied.

    ``same[i]`` says ``docs[i]`` and ``docs[i + 1]`` tie.
    """
    edges = np.diff(np.concatenate(([0], same.astype(np.int8), [0])))
    key = ids.sort_key()
    for first, last in zip(
        np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist(), strict=True
    ):
        docs[first : last + 1] = sorted(docs[first : last + 1].tolist(), key=key)


def _born(created: np.ndarray, ids: DocIds, docs: np.ndarray) -> np.ndarray:
    """``docs`` in (creation time, id) order."""
    order = docs[np.argsort(created[docs], kind="stable")]
    bounds = np.flatnonzero(np.diff(created[order])) + 1
    firsts = np.concatenate(([0], bounds))
    lasts = np.concatenate((bounds, [len(docs)]))
    ties = lasts - firsts > 1
    key = ids.sort_key()
    for first, last in zip(firsts[ties].tolist(), lasts[ties].tolist(), strict=True):
        order[first:last] = sorted(order[first:last].tolist(), key=key)
    return order


def birth_rank(created: np.ndarray, ids: DocIds) -> np.ndarray:
    """Each document's position in (creation time, id) order, the tie-break of every ranking."""
    rank = np.empty(len(created), dtype=np.int64)
    rank[_born(created, ids, np.arange(len(created)))] = np.arange(len(created))
    return rank


def birth_order(created: np.ndarray, ids: DocIds, docs: np.ndarray) -> np.ndarray:
    """Each of ``docs``' (distinct) position among them in `birth_rank`'s order.

    The same order at the cost of sorting ``docs`` only: a ranking needs the
    tie-break of its candidates, not of every document.
    """
    sorter = np.argsort(docs, kind="stable")
    where = sorter[np.searchsorted(docs, _born(created, ids, docs), sorter=sorter)]
    rank = np.empty(len(docs), dtype=np.int64)
    rank[where] = np.arange(len(docs))
    return rank


def session_links(
    docs: np.ndarray,
    session: np.ndarray,
    created: np.ndarray,
    commit: np.ndarray,
    ids: DocIds,
    size: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Each of ``size`` documents' previous and next of ``docs`` in its session (-1: none).

    ``docs`` are the documents to link (current, with a session); ``session``,
    ``created`` and ``commit`` their values. Sessions are ordered by (creation
    time, commit, id).
    """
    order = np.lexsort((commit, created, session))
    docs, session = docs[order], session[order]
    same = (np.diff(session) == 0) & (np.diff(created[order]) == 0)
    same &= np.diff(commit[order]) == 0
    if same.any():
        order_ties_by_id(ids, docs, same)
    following = np.diff(session) == 0
    before = np.full(size, -1, dtype=np.int64)
    after = np.full(size, -1, dtype=np.int64)
    after[docs[:-1][following]] = docs[1:][following]
    before[docs[1:][following]] = docs[:-1][following]
    return before, after
