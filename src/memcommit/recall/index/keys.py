"""The latest fact per key: which current document of each key the ``latest`` column marks.

Of the current documents sharing a key, the newest (by creation time, then
commit, then id) is the latest. A tenant index keeps the ``latest`` column true
for it alone as documents join and leave their keys.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from memcommit.recall.index.blobs import DocIds
from memcommit.recall.index.columns import Column


class LatestPerKey:
    """Key code -> its current documents, and -> the latest of them; keeps ``latest`` true.

    Built from the key, alive and latest columns as they are (an index builds
    it when a write first needs it, before the write changes any column: a
    read never pays for it). Valid until the index renumbers its documents.
    """

    def __init__(self, columns: Mapping[str, Column], ids: DocIds) -> None:
        self._columns, self._ids = columns, ids
        self._latest_column = columns["latest"]
        self.members: dict[int, set[int]] = {}
        self.latest: dict[int, int] = {}
        keys, newest = columns["key"].view(), self._latest_column.view()
        for doc in np.flatnonzero((keys >= 0) & columns["alive"].view()).tolist():
            self.members.setdefault(int(keys[doc]), set()).add(doc)
            if newest[doc]:
                self.latest[int(keys[doc])] = doc

    def _newness(self, doc: int) -> tuple[int, int, str]:
        """Sort key for "newer" among documents of one key: time, commit, id."""
        created, commit = self._columns["created"].data, self._columns["commit"].data
        return (int(created[doc]), int(commit[doc]), self._ids[doc])

    def join(self, key: int, doc: int) -> None:
        """A new document of ``key``: the latest if newer than the current latest."""
        self.members.setdefault(key, set()).add(doc)
        current = self.latest.get(key)
        if current is None or self._newness(doc) > self._newness(current):
            if current is not None:
                self._latest_column.data[current] = False
            self.latest[key] = doc
        else:
            self._latest_column.data[doc] = False

    def leave(self, key: int, doc: int) -> None:
        """A retired document of ``key``: if it was the latest, the newest left takes over."""
        members = self.members[key]
        members.discard(doc)
        if self.latest.get(key) == doc:
            del self.latest[key]
            if members:
                best = max(members, key=self._newness)
                self.latest[key] = best
                self._latest_column.data[best] = True
