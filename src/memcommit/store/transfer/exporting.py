"""Export: a store's whole history as records, written as JSON Lines with a trailer."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import tempfile
from collections import defaultdict
from collections.abc import Generator, Iterator
from dataclasses import fields
from datetime import datetime
from typing import IO, Any

from memcommit.model import Commit, Memory
from memcommit.store.backends.base import Backend, TraceRow
from memcommit.store.store import Store
from memcommit.store.transfer import vectors
from memcommit.store.transfer.format import (
    FORMAT,
    RECORD_TYPES,
    VERSION,
    Progress,
    Summary,
    backend_of,
)

_MEMORY_FIELDS = tuple(f.name for f in fields(Memory))
_TRACE_FIELDS = tuple(f.name for f in fields(TraceRow))


@contextlib.contextmanager
def snapshot(backend: Backend) -> Iterator[Backend]:
    """The store behind ``backend`` as one read snapshot (`Backend.begin_read`), ended after.

    Every read of ``backend`` in this thread sees the store as it was when the
    first one ran; no writers' lock is taken, so writers go on meanwhile and what
    they land is not seen.
    """
    backend.begin_read()
    try:
        yield backend
    finally:
        backend.rollback()


def records(backend: Backend) -> Generator[dict[str, Any], None, None]:
    """Every record of the store behind ``backend``, in the order `load` needs them.

    Read in one snapshot (`snapshot`), ended when the records are: the export is
    consistent, and stops no writer.
    """
    with snapshot(backend):
        yield from stored(backend)


def stored(backend: Backend) -> Iterator[dict[str, Any]]:
    """`records`, read in the caller's open `snapshot` of ``backend``."""
    commits = backend.commits(newest_first=False)
    yield {"type": "header", "format": FORMAT, "version": VERSION, "commits": len(commits)}
    hashes = dict(backend.hashes([c.seq for c, _ in commits]))
    traces_at: dict[int, list[TraceRow]] = defaultdict(list)
    for trace in backend.traces():
        traces_at[max(trace.started_seq, trace.ended_seq or 0)].append(trace)
    histories: dict[str, tuple[list[Memory], list[tuple[Any, ...]]]] = {}
    for commit, tenants in commits:
        yield {**_commit_record(commit, tenants), "hash": hashes.get(commit.seq)}
        for change in commit.changes:
            if change.memory_id is None or change.version is None:
                continue
            known = histories.get(change.memory_id)
            if known is None:
                known = histories[change.memory_id] = (
                    backend.history(change.memory_id),
                    backend.seals(change.memory_id),
                )
            history, sealed = known
            version = history[change.version - 1]
            salt, digest, erased = sealed[change.version - 1]
            following = history[change.version] if change.version < len(history) else None
            end_seq = following.updated_commit if following is not None else None
            yield {
                "type": "version",
                **_memory_fields(version),
                "end_seq": end_seq,
                "salt": salt,
                "digest": digest,
                "erased": erased,
            }
            if following is None:  # every version of it is out: free the memory
                del histories[change.memory_id]
        for trace in traces_at.pop(commit.seq, ()):
            yield {"type": "trace", **{k: _plain(getattr(trace, k)) for k in _TRACE_FIELDS}}
    for memory_id, usage in sorted(backend.usage().items()):
        yield {
            "type": "usage",
            "id": memory_id,
            "count": usage.count,
            "first_tick": usage.first_tick,
            "last_tick": usage.last_tick,
        }
    for namespace, key, value in backend.state_items():
        yield {"type": "state", "namespace": namespace, "key": key, "value": value}
    yield from vectors.records(backend)


def _commit_record(commit: Commit, tenants: list[str | None]) -> dict[str, Any]:
    changes = [
        {
            "op": c.op,
            "memory_id": c.memory_id,
            "version": c.version,
            "tenant": tenant,
            "detail": dict(c.detail),
        }
        for c, tenant in zip(commit.changes, tenants, strict=True)
    ]
    return {
        "type": "commit",
        "seq": commit.seq,
        "id": commit.id,
        "parent": commit.parent,
        "time": commit.time.isoformat(),
        "author": commit.author,
        "message": commit.message,
        "changes": changes,
    }


def _memory_fields(m: Memory) -> dict[str, Any]:
    return {name: _plain(getattr(m, name)) for name in _MEMORY_FIELDS}


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, dict) or hasattr(value, "items"):
        return dict(value)
    return value


def export_jsonl(store: Store, out: IO[str], *, progress: Progress | None = None) -> Summary:
    """Write ``store``'s whole history to ``out`` as JSON Lines, then the trailer; the counts."""
    counts = dict.fromkeys(RECORD_TYPES, 0)
    total = lines = 0
    digest = hashlib.sha256()
    with contextlib.closing(records(backend_of(store))) as stream:  # ends the snapshot on error
        for record in stream:
            kind = record["type"]
            if kind == "header":
                total = record["commits"]
            else:
                counts[kind] += 1
            line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
            digest.update(line.encode("utf-8"))
            lines += 1
            out.write(line)
            if kind == "commit" and progress is not None:
                progress(counts["commit"], total)
    trailer = {"type": "trailer", "lines": lines, "counts": counts, "sha256": digest.hexdigest()}
    out.write(json.dumps(trailer, separators=(",", ":")) + "\n")
    return Summary(*counts.values())


def export_file(
    store: Store, path: str | os.PathLike[str], *, progress: Progress | None = None
) -> Summary:
    """Export to the file ``path`` through a temporary file renamed into place when complete.

    A crash or an error mid-export leaves any earlier file at ``path`` as it was
    and no partial one; the data is flushed to disk before the rename.
    """
    target = os.fspath(path)
    if os.path.exists(target) and not os.path.isfile(target):
        # a device or a pipe (/dev/stdout, a FIFO): written in place, never renamed over
        with open(target, "w", encoding="utf-8") as out:
            return export_jsonl(store, out, progress=progress)
    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(folder):  # the error names the file asked for, not a temporary one
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), target)
    handle, temporary = tempfile.mkstemp(prefix=".memcommit-export-", dir=folder)
    try:
        with open(handle, "w", encoding="utf-8") as out:
            summary = export_jsonl(store, out, progress=progress)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    return summary
