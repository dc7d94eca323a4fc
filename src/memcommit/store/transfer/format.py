"""The export format: its name and version, its record types, and what a transfer reports."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memcommit.errors import InvalidInput
from memcommit.store.backends.base import Backend
from memcommit.store.store import Store

FORMAT = "memcommit-export"
VERSION = 3
#: Versions `import_jsonl` reads: 2 has no hash chain (it is hashed afresh on import).
READABLE = (2, 3)

#: ``progress(done, total)``: told after each commit, with the number of commits.
Progress = Callable[[int, int], None]

#: The record types after the header, in the order they come (and as counted in Summary).
RECORD_TYPES = ("commit", "version", "trace", "usage", "state")


@dataclass(frozen=True)
class Summary:
    """How much an export wrote or an import loaded."""

    commits: int = 0
    versions: int = 0
    traces: int = 0
    usages: int = 0
    states: int = 0


def backend_of(store: Store) -> Backend:
    """The backend under a Store (`Store.backend`): export and import copy its rows.

    Going below the Store is what keeps commit ids, sequence numbers and times
    exactly as they were; the Store API would mint new ones.
    """
    if not isinstance(store, Store):
        raise InvalidInput("store", store, "must be a memcommit Store (not a tenant view)")
    return store.backend
