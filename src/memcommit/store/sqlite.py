"""The embedded backend: one SQLite file (or ``:memory:``) through the stdlib ``sqlite3``.

WAL journal so readers never block the writer, foreign keys on, a busy timeout
so concurrent writers queue instead of failing, and ``BEGIN IMMEDIATE`` for
every commit so the sequence number is taken under the writers' lock.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from memcommit.errors import BackendError, InvalidInput, Unavailable
from memcommit.model import Commit, Memory, Usage
from memcommit.store import backend as registry
from memcommit.store.backend import Batch, Query, TraceRow
from memcommit.store.ids import seq_of
from memcommit.store.records import change, from_text, memory, to_text
from memcommit.store.records import commit as make_commit
from memcommit.store.schema import migrations
from memcommit.store.validate import seconds

SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")
#: Page cache per connection, in KiB (SQLite's default is 2 MiB). A commit that writes
#: new versions beside old ones all over a large file (compaction) rereads fewer pages.
CACHE_KIB = 64 * 1024

_COLUMNS = (
    "id, version, content, kind, scope, tenant, session, mkey, importance, tags, project,"
    " always, token_count, trace_id, step, metadata, valid_from, valid_to, superseded_by,"
    " status, tier, created_at, created_commit, updated_at, seq"
)
_INSERT_VERSION = (
    "INSERT INTO versions (id, version, content, kind, scope, tenant, session, mkey,"
    " importance, tags, project, always, token_count, trace_id, step, metadata, valid_from,"
    " valid_to, superseded_by, status, tier, created_at, created_commit, updated_at, seq,"
    " end_seq) VALUES (" + ", ".join("?" * 26) + ")"
)
_TRACE_COLUMNS = (
    "id, tenant, scope, session, status, last_step, started_seq, started_at, ended_seq, ended_at"
)
_TRACE_SELECT = ", ".join("t." + c for c in _TRACE_COLUMNS.split(", "))
_USE_TICK = ("memcommit", "use_tick")
_compact_json = json.JSONEncoder(separators=(",", ":")).encode

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


def _row_to_memory(r: tuple) -> Memory:
    tags = r[9]
    meta = r[15]
    return memory(
        {
            "id": r[0],
            "content": r[2],
            "kind": r[3],
            "scope": r[4],
            "tenant": r[5],
            "session": r[6],
            "key": r[7],
            "importance": r[8],
            "tags": () if tags == "[]" else tuple(json.loads(tags)),
            "project": r[10],
            "always": bool(r[11]),
            "token_count": r[12],
            "trace_id": r[13],
            "step": r[14],
            "metadata": {} if meta == "{}" else json.loads(meta),
            "valid_from": None if r[16] is None else datetime.fromisoformat(r[16]),
            "valid_to": None if r[17] is None else datetime.fromisoformat(r[17]),
            "superseded_by": r[18],
            "status": r[19],
            "tier": r[20],
            "version": r[1],
            "created_at": datetime.fromisoformat(r[21]),
            "created_commit": r[22],
            "updated_at": datetime.fromisoformat(r[23]),
            "updated_commit": r[24],
        }
    )


def _memory_row(m: Memory, end_seq: int | None) -> tuple:
    return (
        m.id,
        m.version,
        m.content,
        m.kind,
        m.scope,
        m.tenant,
        m.session,
        m.key,
        m.importance,
        json.dumps(list(m.tags)) if m.tags else "[]",
        m.project,
        m.always,
        m.token_count,
        m.trace_id,
        m.step,
        json.dumps(m.metadata, sort_keys=True) if m.metadata else "{}",
        to_text(m.valid_from),
        to_text(m.valid_to),
        m.superseded_by,
        m.status,
        m.tier,
        to_text(m.created_at),
        m.created_commit,
        to_text(m.updated_at),
        m.updated_commit,
        end_seq,
    )


def _row_to_commit(r: tuple) -> tuple[Commit, list[str | None]]:
    changes = []
    tenants = []
    for item in json.loads(r[6]) if r[6] != "[]" else ():
        changes.append(change(item[0], item[1], item[2], item[4] if len(item) > 4 else {}))
        tenants.append(item[3])
    made = make_commit(r[0], r[1], r[2], datetime.fromisoformat(r[3]), r[4], r[5], tuple(changes))
    return made, tenants


def _row_to_trace(r: tuple) -> TraceRow:
    return TraceRow(
        r[0], r[1], r[2], r[3], r[4], r[5], r[6], from_text(r[7]), r[8], from_text(r[9])
    )


def _in(column: str, values: Sequence[Any], params: list[Any]) -> str:
    if len(values) == 1:
        params.append(values[0])
        return f"{column} = ?"
    params.append(json.dumps(list(values)))
    return f"{column} IN (SELECT value FROM json_each(?))"


def _status_at(status: str, as_of: int | None, params: list[Any]) -> str:
    """The condition "trace t was in ``status`` at ``as_of``" (one that ended later was open)."""
    if as_of is None:
        params.append(status)
        return "t.status = ?"
    if status == "open":
        params.append(as_of)
        return "(t.ended_seq IS NULL OR t.ended_seq > ?)"
    params += [status, as_of]
    return "t.status = ? AND t.ended_seq <= ?"


class SQLiteBackend:
    """Commits and memory versions in one SQLite database."""

    @_mapped
    def __init__(self, target: str, *, synchronous: str = "FULL", busy_timeout: float = 30.0):
        path = target.removeprefix("sqlite://") or ":memory:"
        if synchronous not in SYNCHRONOUS:
            raise InvalidInput("synchronous", synchronous, f"must be one of {SYNCHRONOUS}")
        busy_timeout = seconds("busy_timeout", busy_timeout)
        self.target = path
        try:
            conn = sqlite3.connect(
                path, isolation_level=None, check_same_thread=False, timeout=busy_timeout
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
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {synchronous}")
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
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
        changes = _compact_json(
            [
                [ch.op, ch.memory_id, ch.version, tenant, ch.detail]
                if ch.detail
                else [ch.op, ch.memory_id, ch.version, tenant]
                for ch, tenant in zip(c.changes, batch.tenants, strict=False)
            ]
        )
        conn.execute(
            "INSERT INTO commits (seq, id, parent, time, author, message, changes)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (c.seq, c.id, c.parent, to_text(c.time), c.author, c.message, changes),
        )
        seq = c.seq
        self._written = (c.seq, c.id)
        if len(batch.versions) == 1:
            conn.execute(_INSERT_VERSION, _memory_row(batch.versions[0], None))
        elif batch.versions:
            conn.executemany(  # a generator: rows are made and dropped one at a time
                _INSERT_VERSION,
                (
                    _memory_row(m, seq if ended else None)
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
            conn.executemany(
                f"INSERT INTO traces ({_TRACE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (id) DO UPDATE SET status = excluded.status,"
                " last_step = excluded.last_step, ended_seq = excluded.ended_seq,"
                " ended_at = excluded.ended_at",
                [
                    (t.id, t.tenant, t.scope, t.session, t.status, t.last_step, t.started_seq,
                     to_text(t.started_at), t.ended_seq, to_text(t.ended_at))
                    for t in batch.traces
                ],
            )  # fmt: skip

    # -- reads -------------------------------------------------------------------

    @_mapped
    def commits(
        self, *, seqs: Sequence[int] | None = None, after: int = 0, upto: int | None = None,
        newest_first: bool = True, limit: int | None = None, changes: bool = True,
    ) -> list[tuple[Commit, list[str | None]]]:  # fmt: skip
        where = ["seq > ?"]
        params: list[Any] = [after]
        if upto is not None:
            where.append("seq <= ?")
            params.append(upto)
        if seqs is not None:
            where.append(_in("seq", list(seqs), params))
        sql = (
            "SELECT seq, id, parent, time, author, message, "
            + ("changes" if changes else "'[]'")
            + " FROM commits WHERE "
            + " AND ".join(where)
            + (" ORDER BY seq DESC" if newest_first else " ORDER BY seq")
        )
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [_row_to_commit(r) for r in self._conn.execute(sql, params)]

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
    def memories(self, query: Query) -> list[Memory]:
        where: list[str] = []
        params: list[Any] = []
        if query.as_of is None:
            where.append("end_seq IS NULL")
        else:
            where.append("seq <= ? AND (end_seq IS NULL OR end_seq > ?)")
            params += [query.as_of, query.as_of]
        if query.ids is not None:
            where.append(_in("id", query.ids, params))
        if query.tenant is not None:
            # with ids, look them up by id: "+" keeps SQLite off the tenant index (a scan)
            where.append("tenant = ?" if query.ids is None else "+tenant = ?")
            params.append(query.tenant)
        for column, values in (
            ("scope", query.scopes),
            ("kind", query.kinds),
            ("session", query.sessions),
            ("tier", query.tiers),
        ):
            if values is not None:
                where.append(_in(column, values, params) if values else "0")
        if query.key is not None:
            where.append("mkey = ?")
            params.append(query.key)
        if query.trace is not None:
            where.append("trace_id = ?")
            params.append(query.trace)
        if query.traces is not None:
            where.append(_in("trace_id", query.traces, params) if query.traces else "0")
        if query.since is not None:
            where.append("created_at >= ?")
            params.append(to_text(query.since))
        if query.until is not None:
            where.append("created_at <= ?")
            params.append(to_text(query.until))
        if query.live_at is not None:
            at = to_text(query.live_at)
            where.append(
                "status = 'active' AND superseded_by IS NULL"
                " AND (valid_from IS NULL OR valid_from <= ?)"
                " AND (valid_to IS NULL OR valid_to > ?)"
            )
            params += [at, at]
        sql = f"SELECT {_COLUMNS} FROM versions WHERE " + " AND ".join(where)
        if query.trace is not None:
            sql += " ORDER BY step, id"
        elif query.traces is not None:
            sql += " ORDER BY trace_id, step, id"
        else:
            sql += " ORDER BY id"
        if query.limit is not None:
            sql += f" LIMIT {int(query.limit)}"
        return [_row_to_memory(r) for r in self._conn.execute(sql, params)]

    @_mapped
    def versions(self, ids: Sequence[str]) -> dict[str, int]:
        if not ids:
            return {}
        params: list[Any] = []
        sql = "SELECT id, version FROM versions WHERE end_seq IS NULL AND " + _in("id", ids, params)
        return dict(self._conn.execute(sql, params).fetchall())

    @_mapped
    def history(self, memory_id: str) -> list[Memory]:
        rows = self._conn.execute(
            f"SELECT {_COLUMNS} FROM versions WHERE id = ? ORDER BY version", (memory_id,)
        )
        return [_row_to_memory(r) for r in rows]

    @_mapped
    def traces(
        self, *, ids: Sequence[str] | None = None, tenant: str | None = None,
        as_of: int | None = None, status: str | None = None, unmarked: str | None = None,
        after: str | None = None, limit: int | None = None,
    ) -> list[TraceRow]:  # fmt: skip
        where = ["1"]
        params: list[Any] = []
        if ids is not None:
            where.append(_in("t.id", ids, params))
        if tenant is not None:
            where.append("t.tenant = ?")
            params.append(tenant)
        if as_of is not None:
            where.append("t.started_seq <= ?")
            params.append(as_of)
        if status is not None:
            where.append(_status_at(status, as_of, params))
        if unmarked is not None:
            # the root is the memory named like the trace; its version at as_of
            live = (
                "r.end_seq IS NULL"
                if as_of is None
                else "r.seq <= ? AND (r.end_seq IS NULL OR r.end_seq > ?)"
            )
            params += [] if as_of is None else [as_of, as_of]
            where.append(
                f"NOT EXISTS (SELECT 1 FROM versions r WHERE r.id = t.id AND {live}"
                " AND r.metadata != '{}' AND EXISTS (SELECT 1 FROM json_each(r.metadata) AS j"
                " WHERE j.key = ?))"
            )
            params.append(unmarked)
        if after is not None:
            where.append(
                "(t.started_seq, t.id) > (SELECT started_seq, id FROM traces WHERE id = ?)"
            )
            params.append(after)
        sql = f"SELECT {_TRACE_SELECT} FROM traces t WHERE " + " AND ".join(where)
        sql += " ORDER BY t.started_seq, t.id"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [_row_to_trace(r) for r in self._conn.execute(sql, params)]

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
        where = ["end_seq IS NULL"]
        params: list[Any] = []
        if tiers is not None:
            where.append(_in("tier", tiers, params) if tiers else "0")
        for column, value in (("tenant", tenant), ("always", always)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        sql = "SELECT tier, tenant, scope, count(*) FROM versions WHERE " + " AND ".join(where)
        rows = self._conn.execute(sql + " GROUP BY tier, tenant, scope", params)
        return {(r[0], r[1], r[2]): r[3] for r in rows}

    # -- use counts and small state ----------------------------------------------

    @_mapped
    def record_uses(self, ids: Sequence[str]) -> dict[str, Usage]:
        current = self.usage(set(ids))
        tick = int(self.state_get(*_USE_TICK) or 0)
        for mid in ids:
            tick += 1
            old = current.get(mid)
            current[mid] = (
                Usage(1, tick, tick) if old is None else Usage(old.count + 1, old.first_tick, tick)
            )
        self._conn.executemany(
            "INSERT INTO usage (id, count, first_tick, last_tick) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET count = excluded.count,"
            " last_tick = excluded.last_tick",
            [(mid, u.count, u.first_tick, u.last_tick) for mid, u in current.items()],
        )
        self.state_set(*_USE_TICK, str(tick))
        return current

    @_mapped
    def usage(self, ids: Iterable[str] | None = None) -> dict[str, Usage]:
        sql = "SELECT id, count, first_tick, last_tick FROM usage"
        params: list[Any] = []
        if ids is not None:
            ids = list(ids)
            if not ids:
                return {}
            sql += " WHERE " + _in("id", ids, params)
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

    # -- integrity -----------------------------------------------------------------

    @_mapped
    def check(self) -> list[str]:
        from memcommit.store.sqlite_check import problems

        return problems(self._conn)

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


registry.register("sqlite", SQLiteBackend)
