"""The embedded backend: one SQLite file (or ``:memory:``) through the stdlib ``sqlite3``.

WAL journal so readers never block the writer, foreign keys on, a busy timeout
so concurrent writers queue instead of failing, and ``BEGIN IMMEDIATE`` for
every commit so the sequence number is taken under the writers' lock.

``read_only=True`` opens an existing store over a ``file:...?mode=ro`` URI, so
SQLite itself refuses every write; a file that reading would first have to
write to (missing, not a store, pending migrations, not in WAL) is refused
before it is opened, and left as it was.
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar
from urllib.parse import quote

from memcommit.errors import BackendError, InvalidInput, Unavailable
from memcommit.store.backends import register
from memcommit.store.backends import sql as common
from memcommit.store.backends.base import Batch
from memcommit.store.backends.migrations import migrations
from memcommit.store.records import from_text, to_text
from memcommit.store.validate import seconds

SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")
#: Page cache per connection, in KiB (SQLite's default is 2 MiB). A commit that writes
#: new versions beside old ones all over a large file (compaction) rereads fewer pages.
CACHE_KIB = 64 * 1024

F = TypeVar("F", bound=Callable[..., Any])


def _mapped(fn: F) -> F:
    """Translate sqlite3 errors into memcommit errors at the boundary."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except sqlite3.OperationalError as exc:
            text = str(exc)
            if "unable to open" in text or "disk I/O" in text:
                raise Unavailable(f"sqlite: {text}") from exc
            raise BackendError(f"sqlite: {text}") from exc
        except sqlite3.Error as exc:
            raise BackendError(f"sqlite: {exc}") from exc

    return wrapper  # type: ignore[return-value]


SQLITE = common.Dialect(
    mark="?",
    true="1",
    false="0",
    in_many="{column} IN (SELECT value FROM json_each(?))",  # one JSON array parameter
    pack=json.dumps,
    has_key=(
        "r.metadata != '{}' AND EXISTS (SELECT 1 FROM json_each(r.metadata) AS j WHERE j.key = ?)"
    ),
    tenant_by_id="+tenant",  # look ids up by id: "+" keeps SQLite off the tenant index
    time_out=to_text,
    time_in=from_text,
    flag_in=bool,
)
#: The shared invariants (`sql.invariants`) in SQLite's spelling; `check` runs them after
#: SQLite's own page and foreign key checks.
CHECKS = common.invariants(
    is_not="IS NOT",
    seq_hex="substr(printf('%012x', seq), 1, 12)",
    bounds=(
        "memory version not written by a stored commit",
        "SELECT v.id, v.version, v.seq FROM versions v"
        " WHERE NOT EXISTS (SELECT 1 FROM commits c WHERE c.seq = v.seq)"
        " OR (v.end_seq IS NOT NULL AND (v.end_seq < v.seq"
        " OR NOT EXISTS (SELECT 1 FROM commits c WHERE c.seq = v.end_seq)))",
    ),
    one_current="sum(end_seq IS NULL)",
    current_version="max(CASE WHEN end_seq IS NULL THEN version END)",
)


