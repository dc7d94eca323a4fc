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
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import quote

from memcommit.errors import BackendError, InvalidInput, Unavailable
from memcommit.model import Commit, Memory, Usage
from memcommit.store.backends import register
from memcommit.store.backends import sql as common
from memcommit.store.backends.base import Batch, MemoryQuery, TraceRow
from memcommit.store.backends.migrations import migrations, refuse_newer
from memcommit.store.ids import seq_of
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
            if "readonly database" in text and args and hasattr(args[0], "target"):
                raise BackendError(
                    f"sqlite: {args[0].target!r} is open read-only (read_only=True, or on"
                    " read-only media); nothing was written"
                ) from exc
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
_CHECKS = common.invariants(
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
_INSERT_COMMIT = common.insert_commit(SQLITE)
_UPSERT_TRACE = common.upsert_trace(SQLITE)
_INSERT_VERSION = common.insert_version(SQLITE)


class SQLiteBackend:
    """Commits and memory versions in one SQLite database."""

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
        # A store on read-only media (a read-only mount, an immutable file) opens for reading.
        read_only = read_only or (path != ":memory:" and os.path.isfile(path) and _unwritable(path))
        self.read_only = read_only
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
        conn.execute("PRAGMA secure_delete = ON")  # freed space is zeroed: purges leave nothing
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
            done = {r[0] for r in conn.execute("SELECT version FROM schema_migrations")}
            refuse_newer("sqlite", done, self.target)
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

    def applied_migrations(self) -> list[int]:
        """Numbers of the migrations this database has, in order."""
        return [
            r[0] for r in self._conn.execute("SELECT version FROM schema_migrations ORDER BY 1")
        ]

    # -- the write transaction ------------------------------------------------

    @_mapped
    def begin(self) -> None:
        if self.read_only:  # a read snapshot (an export); a write in it is refused by SQLite
            self._conn.execute("BEGIN")
            return
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
            self._tip, self._tip_at = (None if row is None else (row[0], row[1])), seen
        return self._tip

    @_mapped
    def write(self, batch: Batch) -> None:
        conn = self._conn
        c = batch.commit
        conn.execute(_INSERT_COMMIT, common.commit_row(batch, SQLITE))
        seq = c.seq
        self._written = (c.seq, c.id)
        if len(batch.versions) == 1:
            conn.execute(_INSERT_VERSION, common.memory_row(batch.versions[0], None, SQLITE))
        elif batch.versions:
            conn.executemany(  # a generator: rows are made and dropped one at a time
                _INSERT_VERSION,
                (
                    common.memory_row(m, seq if ended else None, SQLITE)
                    for m, ended in zip(batch.versions, batch.ended, strict=False)
                ),
            )
        if batch.closes:
            conn.executemany(
                "UPDATE versions SET end_seq = ? WHERE id = ? AND version = ?",
                [(seq, mid, version) for mid, version in batch.closes],
            )
        if batch.purges:
            conn.executemany(
                "UPDATE versions SET content = '', tags = '[]', metadata = '{}' WHERE id = ?",
                [(mid,) for mid in batch.purges],
            )
        if batch.traces:
            conn.executemany(_UPSERT_TRACE, common.trace_rows(batch, SQLITE))

    # -- reads -------------------------------------------------------------------

    @_mapped
    def commits(
        self, *, seqs: Sequence[int] | None = None, after: int = 0, upto: int | None = None,
        newest_first: bool = True, limit: int | None = None, changes: bool = True,
    ) -> list[tuple[Commit, list[str | None]]]:  # fmt: skip
        sql, params = common.commits_sql(SQLITE, seqs, after, upto, newest_first, limit, changes)
        return [common.row_to_commit(r, SQLITE) for r in self._conn.execute(sql, params)]

    @_mapped
    def commit_seq(self, commit_id: str) -> int | None:
        seq = seq_of(commit_id)
        if seq is None:
            return None
        row = self._conn.execute(
            "SELECT seq FROM commits WHERE seq = ? AND id = ?", (seq, commit_id)
        ).fetchone()
        return None if row is None else row[0]

    @_mapped
    def seq_at(self, time: datetime) -> int:
        row = self._conn.execute(
            "SELECT max(seq) FROM commits WHERE time <= ?", (to_text(time),)
        ).fetchone()
        return row[0] or 0

    @_mapped
    def memories(self, query: MemoryQuery) -> list[Memory]:
        sql, params = common.memories_sql(query, SQLITE)
        return [common.row_to_memory(r, SQLITE) for r in self._conn.execute(sql, params)]

    @_mapped
    def versions(self, ids: Sequence[str]) -> dict[str, int]:
        if not ids:
            return {}
        sql, params = common.versions_sql(SQLITE, ids)
        return dict(self._conn.execute(sql, params).fetchall())

    @_mapped
    def history(self, memory_id: str) -> list[Memory]:
        rows = self._conn.execute(
            f"SELECT {common.COLUMNS} FROM versions WHERE id = ? ORDER BY version", (memory_id,)
        )
        return [common.row_to_memory(r, SQLITE) for r in rows]

    @_mapped
    def traces(
        self, *, ids: Sequence[str] | None = None, tenant: str | None = None,
        as_of: int | None = None, status: str | None = None, unmarked: str | None = None,
        after: str | None = None, limit: int | None = None,
    ) -> list[TraceRow]:  # fmt: skip
        sql, params = common.traces_sql(SQLITE, ids, tenant, as_of, status, unmarked, after, limit)
        return [common.row_to_trace(r, SQLITE) for r in self._conn.execute(sql, params)]

    @_mapped
    def tenants(self, as_of: int | None = None) -> list[str]:
        if as_of is None:
            sql, params = "SELECT DISTINCT tenant FROM versions WHERE end_seq IS NULL", ()
        else:
            sql = "SELECT DISTINCT tenant FROM versions WHERE seq <= ?"
            params = (as_of,)
        return sorted(r[0] for r in self._conn.execute(sql, params))

    @_mapped
    def tier_counts(
        self, tiers: Sequence[str] | None, tenant: str | None, always: bool | None
    ) -> dict[tuple[str, str, str], int]:
        sql, params = common.tier_counts_sql(SQLITE, tiers, tenant, always)
        rows = self._conn.execute(sql, params)
        return {(r[0], r[1], r[2]): r[3] for r in rows}

    # -- use counts and small state ----------------------------------------------

    @_mapped
    def record_uses(self, ids: Sequence[str]) -> dict[str, Usage]:
        current = self.usage(set(ids))
        tick = common.counted(current, ids, int(self.state_get(*common.USE_TICK) or 0))
        self._conn.executemany(
            common.upsert_usage(SQLITE),
            [(mid, u.count, u.first_tick, u.last_tick) for mid, u in current.items()],
        )
        self.state_set(*common.USE_TICK, str(tick))
        return current

    @_mapped
    def usage(self, ids: Iterable[str] | None = None) -> dict[str, Usage]:
        found = common.usage_sql(SQLITE, ids)
        if found is None:
            return {}
        sql, params = found
        return {r[0]: Usage(r[1], r[2], r[3]) for r in self._conn.execute(sql, params)}

    @_mapped
    def state_get(self, namespace: str, key: str) -> str | None:
        row = self._conn.execute(
            "SELECT value FROM state WHERE namespace = ? AND name = ?", (namespace, key)
        ).fetchone()
        return None if row is None else row[0]

    @_mapped
    def state_set(self, namespace: str, key: str, value: str) -> None:
        self._conn.execute(
            "INSERT INTO state (namespace, name, value) VALUES (?, ?, ?)"
            " ON CONFLICT (namespace, name) DO UPDATE SET value = excluded.value",
            (namespace, key, value),
        )

    @_mapped
    def state_items(self) -> list[tuple[str, str, str]]:
        return self._conn.execute(
            "SELECT namespace, name, value FROM state ORDER BY namespace, name"
        ).fetchall()

    @_mapped
    def scrub(self) -> bool:
        """Checkpoint the WAL into the file (zeroed by ``secure_delete``) and truncate it.

        A purge's old page images live on in the ``-wal`` file until then. False
        when another connection's read held the checkpoint back.
        """
        busy, _, _ = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return busy == 0

    # -- integrity -----------------------------------------------------------------

    @_mapped
    def check(self, *, full: bool = False) -> list[str]:
        """SQLite's page checks (``quick_check``; ``integrity_check`` when ``full``), then ours."""
        conn = self._conn
        found = []
        pragma = "integrity_check" if full else "quick_check"
        pages = [r[0] for r in conn.execute(f"PRAGMA {pragma}")]
        if pages != ["ok"]:
            found.append(f"sqlite {pragma}: {'; '.join(pages[: common.SAMPLE])}")
        broken_links = conn.execute("PRAGMA foreign_key_check").fetchmany(common.SAMPLE)
        if broken_links:
            found.append(f"foreign key broken: {broken_links}")
        return found + common.broken(conn, _CHECKS) + common.undecodable(conn, SQLITE)

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


def _unwritable(path: str) -> bool:
    """True when ``path`` or its folder cannot be written (read-only media, immutable file).

    SQLite needs both writable for a read-write open of a WAL store (it makes the
    ``-wal`` and ``-shm`` files beside it).
    """
    folder = os.path.dirname(os.path.abspath(path))
    return not (os.access(path, os.W_OK) and os.access(folder, os.W_OK))


def _read_only_uri(path: str) -> str:
    """The ``file:`` URI opening ``path`` read-only (never creating it).

    On read-only media nobody can be writing it, and SQLite could not make the
    shared-memory file a WAL read needs: ``immutable=1`` reads it without one.
    """
    extra = "&immutable=1" if _unwritable(path) else ""
    return "file:" + quote(os.path.abspath(path)) + "?mode=ro" + extra


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
    refuse_newer("sqlite", done, target)
    pending = [number for number, _, _ in migrations("sqlite") if number not in done]
    if pending:
        raise InvalidInput(
            "store",
            target,
            f"needs migrations {pending} that a read-only open does not apply;"
            " open it once read-write (e.g. `memcommit log --store ...`) to upgrade it",
        )
    if journal.lower() != "wal" and not _unwritable(path):  # immutable reads report "delete"
        raise InvalidInput(
            "store", target, f"is in {journal} journal mode; memcommit stores use WAL"
        )


register("sqlite", SQLiteBackend)
