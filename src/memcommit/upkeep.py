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

A fresh process then opens the snapshot and catches up what was written after
it (fewer than `KEEP_AFTER` memories, or a `KEEP_SHARE`-th of the tenant, per
writing process) from the store. Connected to every Store by the package top
(``Store.connect_landed``).
"""

from __future__ import annotations

import importlib
import threading
import weakref
from collections import Counter

from memcommit.model import Commit
from memcommit.store.store import Store

#: Memories this process wrote into one tenant after which its snapshot is written again.
KEEP_AFTER = 1_000
#: ... or, for a tenant of more than ``KEEP_SHARE * KEEP_AFTER`` memories, this share of it.
KEEP_SHARE = 20

_backlog: weakref.WeakKeyDictionary[Store, Counter[str]] = weakref.WeakKeyDictionary()
#: Per Store, the tenants whose snapshot is due later than `KEEP_AFTER` (big ones), and when.
_due_at: weakref.WeakKeyDictionary[Store, dict[str, int]] = weakref.WeakKeyDictionary()
#: Per Store, the tenants this process has counted or kept (their `_due_at` is known).
_sized: weakref.WeakKeyDictionary[Store, set[str]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def after_commit(store: Store, commit: Commit) -> None:
    """Count what ``commit`` wrote per tenant; bring the tenants it took far enough current."""
    versions = store.written(commit)
    if not versions:
        return
    written = list(versions)  # (made once: opening a tenant indexes them, unread)
    with _lock:
        backlog = _backlog.setdefault(store, Counter())
        due_at = _due_at.setdefault(store, {})
        sized = _sized.setdefault(store, set())
        changed = Counter(memory.tenant for memory in written)
        backlog.update(changed)
        due = sorted(t for t in changed if backlog[t] >= due_at.get(t, KEEP_AFTER))
        unknown = [t for t in due if t not in sized]
    if unknown:  # (outside the lock: a query)
        counted = {t: sum(store.tenant(t).tier_counts().values()) for t in unknown}
    with _lock:
        if unknown:
            sized.update(unknown)
            _learn(due_at, counted)
        # (as they stand now: another thread may have kept one since)
        due = [t for t in due if backlog[t] >= due_at.get(t, KEEP_AFTER)]
        for tenant in due:
            backlog.pop(tenant, None)
    if due:
        live = importlib.import_module("memcommit.recall.index.live")
        sizes = live.keep_current(store, commit, due, written)
        with _lock:
            _learn(due_at, {tenant: sizes.get(tenant, 0) for tenant in due})


def _learn(due_at: dict[str, int], sizes: dict[str, int]) -> None:
    """When each tenant of ``sizes`` (how many memories it holds) is next due."""
    for tenant, size in sizes.items():
        later = size // KEEP_SHARE
        if later > KEEP_AFTER:
            due_at[tenant] = later
        else:
            due_at.pop(tenant, None)
