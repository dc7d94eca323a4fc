"""The files of a snapshot folder: written atomically, leftovers of killed writers swept, erased.

A snapshot is written under a temporary name beside its own
(``tenant-….idx.<random>.tmp``), flushed, then renamed over it. A writer killed
before the rename (SIGKILL, a crash) leaves its temporary file behind, as large
as the snapshot and holding the same words: nothing would ever read or remove
it, and a purge must not leave its words there either. So each writer holds a
shared lock on the folder's ``.lock`` file while its temporary file exists, and
a sweep takes that lock exclusively: while the sweep holds it no writer is at
work, so every temporary file left is a dead writer's. The kernel drops a killed
process's locks, so a leftover never holds a sweep back. The live index sweeps
when a process first uses the folder and whenever a purge erases a snapshot.

A write's `Guard` closes the gap between taking a snapshot's arrays and renaming
its file: a purge landing in that gap erases the folder's files (or rewrites its
own) before the stale file is renamed in, and a writer killed right after its
rename would leave the purged words there. So the guard's ``still()`` is asked
under the folder's lock just before the rename (has a purge landed since the
arrays were taken?), and the write is given up (`Superseded`) when it no longer
holds; a write that erases (a purge's own rewrite) takes the lock exclusively, so
no writer that checked before the purge landed renames after it.

A folder that cannot be written (read-only, full, not a directory) just means
no snapshot: the callers treat OSError as "not kept". A file that must go
because it holds a purged memory's words and cannot be removed is the one
failure reported, by a `RuntimeWarning` naming the file: the commit has landed
and recall still answers, but the words stay on that disk.
"""

from __future__ import annotations

import errno
import fcntl
import os
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: The folder's lock file: shared by writers at work, exclusive for a sweep.
LOCK = ".lock"
#: The suffix of a snapshot being written (its name: ``<snapshot>.<random>.tmp``).
TEMPORARY = ".tmp"
#: The suffix of a snapshot's companion files (its vector files, `recall.index.vectorfile`).
COMPANION = ".vec"
#: How long a purge's erasure waits for writers at work in the folder, in seconds.
ERASE_WAIT = 30.0


class Superseded(Exception):
    """A write given up before its rename: its `Guard`'s ``still()`` no longer held."""


@dataclass(frozen=True)
class Guard:
    """When a write may replace its file: ``still()`` (asked under the folder's lock just
    before the rename) holds, and with ``exclusive`` no other writer is at work."""

    still: Callable[[], bool] | None = None
    exclusive: bool = False


#: A write that replaces its file whenever it is done.
ANY = Guard()


@contextmanager
def _locked(directory: Path, how: int) -> Iterator[None]:
    """Hold the folder's lock (``fcntl.LOCK_SH`` or ``LOCK_EX``, maybe ``| LOCK_NB``)."""
    handle = os.open(directory / LOCK, os.O_RDONLY | os.O_CREAT, 0o600)
    try:
        fcntl.flock(handle, how)
        yield
    finally:
        os.close(handle)  # closing releases the lock


def write(path: Path, parts: Iterable[bytes | memoryview], guard: Guard = ANY) -> int:
    """Write ``parts`` to ``path`` atomically; the file's size. OSError when it cannot,
    `Superseded` when ``guard`` says it may not replace the file any more.

    Readers see the old file or the new one, never a mix; a failure (a full
    disk) removes the temporary file and leaves the old file as it was.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path.parent, fcntl.LOCK_EX if guard.exclusive else fcntl.LOCK_SH):
        handle, temporary = tempfile.mkstemp(
            prefix=path.name + ".", suffix=TEMPORARY, dir=path.parent
        )
        try:
            with os.fdopen(handle, "wb") as out:
                for part in parts:
                    out.write(part)
                out.flush()
                os.fsync(out.fileno())
            if guard.still is not None and not guard.still():
                raise Superseded(path)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    return path.stat().st_size


def sweep(directory: Path, *, wait: float = 0.0) -> bool:
    """Remove the temporary files dead writers left in ``directory``; whether it could look.

    False when writers were still at work after ``wait`` seconds (their files
    are theirs: the next sweep looks again) or the folder cannot be locked (a
    read-only folder, where nobody could have written anything since).
    """
    deadline = time.monotonic() + wait
    while True:
        try:
            with _locked(directory, fcntl.LOCK_EX | fcntl.LOCK_NB):
                for leftover in leftovers(directory):
                    remove(leftover)
                return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        except OSError:  # no folder, not a folder, or not ours to write
            return False


def names(directory: Path) -> list[str]:
    """The names in ``directory`` (none when it cannot be listed)."""
    try:
        return os.listdir(directory)
    except OSError:
        return []


def leftovers(directory: Path) -> list[Path]:
    """The temporary files in ``directory``."""
    return [directory / name for name in names(directory) if name.endswith(TEMPORARY)]


def remove(path: Path) -> bool:
    """Delete ``path`` if it exists; False when it exists and cannot be deleted."""
    try:
        path.unlink()
    except OSError as failed:
        return failed.errno in (errno.ENOENT, errno.ENOTDIR)
    return True


def companions(directory: Path, name: str) -> list[Path]:
    """The files that belong to the snapshot ``name``: its vector files (``<name>.*.vec``)."""
    found = names(directory)
    return [directory / f for f in found if f.startswith(name + ".") and f.endswith(COMPANION)]


def erase(directory: Path, names: Iterable[str]) -> None:
    """Delete the snapshots ``names`` in ``directory``, their companions, and dead writers' files.

    For a purge: what cannot be deleted is reported by a RuntimeWarning (the
    purged words or vectors stay in that file), never raised.
    """
    sweep(directory, wait=ERASE_WAIT)
    for kept in leftovers(directory):
        _kept(kept, "a writer is still at work, or the folder cannot be written")
    for name in names:
        for path in [directory / name, *companions(directory, name)]:
            if not remove(path):
                _kept(path, "it cannot be deleted")


def drop(paths: Iterable[Path], *, erasing: bool = False) -> None:
    """Delete ``paths``; for a purge (``erasing``), one that stays is reported as `erase` does."""
    for path in paths:
        if not remove(path) and erasing:
            _kept(path, "it cannot be deleted")


def _kept(path: Path, why: str) -> None:
    warnings.warn(
        f"recall snapshot {path} may keep purged words: {why}", RuntimeWarning, stacklevel=3
    )
