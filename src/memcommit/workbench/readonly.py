"""Open a SQLite store the workbench inspects without ever writing to it.

``memcommit.open`` creates a missing file, applies pending migrations and turns
on WAL: all writes. The workbench instead checks the file through a read-only
connection first (it must exist, be a memcommit store in WAL mode with every
migration applied) and then opens the store over a ``file:...?mode=ro`` URI, so
SQLite itself refuses any write.
"""

from __future__ import annotations

import os
import sqlite3
from typing import Any
from urllib.parse import quote

import memcommit
from memcommit.errors import InvalidInput
from memcommit.store.schema import migrations


def read_only_uri(path: str) -> str:
    """The ``file:`` URI opening ``path`` read-only (never creating it)."""
    return "file:" + quote(os.path.abspath(path)) + "?mode=ro"


def sqlite_takes_uris() -> bool:
    """Whether this SQLite reads URI filenames without being asked (memcommit's backend)."""
    with sqlite3.connect(":memory:") as conn:
        options = {row[0] for row in conn.execute("PRAGMA compile_options")}
    return "USE_URI" in options or "USE_URI=1" in options


def check_store_file(target: str, path: str) -> None:
    """Refuse, naming ``store``, a file the store would have to write to before reading it."""
    if not os.path.isfile(path):
        raise InvalidInput("store", target, "no such store file")
    try:
        conn = sqlite3.connect(read_only_uri(path), uri=True)
        try:
            journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
            has_schema = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
            ).fetchone()
            done = (
                {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
                if has_schema
                else set()
            )
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise InvalidInput("store", target, f"cannot read it as SQLite ({exc})") from None
    if not has_schema:
        raise InvalidInput("store", target, "is not a memcommit store (it has no schema)")
    pending = [number for number, _, _ in migrations("sqlite") if number not in done]
    if pending:
        raise InvalidInput(
            "store",
            target,
            f"needs migrations {pending} that the workbench will not apply (it only reads);"
            " open it once with memcommit (e.g. `memcommit log --store ...`) to upgrade it",
        )
    if journal.lower() != "wal":
        raise InvalidInput(
            "store", target, f"is in {journal} journal mode; memcommit stores use WAL"
        )


def open_read_only(target: str) -> Any:
    """The SQLite store at ``target`` (a path or ``sqlite://path``), opened read-only.

    Every check happens before the store is opened; a refused file is left as it was.
    """
    path = target.removeprefix("sqlite://")
    check_store_file(target, path)
    if not sqlite_takes_uris():
        raise InvalidInput(
            "store",
            target,
            "this SQLite build does not read URI filenames, so it cannot be opened read-only",
        )
    return memcommit.open(read_only_uri(path))
