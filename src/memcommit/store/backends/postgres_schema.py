"""The schema's upkeep: its migrations applied under the writers' lock, and its scrub.

`SchemaUpkeep` is the part of `PostgresBackend` that works on the schema itself
rather than on commits: each session's settings, creating and migrating the
schema on open (hashing an old history once), the read-only open's check that
nothing is missing, and the scrub after a purge (`postgres_scrub`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any, ClassVar

import psycopg
from psycopg import sql

from memcommit.store.backends import postgres_scrub
from memcommit.store.backends import sql as common
from memcommit.store.backends.chain import seal_history
from memcommit.store.backends.migrations import CHAIN_MIGRATION, missing, require_current, upgrade
from memcommit.store.backends.postgres_errors import mapped
from memcommit.store.backends.postgres_locks import EVERY

#: Where the server's own notices go (a CLI shows them with --verbose).
_log = logging.getLogger("memcommit.postgres")
#: The notices worth a warning; the rest (NOTICE, INFO, DEBUG, LOG) are logged as info.
_WARNING = {"WARNING", "ERROR", "FATAL", "PANIC"}
#: How many hash partitions a new store's versions and vectors get (migration 0005);
#: the `partitions` option of `open` overrides it for the store it creates.
PARTITIONS = 64
#: The ledger of applied migrations (`migrations.upgrade`).
LEDGER = (
    "CREATE TABLE IF NOT EXISTS schema_migrations (version bigint PRIMARY KEY,"
    " name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
)


def _log_notice(diag: psycopg.errors.Diagnostic) -> None:
    """A notice the server sent (RAISE WARNING in a trigger, say) into the library log."""
    level = logging.WARNING if diag.severity_nonlocalized in _WARNING else logging.INFO
    _log.log(level, "server %s: %s", diag.severity, diag.message_primary)


class SchemaUpkeep:
    """Session settings, migrations and the scrub of one store's schema."""

    schema: str
    target: str
    rows: ClassVar[common.Rows]
    _conninfo: str
    #: The partitions a store this opening creates gets (None: `PARTITIONS`).
    partitions: int | None
    lock_timeout: float
    _setup: sql.Composed
    #: ``SET LOCAL lock_timeout ...; <the advisory lock>``: what a writer runs first.
    _lock_wait: str
    #: ``SET LOCAL lock_timeout ...``: how long a lock is waited for.
    _wait_sql: str

    def _configure(self, conn: psycopg.Connection) -> None:
        conn.add_notice_handler(_log_notice)
        conn.execute(self._setup)

    def _migrate(
        self, conn: psycopg.Connection, progress: Callable[[int, int], None] | None
    ) -> None:
        """Create the schema and apply the migrations it lacks, under the writers' lock.

        A schema with every migration applied opens without the lock: a long
        commit or an export holds it throughout, and an open (an MCP server
        starting, a reader) must not wait for it, let alone time out. Whether
        anything is missing is asked again under the lock before applying it. A
        store that had history before the hash chain has it hashed once, in the
        same transaction (``progress(done, rows)`` hears of it).
        """
        applied = self._applied(conn)
        if applied is not None and not missing("postgres", applied, self.target):
            return
        with conn.transaction():
            # the tables writers lock before the writers' lock, first too (`postgres_locks`)
            conn.execute(self._wait_sql)
            (tables,) = conn.execute(
                "SELECT array_agg(t) FROM unnest(%s::text[]) AS t WHERE to_regclass(t) IS NOT NULL",
                (list(EVERY),),
            ).fetchone() or (None,)
            if tables:
                conn.execute(f"LOCK TABLE {', '.join(tables)} IN ACCESS EXCLUSIVE MODE")
            conn.execute(self._lock_wait.encode())
            conn.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema))
            )
            # read by migration 0005 (for this transaction only)
            conn.execute(
                "SELECT set_config('memcommit.partitions', %s, true)",
                (str(self.partitions or PARTITIONS),),
            )

            def run(text: str, params: Sequence[Any]) -> psycopg.Cursor[Any]:
                # a script of many statements goes without parameters (simple query protocol)
                return conn.execute(text.encode(), params or None)

            applied = upgrade("postgres", self.target, run, ledger=LEDGER, mark="%s")
            if CHAIN_MIGRATION in applied:

                def write_all(text: str, rows: Iterable[Sequence[Any]]) -> None:
                    with conn.cursor() as cur:
                        cur.executemany(text.encode(), list(rows))

                seal_history(
                    self.rows,
                    lambda text, params: conn.execute(text.encode(), params).fetchall(),
                    write_all,
                    progress,
                )

    def _applied(self, conn: psycopg.Connection) -> list[int] | None:
        """The migrations the schema records (None: it has no ``schema_migrations`` table)."""
        found = conn.execute(
            "SELECT 1 FROM information_schema.tables"
            " WHERE table_schema = %s AND table_name = 'schema_migrations'",
            (self.schema,),
        ).fetchone()
        if not found:
            return None
        return [n for (n,) in conn.execute("SELECT version FROM schema_migrations")]

    def _require_current(self, conn: psycopg.Connection) -> None:
        """For a read-only open: the schema must exist with every migration applied."""
        require_current("postgres", self._applied(conn), self.target)

    @mapped
    def scrub(self, tenants: Collection[str] | None = None) -> bool:
        """Rewrite the partitions that hold ``tenants`` (all: None): `postgres_scrub`."""
        # A session of its own: a pooled one may be the very snapshot that keeps the rows.
        with psycopg.connect(self._conninfo, autocommit=True) as conn:
            self._configure(conn)
            return postgres_scrub.scrub(conn, tenants, patience=self.lock_timeout)
