"""What a tenant's index is reopened from: its snapshot, or the versions a commit handed over.

`memcommit.recall.index.live` keeps the indexes; these are the pieces it opens
them with that need nothing of its state: a snapshot restored (or why not), the
test that a commit's versions are all its tenant holds, and putting versions in.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from memcommit.model import Memory
from memcommit.recall.index import persist
from memcommit.recall.index.persist import SnapshotRefused
from memcommit.recall.index.tenant import TenantIndex
from memcommit.store.protocols import StoreLike


def indexable(memory: Memory) -> bool:
    """Whether ``memory`` is a document of the index (a purged one is not)."""
    return memory.status != "purged"


class Handed(NamedTuple):
    """The versions commit ``seq`` of this store wrote into one tenant, in order."""

    seq: int
    memories: list[Memory]


def restore_snapshot(
    store: StoreLike, path: Path, tenant: str, seen: int
) -> tuple[TenantIndex, persist.Opened] | str:
    """The index in the snapshot at ``path``, not yet caught up; else why it is not used."""
    try:
        opened = persist.read(path, tenant, store.commit_id(1) or "")
    except SnapshotRefused as refused:
        return f"built: snapshot {refused.reason}"
    except OSError as unreadable:  # not ours to read, or the folder is not a folder
        return f"built: snapshot unreadable ({unreadable.strerror or unreadable})"
    stamp = opened.stamp
    if stamp.seq > seen or stamp.commit != store.commit_id(stamp.seq):
        return "built: snapshot from another history"
    try:
        return TenantIndex.restore(tenant, opened.sections), opened
    except ValueError as unusable:  # written by a build with other columns
        return f"built: {unusable}"


def holds_only(store: StoreLike, tenant: str, handed: Handed) -> bool:
    """Whether the tenant's documents are the ones ``handed`` wrote (it created the tenant).

    Each of them is a current memory of the tenant, so counting the tenant's
    (one query on its rows) tells whether there are others. The count leaves
    purged tombstones out, as the index does: so does the count of the handed
    ones (the current version of each, the last written).
    """
    if handed.seq == 1:
        return True
    held = sum(store.tenant(tenant).tier_counts().values())
    current = {memory.id: memory for memory in handed.memories}
    return held == sum(1 for memory in current.values() if indexable(memory))


def put_versions(index: TenantIndex, memories: list[Memory]) -> bool:
    """Index the current versions ``memories``; purged ones stop being documents.

    True when one was purged (its snapshot must be written again without it).
    """
    index.put_many(m for m in memories if indexable(m))
    purged = [m.id for m in memories if not indexable(m)]
    for memory_id in purged:
        index.remove(memory_id)
    return bool(purged)


def read_pages(
    store: StoreLike, tenant: str, progress: Callable[[int, int | None], None] | None, step: int
) -> tuple[TenantIndex, int]:
    """``tenant``'s memories from ``store``, ``step`` at a time (a build holds one page beside
    the index), into a new index; how many. ``progress(done, total)``: None while pages remain."""
    index = TenantIndex(tenant)
    done, after = 0, None
    with index.bulk():
        while True:
            page = store.find(tenant=tenant, live=False, limit=step, after=after)
            memories = [m for m in page if indexable(m)]
            index.put_many(memories)
            done += len(memories)
            last = len(page) < step
            if progress is not None:
                progress(done, done if last else None)
            if last:
                return index, done
            after = page[-1].id
