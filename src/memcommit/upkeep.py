"""The writer keeps recall's snapshots current: a tenant it changed by many memories is saved.

A process that writes and never recalls (a bulk commit, a writer service)
would leave a tenant's snapshot missing or far behind, and the first recall of
a fresh process would then build the tenant's index from the store, a pass
over all of it (seconds at 200,000 memories). So each Store counts, per tenant,
the memories its own commits wrote since this process last brought that
tenant's snapshot current; when a commit takes a tenant to `KEEP_AFTER`, the
recall layer is loaded and the tenant's index opened (from its snapshot,
caught up, or built), given the commit and saved
(`memcommit.recall.index.live.keep_current`). A bulk commit of thousands of
memories is saved once, at its end; small commits load nothing, so a process
that only writes a little never imports recall (nor numpy).

Writing a snapshot costs in proportion to the tenant (the whole index is
exported), so a big tenant's is written again only once its writer has added a
`KEEP_SHARE`-th of it since: the writer pays a bounded cost per memory whatever
the tenant's size (at 200,000 memories, a rewrite every 1,000 single-memory
commits cost each of them 0.75 ms, twice the commit itself). A process that has
not kept a tenant yet counts its memories (one query) when its writes first
reach `KEEP_AFTER` there, so its first keep of a big tenant waits for that share
too (a new writer on 200,000 memories otherwise opened and wrote them, about a
second, at its 1,000th).

A store opened with ``keep_snapshots=False`` counts nothing and writes nothing: a
writer service that must not pay a keep in one commit (about a second on a
100,000-memory tenant) leaves the snapshots to ``memcommit index``, run
elsewhere (`memcommit.recall.index.prepare.prepare`).

A fresh process then opens the snapshot and catches up what was written after
it (fewer than `KEEP_AFTER` memories, or a `KEEP_SHARE`-th of the tenant, per
writing process) from the store. Connected to every Store by the package top
(``Store.connect_landed``).
"""

from __future__ import annotations

import importlib
import threading
import weakref
from collections.abc import Iterable

from memcommit.model import Commit
from memcommit.store.store import Store

#: Memories this process wrote into one tenant after which its snapshot is written again.
KEEP_AFTER = 1_000
#: ... or, for a tenant of more than ``KEEP_SHARE * KEEP_AFTER`` memories, this share of it.
KEEP_SHARE = 20
#: Tenants counted at most; past it the half with the fewest writes is forgotten.
MAX_TALLIED = 100_000


class _Tally:
    """One Store's count, per tenant, of the memories its commits wrote since this process
    last kept the tenant; when each big tenant is next due; the tenants whose size is known
    (counted, or learnt from a keep)."""

    __slots__ = ("due_at", "sized", "written")

    def __init__(self) -> None:
        self.written: dict[str, int] = {}
        self.due_at: dict[str, int] = {}
        self.sized: set[str] = set()

    def due(self, tenants: Iterable[str]) -> list[str]:
        """Those of ``tenants`` whose count reached their threshold, in order."""
        written, due_at = self.written, self.due_at
        return sorted(t for t in tenants if written.get(t, 0) >= due_at.get(t, KEEP_AFTER))

    def trim(self) -> None:
        """Past `MAX_TALLIED` tenants, forget the counts of the half with the fewest writes:
        a writer to very many tenants holds a bounded tally (about 100 bytes a tenant),
        and a tenant forgotten counts again from 0 (its snapshot is kept later)."""
        if len(self.written) > MAX_TALLIED:
            most = sorted(self.written.items(), key=lambda item: (-item[1], item[0]))
            self.written = dict(most[: MAX_TALLIED // 2])

    def learn(self, sizes: dict[str, int]) -> None:
        """When each tenant of ``sizes`` (how many memories it holds) is next due."""
        self.sized.update(sizes)
        for tenant, size in sizes.items():
            later = size // KEEP_SHARE
            if later > KEEP_AFTER:
                self.due_at[tenant] = later
            else:
                self.due_at.pop(tenant, None)


_tallies: weakref.WeakKeyDictionary[Store, _Tally] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def after_commit(store: Store, commit: Commit) -> None:
    """Count what ``commit`` wrote per tenant; bring the tenants it took far enough current
    (nothing, for a store opened with ``keep_snapshots=False``)."""
    versions = store.written(commit) if store.keep_snapshots else None
    if not versions:
        return
    written = list(versions)  # (made once: opening a tenant indexes them, unread)
    with _lock:
        tally = _tallies.get(store) or _tallies.setdefault(store, _Tally())
        counts = tally.written
        for memory in written:
            counts[memory.tenant] = counts.get(memory.tenant, 0) + 1
        due = tally.due({memory.tenant for memory in written})
        tally.trim()  # (a due tenant has among the most writes: it stays)
        if not due:
            return
        unknown = [t for t in due if t not in tally.sized]
    if unknown:  # (outside the lock: a query)
        counted = {t: sum(store.tenant(t).tier_counts().values()) for t in unknown}
    with _lock:
        if unknown:
            tally.learn(counted)
        due = tally.due(due)  # (as they stand now: another thread may have kept one since)
        for tenant in due:
            tally.written.pop(tenant, None)
    if due:
        live = importlib.import_module("memcommit.recall.index.live")
        sizes = live.keep_current(store, commit, due, written)
        with _lock:
            tally.learn({tenant: sizes.get(tenant, 0) for tenant in due})