class SQLiteBackend(common.SQLBackend):
    """Commits and memory versions in one SQLite database."""

    dialect = SQLITE
    checks = CHECKS

    @_mapped
    def __init__(
        self,
        target: str,
        *,
        synchronous: str = "FULL",
        busy_timeout: float = 30.0,
        read_only: bool = False,
    ):
        path = target.removeprefix("sqlite://") or ":memory:"
        if synchronous not in SYNCHRONOUS:
            raise InvalidInput("synchronous", synchronous, f"must be one of {SYNCHRONOUS}")
        busy_timeout = seconds("busy_timeout", busy_timeout)
        if not isinstance(read_only, bool):
            raise InvalidInput("read_only", read_only, "must be True or False")
        self.target = path
        if read_only:
            _check_readable(target, path)
        try:
            conn = sqlite3.connect(
                _read_only_uri(path) if read_only else path,
                isolation_level=None,
                check_same_thread=False,
                timeout=busy_timeout,
                uri=read_only,
            )
        except sqlite3.OperationalError as exc:
            raise Unavailable(f"sqlite: cannot open {path!r}: {exc}") from exc
        self._conn = conn
        # The tip as this connection last saw it, and the data_version it saw it at:
        # SQLite bumps data_version when another connection commits, never for our own.
        self._tip: tuple[int, str] | None = None
        self._tip_at: int | None = None
        self._written: tuple[int, str] | None = None  # the commit of the open transaction
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        if read_only:
            return
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {synchronous}")
        conn.execute("PRAGMA foreign_keys = ON")
        self._migrate()

    def _migrate(self) -> None:
        """Apply the migrations not applied yet, under the writers' lock (idempotent)."""
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY,"
                " name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
            )
            done = {n for (n,) in conn.execute("SELECT version FROM schema_migrations")}
            for number, name, sql in migrations("sqlite"):
                if number in done:
                    continue
                for statement in _statements(sql):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (?, ?)", (number, name)
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    # -- the write transaction ------------------------------------------------

    @_mapped
    def begin(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    @_mapped
    def commit(self) -> None:
        self._conn.execute("COMMIT")
        if self._written is not None and self._tip_at is not None:
            self._tip, self._written = self._written, None

    @_mapped
    def rollback(self) -> None:
        self._written = None
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    @_mapped
    def tip(self) -> tuple[int, str] | None:
        """The newest commit, read again only when another connection has committed since."""
        seen = self._conn.execute("PRAGMA data_version").fetchone()[0]
        if seen != self._tip_at:
            row = self._conn.execute(
                "SELECT seq, id FROM commits ORDER BY seq DESC LIMIT 1"
            ).fetchone()
            self._tip, self._tip_at = (None if row is None else tuple(row)), seen
        return self._tip

    @_mapped
    def write(self, batch: Batch) -> None:
        c = batch.commit
        self._written = (c.seq, c.id)
        w = common.writes(batch, self.rows, self.statements)
        self._conn.execute(*w.commit)
        self._conn.executemany(*w.versions)  # a generator: rows made and dropped one at a time
        for text, rows in w.updates:
            self._conn.executemany(text, rows)

    # -- the primitives of the shared reads --------------------------------------------

    @_mapped
    def _select(self, text: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._conn.execute(text, params).fetchall()

    @_mapped
    def _write_all(self, text: str, rows: Iterable[Sequence[Any]]) -> None:
        self._conn.executemany(text, rows)

    def _engine_problems(self) -> list[str]:
        found = []
        quick = [line for (line,) in self._select("PRAGMA quick_check")]
        if quick != ["ok"]:
            found.append(f"sqlite quick_check: {'; '.join(quick[: common.SAMPLE])}")
        broken_links = self._select("PRAGMA foreign_key_check")[: common.SAMPLE]
        if broken_links:
            found.append(f"foreign key broken: {broken_links}")
        return found

    def close(self) -> None:
        try:
            self._conn.close()
        except sqlite3.Error as exc:  # closing twice or a broken file: nothing left to save
            raise BackendError(f"sqlite: {exc}") from exc


def _statements(sql: str) -> list[str]:
    """Split a migration script into complete statements (sqlite3 runs one at a time)."""
    out: list[str] = []
    buffer = ""
    for line in sql.splitlines(keepends=True):
        if not buffer and (not line.strip() or line.lstrip().startswith("--")):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            out.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        out.append(buffer.strip())
    return out


def _read_only_uri(path: str) -> str:
    """The ``file:`` URI opening ``path`` read-only (never creating it)."""
    return "file:" + quote(os.path.abspath(path)) + "?mode=ro"


def _check_readable(target: str, path: str) -> None:
    """Refuse, naming ``store``, a file the store would have to write to before reading it."""
    if not os.path.isfile(path):
        raise InvalidInput("store", target, "no such store file")
    try:
        conn = sqlite3.connect(_read_only_uri(path), uri=True)
        try:
            journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
            has_schema = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
            ).fetchone()
            done = (
                {n for (n,) in conn.execute("SELECT version FROM schema_migrations")}
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
            f"needs migrations {pending} that a read-only open does not apply;"
            " open it once read-write (e.g. `memcommit log --store ...`) to upgrade it",
        )
    if journal.lower() != "wal":
        raise InvalidInput(
            "store", target, f"is in {journal} journal mode; memcommit stores use WAL"
        )


register("sqlite", SQLiteBackend)
