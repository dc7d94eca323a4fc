"""The shared backend: one PostgreSQL schema per store, through psycopg 3 and a connection pool.

Many processes on many hosts may write one store. Every commit takes a
transaction-level advisory lock keyed on the store's schema before it reads the
tip, so sequence numbers are gap-free and an expected version is checked against
what really is current; the lock goes with the transaction (commit, rollback, or
a dropped connection), and its COMMIT does not wait for the WAL flush: the flush
is awaited after it (`postgres_landing`), so writers share flushes. Reads run on
pooled autocommit connections, except inside a commit, where they see what the
commit's own transaction sees.

    memcommit.open("postgresql://user@host/db?schema=agents")   # or open(url, schema="agents")

Options of ``open()``: ``schema`` (default "memcommit"; created on open),
``connect_timeout`` (seconds to reach the server, default 5), ``lock_timeout``
(seconds a commit waits for other writers, default 30), ``pool_size``
(connections per store, default 4). Anything libpq understands goes in the URL.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlsplit

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout

from memcommit.errors import InvalidInput, Unavailable
from memcommit.model import Commit
from memcommit.store.backends import register
from memcommit.store.backends import sql as common
from memcommit.store.backends.base import Batch, user_cache
from memcommit.store.backends.chain import Chained
from memcommit.store.backends.postgres_errors import lost, mapped, translated
from memcommit.store.backends.postgres_landing import BEGIN
from memcommit.store.backends.postgres_locks import Partitions
from memcommit.store.backends.postgres_schema import LEDGER, SchemaUpkeep
from memcommit.store.backends.postgres_sequence import Sequencing
from memcommit.store.backends.postgres_url import DEFAULT_SCHEMA, shown, split_target
from memcommit.store.validate import flag

_LOCK_SPACE = 0x6D656D63  # "memc": first key of every advisory lock memcommit takes
#: Above this many new versions a commit streams them with COPY instead of INSERTs; up
#: to it, `sql.writes` makes the rows (and the hash) at once, so they can wait in the queue.
_COPY_FROM = common.SEAL_FIRST
_COPY_VERSIONS = f"COPY versions ({common.names(common.VERSION_ROW)}) FROM STDIN"
#: Where the hash sits in the tip row `begin` reads (every commit column but the changes).
_TIP_HASH = [c.name for c in common.COMMIT].index("hash")

T = TypeVar("T")

# psycopg passes times, flags and lists as Python values, so they go as they are.
POSTGRES = common.Dialect(
    mark="%s",
    true="true",
    false="false",
    in_many="{column} = ANY(%s)",  # one array parameter
    pack=list,
    has_key="r.metadata::jsonb ? %s",
    step_order="step NULLS FIRST",
)
#: The shared invariants (`sql.invariants`) in PostgreSQL's spelling.
CHECKS = common.invariants(
    is_not="IS DISTINCT FROM",
    seq_hex="lpad(to_hex(seq), 12, '0')",
    one_current="count(*) FILTER (WHERE end_seq IS NULL)",
    current_version="max(version) FILTER (WHERE end_seq IS NULL)",
)


class PostgresBackend(Sequencing, SchemaUpkeep, Chained, common.SQLBackend):
    """Commits and memory versions in one schema of a PostgreSQL database."""

    dialect = POSTGRES
    checks = CHECKS

    def __init__(
        self,
        target: str,
        *,
        schema: str | None = None,
        connect_timeout: float = 5.0,
        lock_timeout: float = 30.0,
        pool_size: int = 4,
        read_only: bool = False,
        progress: Callable[[int, int], None] | None = None,
        partitions: int | None = None,
    ) -> None:
        if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
            raise InvalidInput("pool_size", pool_size, "must be an integer >= 1")
        if partitions is not None and (
            isinstance(partitions, bool) or not isinstance(partitions, int)
            or not 1 <= partitions <= 100
        ):  # fmt: skip
            raise InvalidInput("partitions", partitions, "must be an integer from 1 to 100")
        self.partitions = partitions
        if isinstance(lock_timeout, bool) or not isinstance(lock_timeout, int | float):
            raise InvalidInput("lock_timeout", lock_timeout, "must be a number of seconds")
        if not 0 < lock_timeout <= 86400:
            raise InvalidInput("lock_timeout", lock_timeout, "must be between 0 and 86400 seconds")
        self.lock_timeout = lock_timeout
        if progress is not None and not callable(progress):
            raise InvalidInput("progress", progress, "must be callable as progress(done, total)")
        conninfo, self.schema = split_target(target, schema, connect_timeout)
        self._conninfo = conninfo
        # the URL as the user typed it (password masked); the schema when the URL names none
        named = "schema" in dict(parse_qsl(urlsplit(target).query))
        self.target = shown(target) if named else f"{shown(target)} (schema {self.schema})"
        self._lock_sql = (
            f"SELECT pg_advisory_xact_lock({_LOCK_SPACE},"
            f" {zlib.crc32(self.schema.encode()) - (1 << 31)})"
        )
        # a writer waits for the store's lock at most lock_timeout, as SQLite's busy_timeout
        wait = f"{max(1, round(lock_timeout * 1000))}ms"
        self._wait_sql = f"SET LOCAL lock_timeout = '{wait}'"
        self._lock_wait = f"{self._wait_sql}; {self._lock_sql}"
        # the same as the calls of one statement, taken in order (one round trip's statement)
        self._lock_calls = (
            f"set_config('lock_timeout', '{wait}', true), {self._lock_sql.removeprefix('SELECT ')}"
        )
        self._begin_sql = f"{BEGIN}; {self._lock_wait}".encode()
        flag("read_only", read_only)
        # read_only: every transaction of every connection is refused writes by the server
        setup = "SET search_path TO {}; SET TIME ZONE 'UTC'"
        if read_only:
            setup += "; SET default_transaction_read_only = on"
        self._setup = sql.SQL(setup).format(sql.Identifier(self.schema))
        try:
            with psycopg.connect(conninfo, autocommit=True) as conn:
                self._configure(conn)
                self._share_flushes(conn)  # `_flush` and `_ordering`
                if read_only:
                    self._require_current(conn)
                else:
                    self._migrate(conn, progress)
        except psycopg.Error as exc:
            kind = type(translated(exc))
            raise kind(f"postgresql: cannot open {self.target}: {str(exc).strip()}") from exc
        self._pool = ConnectionPool(
            conninfo,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True},
            configure=self._configure,
            timeout=float(connect_timeout),
            name=f"memcommit-{self.schema}",
            open=False,
        )
        try:
            self._pool.open(wait=True, timeout=float(connect_timeout) * 2)
        except PoolTimeout as exc:
            self._pool.close()
            raise Unavailable(f"postgresql: cannot open {self.target}: {exc}") from exc
        self._tx: psycopg.Connection | None = None
        self._tx_thread: int | None = None
        self._pending: tuple[int, str] | None = None
        self._tip: tuple[Any, ...] | None = (
            None  # the newest commit row, read by begin() under the lock
        )
        self._queued: list[common.Writes] = []  # row writes of the open tx not sent yet
        self._partitions = Partitions()  # locked before the writers' lock (`postgres_locks`)
        #: Each thread's read snapshot (`begin_read`), on a pooled connection of its own: a
        #: commit through this backend in another thread neither waits for it nor ends it.
        self._readers: dict[int, psycopg.Connection] = {}

    # -- connections ---------------------------------------------------------------

    @property
    def reads_beside_commits(self) -> bool:
        """On pooled connections of their own (`_run`), when the pool has more than one:
        with ``pool_size=1`` a read waits for the commit that holds it, as on SQLite."""
        return self._pool.max_size > 1

    def _mine(self) -> bool:
        return self._tx is not None and self._tx_thread == threading.get_ident()

    def _run(self, work: Callable[[psycopg.Connection], T]) -> T:
        """``work(conn)`` on the open commit's connection, else on a pooled one.

        A pooled connection may have died while idle (server restart, terminated
        backend): the pool drops it and the read is tried again on a fresh one. The
        open commit's connection lost is the commit lost: its writer is told it did not land.
        """
        if self._mine():
            self._read_orders()  # an unordered commit is ordered before it reads
            conn = self._tx
            assert conn is not None
            try:
                self._send(conn)  # the transaction reads what it wrote
                return work(conn)
            except psycopg.Error as exc:
                seq = self._open_seq()
                if seq is None or not lost(exc, conn):
                    raise
                # its COMMIT was never sent: the transaction ends with its session, undone
                raise Unavailable(
                    f"postgresql: connection lost inside commit {seq}, before its COMMIT was"
                    f" sent; it did not land ({str(exc).strip()})"
                ) from exc
        reader = self._readers.get(threading.get_ident()) if self._readers else None
        if reader is not None:
            return work(reader)
        return self._pooled(work)

    def _open_seq(self) -> int | None:
        """The seq of this thread's open commit; None in a read snapshot (`begin_read`)."""
        if self._pending is not None:  # written
            return self._pending[0]
        if self._tip is not None:  # ordered: the tip read under the lock (() for none)
            return self._tip[0] + 1 if self._tip else 1
        return None

    # -- the write transaction -----------------------------------------------------

    @mapped
    def begin(self) -> None:
        for attempt in range(self._pool.max_size + 1):
            conn = self._checkout()
            try:
                tip = self._locked_tip(conn)
            except psycopg.Error as exc:
                self._pool.putconn(conn)
                if not lost(exc, conn) or attempt == self._pool.max_size:
                    raise
                continue
            except BaseException:
                self._pool.putconn(conn)
                raise
            self._tx, self._tx_thread, self._pending = conn, threading.get_ident(), None
            self._tip, self._sealed = tip, None
            return

    @mapped
    def begin_read(self) -> None:
        """A repeatable-read, read-only transaction of this thread: one snapshot, no lock.
        Refused inside this thread's own commit (its rollback would end the commit)."""
        if self._mine():
            raise InvalidInput(
                "snapshot",
                "inside a commit",
                "a read snapshot (export, verify, migrate) runs outside a commit",
            )
        conn = self._checkout()
        try:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        except BaseException:
            self._pool.putconn(conn)
            raise
        self._readers[threading.get_ident()] = conn

    def rollback(self) -> None:
        """Drop this thread's open commit, else end its read snapshot."""
        reader = None
        if self._readers and not self._mine():
            reader = self._readers.pop(threading.get_ident(), None)
        if reader is None:
            super().rollback()
            return
        try:
            if not reader.closed:
                reader.execute("ROLLBACK")
        except psycopg.Error:
            pass  # the connection broke: the server has dropped its transaction already
        finally:
            self._pool.putconn(reader)

    @mapped
    def write(self, batch: Batch) -> None:
        """Queue the commit's rows; they go out with COMMIT (or the transaction's next read).

        Sending them with COMMIT saves a round trip per commit. A big commit
        streams its versions with COPY at once instead.
        """
        conn = self._tx
        assert conn is not None, "write() outside begin()"
        c = batch.commit
        if self._unordered:  # the server orders it as it lands
            self._queue_sequenced(batch)
            return
        self._wrote = (c.seq, c.id, c.parent, c.time, c.author, c.message)
        w = self._writes(batch)  # reads (sending what is queued) only for a purge
        self._pending, self._tip = (c.seq, c.id), None
        if len(batch.versions) <= _COPY_FROM:  # its rows are made: the hash is known
            self._queued.append(w)
            self._sealed = (c.seq, w.hash())
            return
        try:
            self._send(conn)
            with conn.cursor() as cur:  # COPY cannot run in a pipeline
                cur.execute(*w.commit)
                with cur.copy(_COPY_VERSIONS) as copy:
                    for row in w.versions[1]:
                        copy.write_row(row)
            with conn.pipeline(), conn.cursor() as cur:
                for text, rows in (*w.updates, (w.seal[0], w.seal[1]())):
                    for row in rows:
                        cur.execute(text, row)
            self._sealed = (c.seq, w.hash())
        except psycopg.Error as exc:
            error = translated(exc)
            if isinstance(error, Unavailable):
                raise Unavailable(
                    f"postgresql: connection lost while writing commit {c.seq};"
                    f" it did not land ({exc})"
                ) from exc
            raise error from exc

    def _parent_hash(self, seq: int) -> str | None:
        """As `SQLBackend._parent_hash`; the tip read by `begin` answers without a read."""
        tip = self._tip
        if tip and tip[0] == seq and self._mine():
            return tip[_TIP_HASH]  # type: ignore[no-any-return]
        return super()._parent_hash(seq)

    # -- reads -----------------------------------------------------------------------

    def commits(
        self,
        *,
        seqs: Sequence[int] | None = None,
        after: int = 0,
        upto: int | None = None,
        newest_first: bool = True,
        limit: int | None = None,
        changes: bool = True,
    ) -> list[tuple[Commit, list[str | None]]]:
        """As `SQLBackend.commits`; inside a commit, the tip read by `begin` is not read again."""
        self._read_orders()
        tip = self._tip if self._mine() else None
        if tip is not None and not changes:  # the tip read by `begin`, or its time asked
            tip_only = seqs is None and not after and upto is None and newest_first and limit == 1
            if tip_only or (tip and seqs is not None and list(seqs) == [tip[0]]):
                return [self.rows.commit((*tip, "[]"))] if tip else []
        return super().commits(
            seqs=seqs,
            after=after,
            upto=upto,
            newest_first=newest_first,
            limit=limit,
            changes=changes,
        )

    def tip(self) -> tuple[int, str] | None:
        """As `SQLBackend.tip`; inside a commit, the tip read by `begin` is not read again."""
        self._read_orders()
        tip = self._tip if self._mine() else None
        if tip is None:
            return super().tip()
        return (tip[0], tip[1]) if tip else None

    @mapped
    def _select(self, text: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        encoded = text.encode()
        return self._run(lambda c: c.execute(encoded, params).fetchall())

    @mapped
    def _write_all(self, text: str, rows: Iterable[Sequence[Any]]) -> None:
        encoded, many = text.encode(), list(rows)

        def run(c: psycopg.Connection) -> None:
            with c.pipeline(), c.cursor() as cur:
                cur.executemany(encoded, many)

        self._run(run)

    def cache_dir(self, name: str, key: str) -> Path | None:
        """In the user's cache, by the store's identity: every URL spelling of it shares one."""
        return user_cache(name, key)

    def close(self) -> None:
        if self._tx is not None:
            self.rollback()
        self._pool.close()


register("postgresql", PostgresBackend)
register("postgres", PostgresBackend)


__all__ = ["DEFAULT_SCHEMA", "LEDGER", "POSTGRES", "PostgresBackend", "shown", "split_target"]
