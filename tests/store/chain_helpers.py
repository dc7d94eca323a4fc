"""Raw access to a store's tables below memcommit, to edit them as an attacker would.

An attacker with the SQLite file or the PostgreSQL schema writes rows directly:
no validation, no hooks, foreign keys off (PostgreSQL: replication role).
"""

from __future__ import annotations

import os
import sqlite3
from typing import Any

POSTGRES_URL = os.environ.get(
    "MEMCOMMIT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
)


class Raw:
    """One raw connection to the tables of ``store``'s database; write SQL with ``?``."""

    def __init__(self, store: Any) -> None:
        backend = store.backend
        self.postgres = hasattr(backend, "schema")
        if self.postgres:
            import psycopg

            self.conn: Any = psycopg.connect(POSTGRES_URL, autocommit=True)
            self.conn.execute(f'SET search_path TO "{backend.schema}"')
            self.conn.execute("SET session_replication_role = replica")
        else:
            self.conn = sqlite3.connect(backend.target, isolation_level=None)

    def run(self, text: str, *params: Any) -> list[tuple[Any, ...]]:
        if self.postgres:
            text = text.replace("?", "%s")
        cur = self.conn.execute(text, params)
        return list(cur.fetchall()) if cur.description else []

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Raw:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def edit(store: Any, *statements: str | tuple[Any, ...]) -> None:
    """Run each statement (text, or (text, *params)) on ``store``'s tables directly."""
    with Raw(store) as raw:
        for statement in statements:
            if isinstance(statement, str):
                raw.run(statement)
            else:
                raw.run(*statement)


def rows(store: Any, text: str, *params: Any) -> list[tuple[Any, ...]]:
    """The rows of a raw query on ``store``'s tables."""
    with Raw(store) as raw:
        return raw.run(text, *params)
