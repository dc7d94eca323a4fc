"""`prepare`: bring recall's snapshots current from outside any commit (``memcommit index``).

For rows written below the Store (``memcommit import``, ``migrate``), which no
commit hook hears of, and for writers opened with ``keep_snapshots=False``, which
leave the writer's upkeep (`memcommit.upkeep`) to a process of their choosing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from memcommit.recall.index import live as live_index
from memcommit.recall.index.live import Progress, reporting, snapshot_name, store_index
from memcommit.store.protocols import StoreLike


class Kept(NamedTuple):
    """What `prepare` did for one tenant."""

    tenant: str
    memories: int  # what its index holds
    written: bool  # its snapshot was written now
    current: bool  # a snapshot holding every commit of the tenant is there (False: none could be)
    opened: str  # how it was opened: "loaded, caught up 3 memories", "built: snapshot missing"
    seconds: float


def prepare(
    store: StoreLike, progress: Progress | None = None, *, tenants: Iterable[str] | None = None
) -> list[Kept]:
    """Bring the snapshot of every tenant of ``store`` (or of ``tenants``) big enough to keep
    one current; what was done for each, in tenant order (``current`` False: the folder
    could not take it, ``opened`` says why).

    For rows written below the Store (`memcommit.store.transfer.import_jsonl`,
    `memcommit.store.migrate`), which no commit hook hears of: run once at the
    end (``memcommit import`` and ``migrate`` do), so the first recall of a
    fresh process opens a snapshot instead of building; and for writers opened
    with ``keep_snapshots=False`` (``memcommit index``). Tenants are opened one
    at a time and let go after (memory stays one tenant's index).
    """
    live = store_index(store)
    kept = []
    for tenant in sorted(set(store.tenants() if tenants is None else tenants)):
        if (
            len(store.find(tenant=tenant, live=False, limit=live_index.SNAPSHOT_MIN))
            < live_index.SNAPSHOT_MIN
        ):
            continue
        start = time.perf_counter()
        with live.lock, reporting(store, progress):
            path = None if live.directory is None else live.directory / snapshot_name(tenant)
            before = _written_file(path)
            held = tenant in live.tenants
            memories = live.keep(tenant)
            after = _written_file(path)
            written = after not in (None, before)
            current = after is not None and live.saved.get(tenant) == live.seen
            opened = live.opened.get(tenant, "")
            if not held:  # let go, with what was kept beside it
                live.tenants.evict(tenant)
        if memories >= live_index.SNAPSHOT_MIN:  # (purged memories counted above: let go)
            seconds = time.perf_counter() - start
            kept.append(Kept(tenant, memories, written, current, opened, seconds))
    return kept


def _written_file(path: Path | None) -> tuple[int, int] | None:
    """Which write of the file at ``path`` is there (a write replaces the file), if any."""
    try:
        found = os.stat(path) if path is not None else None
    except OSError:
        return None
    return None if found is None else (found.st_ino, found.st_mtime_ns)
