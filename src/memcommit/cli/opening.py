"""Open the store a command names: reads never create one, writes and ``init`` may.

``memcommit.open`` creates a missing SQLite file (and a missing PostgreSQL
schema): right for ``init`` and writes, wrong for ``find --store typo.db``,
which would print "0 memories" and leave ``typo.db`` behind. Read commands
therefore refuse a missing file, and open PostgreSQL read-only (the server
refuses a missing schema and any write).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

import memcommit
from memcommit.cli.app import EMBEDDER_META
from memcommit.errors import InvalidInput
from memcommit.store.backends import scheme_of


def sqlite_path(target: str) -> str | None:
    """The file a SQLite target names, or None (``:memory:``, other schemes)."""
    if scheme_of(target) != "sqlite":
        return None
    path = target.removeprefix("sqlite://")
    return None if path in ("", ":memory:") else path


def require_file(target: str, *, field: str = "store") -> None:
    """InvalidInput naming ``field`` when ``target`` is a SQLite file that is not there."""
    path = sqlite_path(target)
    if path is None:
        return
    if not os.path.exists(path):
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise InvalidInput(field, target, f"no such store, and no folder {folder!r} for one")
        raise InvalidInput(
            field, target, f"no such store (memcommit init --store {target} creates one)"
        )
    if os.path.isdir(path):
        raise InvalidInput(field, target, "is a directory, not a store file")


def embedder_asked() -> str | None:
    """The ``--embedder`` (or ``$MEMCOMMIT_EMBEDDER``) of the running command, if any."""
    ctx = click.get_current_context(silent=True)
    return None if ctx is None else ctx.meta.get(EMBEDDER_META)


def open_store(target: str, *, create: bool = False, write: bool = False) -> Any:
    """The store at ``target``, for a read, a write or (``create``) a first write.

    A read or a write of a missing SQLite store is an InvalidInput naming it; a
    read opens PostgreSQL read-only, so a missing schema is refused there too.
    The store is opened with the command's ``--embedder``, when it has one.
    """
    if not create:
        require_file(target)
    embedder = embedder_asked()
    if not (create or write) and scheme_of(target) == "postgresql":
        return memcommit.open(target, read_only=True, embedder=embedder)
    return memcommit.open(target, embedder=embedder)


@contextmanager
def opened(
    target: str, tenant: str | None = None, *, create: bool = False, write: bool = False
) -> Iterator[Any]:
    """The store (or its tenant view when ``tenant`` is given), closed afterwards."""
    store = open_store(target, create=create, write=write)
    try:
        yield store if tenant is None else store.tenant(tenant)
    finally:
        store.close()
