"""Numbered schema migrations: ``migrations/<backend>/NNNN_name.sql``, applied in order.

Each store records the migrations it has in its ``schema_migrations`` table.
`upgrade` applies the missing ones when a store opens for writing (`missing`
says which, so a current store opens without taking the writers' lock);
`require_current` refuses a read-only open of a store that would need one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from memcommit.errors import InvalidInput, SchemaTooNew

#: The migration that adds the hash chain; a store that had history before it has that
#: history hashed once right after it (`memcommit.store.backends.chain.seal_history`).
CHAIN_MIGRATION = 3

#: ``execute(text, params)``: run one statement in the open transaction, return its rows.
Execute = Callable[[str, Sequence[Any]], Iterable[Sequence[Any]]]

_ROOT = Path(__file__).parent


def migrations(backend: str) -> list[tuple[int, str, str]]:
    """(number, name, sql) of every migration for ``backend``, in order."""
    out = []
    for path in sorted((_ROOT / backend).glob("*.sql")):
        number, _, name = path.stem.partition("_")
        out.append((int(number), name, path.read_text(encoding="utf-8")))
    return out


def refuse_newer(backend: str, applied: Iterable[int], store: str) -> None:
    """Raise `SchemaTooNew` when ``applied`` holds a migration this code does not know.

    Old code must not write into a store a newer memcommit has reshaped: it
    would not know the new columns' rules.
    """
    newest = max(applied, default=0)
    supported = max((number for number, _, _ in migrations(backend)), default=0)
    if newest > supported:
        raise SchemaTooNew(store, newest, supported)


def upgrade(
    backend: str,
    store: str,
    execute: Execute,
    *,
    ledger: str,
    mark: str,
    statements: Callable[[str], Iterable[str]] = lambda script: (script,),
) -> list[int]:
    """Apply the migrations the store lacks, each recorded in ``schema_migrations``.

    The caller runs this inside a transaction holding the writers' lock, so two
    processes opening one new store never both migrate it. ``ledger`` creates the
    ``schema_migrations`` table if it is missing (version, name, applied_at, in
    the database's own types); ``statements`` splits a script for a driver that
    runs one statement at a time. Returns the numbers it applied, in order (a
    backend follows some with work of its own: see `seals.CHAIN_STATE`).
    """
    execute(ledger, ())
    done = {number for (number,) in execute("SELECT version FROM schema_migrations", ())}
    refuse_newer(backend, done, store)
    record = f"INSERT INTO schema_migrations (version, name) VALUES ({mark}, {mark})"
    applied = []
    for number, name, script in migrations(backend):
        if number not in done:
            for statement in statements(script):
                execute(statement, ())
            execute(record, (number, name))
            applied.append(number)
    return applied


def missing(backend: str, applied: Iterable[int], store: str) -> list[int]:
    """The migrations ``applied`` lacks, in order; `SchemaTooNew` if it holds a newer one."""
    done = set(applied)
    refuse_newer(backend, done, store)
    return [number for number, _, _ in migrations(backend) if number not in done]


def require_current(backend: str, applied: Iterable[int] | None, store: str) -> None:
    """For a read-only open, which applies nothing: the store has every migration, no newer one.

    ``applied`` is None when the database has no ``schema_migrations`` table.
    """
    if applied is None:
        if backend == "postgres":  # an empty database or schema: the usual first step
            reason = "holds no memcommit store yet: `memcommit init --store URL` makes one"
            raise InvalidInput("store", store, reason)
        raise InvalidInput("store", store, "is not a memcommit store (it has no schema)")
    pending = missing(backend, applied, store)
    if pending:
        raise InvalidInput(
            "store",
            store,
            f"needs migrations {pending} that a read-only open does not apply;"
            " open it once read-write (e.g. `memcommit init --store ...`) to upgrade it",
        )
