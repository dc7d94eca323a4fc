"""Every error memcommit raises on purpose.

    MemcommitError
    ├── InvalidInput (also ValueError)   a field of a call is wrong; names field and value
    ├── NotFound (also KeyError)         an id, commit or trace that does not exist
    ├── Conflict                         optimistic concurrency: the version moved on
    ├── Purged                           the memory's content was erased for good
    ├── StoreClosed                      the store was closed before the call
    ├── ScorerError                      a plugged-in scorer raised or returned NaN
    ├── HookError                        a hook raised, but its commit landed (.commit)
    ├── SchemaTooNew                     the store was written by a newer memcommit
    ├── IndexDamaged                     a recall snapshot failed its checksum when read
    ├── MissingExtra (also ImportError)  an integration's framework is not installed
    ├── EmbedderError                    an embedder failed or answered wrongly (shape, norm)
    └── BackendError                     the database failed; driver errors are mapped here
        └── Unavailable                  the database cannot be reached

Driver exceptions (sqlite3, psycopg) never leak through the public API: backends
translate them at the boundary into BackendError or one of the above.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class MemcommitError(Exception):
    """Base of every error memcommit raises on purpose."""


class InvalidInput(MemcommitError, ValueError):
    """A call got a bad value; ``field`` and ``value`` say which one."""

    def __init__(self, field: str, value: Any, reason: str) -> None:
        self.field = field
        self.value = value
        self.reason = reason
        shown = repr(value)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        super().__init__(f"{field}={shown}: {reason}")


class NotFound(MemcommitError, KeyError):
    """An id, commit or trace that the store does not have (for this tenant)."""

    def __init__(self, field: str, value: Any) -> None:
        self.field = field
        self.value = value
        super().__init__(f"{field}={value!r}: not found")

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0])


class Conflict(MemcommitError):
    """An update expected one version of a memory and found another."""

    def __init__(self, memory_id: str, expected: int, actual: int) -> None:
        self.field = "expected_version"
        self.memory_id = memory_id
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"expected_version={expected!r}: memory {memory_id!r} is at version {actual}"
        )


class Purged(MemcommitError):
    """The memory was purged: its content is gone and it cannot change again."""

    def __init__(self, memory_id: str) -> None:
        self.field = "id"
        self.value = memory_id
        super().__init__(f"id={memory_id!r}: memory was purged")


class StoreClosed(MemcommitError):
    """The store was closed; open it again to use it."""


class ScorerError(MemcommitError):
    """A scorer raised or returned a non-finite score for one memory."""

    def __init__(self, memory_id: str, reason: str) -> None:
        self.field = "scorer"
        self.memory_id = memory_id
        super().__init__(f"scorer failed on memory {memory_id!r}: {reason}")


class HookError(MemcommitError):
    """An on_commit subscriber or a deferred function raised after its commit landed.

    The commit landed: ``commit`` is it, and retrying would make it twice
    (None when the block changed nothing, so nothing landed, and its deferred
    functions ran all the same). Every hook still ran; ``errors`` holds what
    each failing one raised, in the order they ran, and the first is also the
    ``__cause__``.
    """

    def __init__(self, commit: Any, errors: Sequence[BaseException]) -> None:
        self.commit = commit
        self.errors = tuple(errors)
        first = self.errors[0] if self.errors else None
        what = (
            "a commit block that changed nothing ended"
            if commit is None
            else f"commit {commit.seq} ({commit.id}) landed"
        )
        super().__init__(
            f"{what}, but {len(self.errors)} hook(s) raised;"
            f" the first: {type(first).__name__}: {first}"
        )


class SchemaTooNew(MemcommitError):
    """The store's schema is newer than this code knows: opening it could corrupt it.

    ``found`` is the store's newest migration, ``supported`` this code's newest.
    """

    def __init__(self, store: str, found: int, supported: int) -> None:
        self.field = "store"
        self.value = store
        self.found = found
        self.supported = supported
        super().__init__(
            f"store={store!r}: its schema is version {found}, newer than version {supported}"
            " that this memcommit supports; upgrade memcommit to open it"
        )


class IndexDamaged(MemcommitError):
    """A block of a recall index snapshot failed its CRC-32 when first read.

    Nothing read from it was used. A recall that meets it rebuilds the index from
    the store and runs again, so callers see this only from an explanation built
    after its recall returned (recall again: the index is rebuilt).
    """

    def __init__(self, path: str, section: str) -> None:
        self.field = "snapshot"
        self.value = path
        self.section = section
        super().__init__(f"snapshot={path!r}: section {section!r} failed its checksum")

    def __reduce__(self) -> tuple[type[IndexDamaged], tuple[str, str]]:
        """Picklable (a worker process's error reaches its pool)."""
        return (IndexDamaged, (self.value, self.section))


class MissingExtra(MemcommitError, ModuleNotFoundError):
    """An integration module was imported without its framework: ``extra`` names what to install.

    A ModuleNotFoundError too (``name`` is the missing module), so ``except
    ImportError`` around an optional import keeps working.
    """

    def __init__(self, module: str, extra: str, missing: str | None) -> None:
        self.field = "extra"
        self.value = extra
        self.module = module
        super().__init__(
            f"extra={extra!r}: {module} needs {missing or 'its framework'}, which is not"
            f" installed: pip install 'memcommit[{extra}]' (from a clone:"
            f' pip install -e ".[{extra}]")',
            name=missing,
        )


class EmbedderError(MemcommitError):
    """An embedder failed, or answered with the wrong shape, values or norm.

    ``embedder`` is its name; ``field`` and ``value`` say what was wrong (``dims``
    and the size it gave, ``status`` and the HTTP status, ...). Nothing it
    returned was stored or ranked.
    """

    def __init__(self, embedder: str, field: str, value: Any, reason: str) -> None:
        self.embedder = embedder
        self.field = field
        self.value = value
        super().__init__(f"embedder {embedder!r}: {field}={value!r}: {reason}")


class BackendError(MemcommitError):
    """The database failed in a way the caller cannot fix by changing arguments."""


class Unavailable(BackendError):
    """The database could not be reached (or the connection dropped)."""
