"""Copy a store to another backend (SQLite <-> PostgreSQL) with its full history, then prove it.

The copy is `memcommit.store.transfer`'s record stream: `stored` reads the source in
one read snapshot (no writers' lock: writers on the source go on, and what they
land meanwhile is not copied) and `written` writes it into the empty target in
one transaction, so commit ids, sequence numbers, times, versions, traces and use
counts come across unchanged. The small state (tier statistics, policy state) is
read in the same snapshot and written in the same transaction. `verify` then
compares the copy with that snapshot, row for row, and runs `check()` on it,
before the copy lands: a copy that fails, in any way, leaves the target empty.

    from memcommit.store.migrate import migrate
    report = migrate("agent.db", "postgresql://db.internal/agents?schema=team_a")
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memcommit.errors import BackendError, InvalidInput
from memcommit.store.backends.base import Backend, MemoryQuery
from memcommit.store.store import Store
from memcommit.store.store import open as open_store
from memcommit.store.transfer import backend_of, filling, snapshot, stored, written

#: ``progress(phase, done, total)``: phase "copy" counts commits, "verify" memories.
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Report:
    """What was copied, and the head commit both stores now share."""

    commits: int
    versions: int
    traces: int
    usages: int
    states: int
    memories: int
    head: str | None
    vectors: int = 0


class Mismatch(BackendError):
    """The copy differs from its source (the first difference is named)."""


def migrate(
    source: str | os.PathLike[str],
    target: str | os.PathLike[str],
    *,
    progress: Progress | None = None,
    source_options: dict[str, Any] | None = None,
    target_options: dict[str, Any] | None = None,
) -> Report:
    """Copy the store at ``source`` into the new, empty store at ``target``, and verify it."""
    with (
        open_store(source, **(source_options or {})) as src,
        open_store(target, **(target_options or {})) as dst,
    ):
        return copy(src, dst, progress=progress)


def copy(src: Store, dst: Store, *, progress: Progress | None = None) -> Report:
    """Copy every row of ``src``, as one snapshot of it, into the empty ``dst``.

    Raises `Mismatch` if the copy differs from that snapshot; then, as after any
    error, nothing of the copy lands in ``dst``.
    """
    if src is dst:
        raise InvalidInput("target", dst, "is the source store itself")
    source, target = backend_of(src), backend_of(dst)

    def copied(done: int, total: int) -> None:
        if progress is not None:
            progress("copy", done, total)

    # the source's snapshot stays open until the copy is verified against it: the
    # source as it is now may have more commits, landed after the snapshot
    with snapshot(source), filling(target):
        summary = written(target, stored(source), progress=copied)
        state = source.state_items()
        for namespace, key, value in state:
            target.state_set(namespace, key, value)
        memories = verify(source, target, progress=progress)
    head = target.commits(limit=1, changes=False)
    return Report(
        summary.commits,
        summary.versions,
        summary.traces,
        summary.usages,
        len(state),
        memories,
        head[0][0].id if head else None,
        summary.vectors,
    )


def verify(source: Backend, target: Backend, *, progress: Progress | None = None) -> int:
    """Compare two stores row for row; the number of memories compared.

    Commits (ids, seqs, parents, times, changes and their tenants), every
    version of every memory, traces, use counts, state and the vectors (every row, see
    `_same_vectors`) must be equal, and
    the target's invariants must hold. Raises `Mismatch` naming the first
    difference.
    """
    problems = target.check()
    if problems:
        raise Mismatch(f"the copy fails check(): {problems[0]}")
    theirs = source.commits(newest_first=False)
    ours = target.commits(newest_first=False)
    if len(theirs) != len(ours):
        raise Mismatch(f"commit count differs: source {len(theirs)}, copy {len(ours)}")
    for mine, copied in zip(theirs, ours, strict=True):
        if mine != copied:
            raise Mismatch(
                f"commit {mine[0].seq} differs: source id {mine[0].id}, copy id {copied[0].id}"
            )
    ids = [m.id for m in source.memories(MemoryQuery())]
    present = target.memories(MemoryQuery())
    if len(ids) != len(present):
        raise Mismatch(f"memory count differs: source {len(ids)}, copy {len(present)}")
    for done, memory_id in enumerate(ids, start=1):
        if source.history(memory_id) != target.history(memory_id):
            raise Mismatch(f"the versions of memory {memory_id!r} differ")
        if progress is not None and (done % 500 == 0 or done == len(ids)):
            progress("verify", done, len(ids))
    for what, a, b in (
        ("traces", source.traces(), target.traces()),
        ("use counts", source.usage(), target.usage()),
        ("state", source.state_items(), target.state_items()),
    ):
        if a != b:
            raise Mismatch(f"{what} differ between the source and the copy")
    _same_vectors(source, target)
    return len(ids)


def _same_vectors(source: Backend, target: Backend, page: int = 1000) -> None:
    """Mismatch unless both stores hold the same vector rows, byte for byte."""
    after: tuple[str, str, str] | None = None
    while True:
        mine = source.vector_rows(after=after, limit=page)
        copied = target.vector_rows(after=after, limit=page)
        if mine != copied:
            raise Mismatch("the stored vectors differ between the source and the copy")
        if len(mine) < page:
            return
        after = mine[-1][:3]


__all__ = ["Mismatch", "Progress", "Report", "copy", "migrate", "verify"]
