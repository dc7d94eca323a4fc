"""How a PostgreSQL commit lands: its COMMIT frees the writers' lock, a flush after it is awaited.

Commits are ordered by one lock per store (`PostgresBackend.begin` takes it with
the tip), and a transaction's locks go only when its COMMIT has finished. With
the server's default ``synchronous_commit`` that includes the WAL flush (an fsync,
milliseconds on most disks), so every writer would wait for every other's flush
in turn. Instead the commit's own transaction runs with ``synchronous_commit =
off`` (its COMMIT returns, and frees the lock, once the commit is in the WAL), and
right after it, in the same round trip, `FLUSH` commits a transaction that writes
WAL with the session's own setting: its flush covers everything before it, this
commit included, and the server shares one flush among the writers waiting at once.
A writer hears "landed" only after that flush (docs/postgres.md, "Many writers").

`Landing` is that part of `PostgresBackend`: sending the queued writes with
COMMIT and the flush, the answer after a lost connection (`_landed`), rollback.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from memcommit.errors import Unavailable
from memcommit.store.backends import sql as common
from memcommit.store.backends.postgres_errors import lost, mapped, translated, unencodable

T = TypeVar("T")
IDLE = psycopg.pq.TransactionStatus.IDLE
#: How a writer's transaction starts: each statement sees what is committed when it runs,
#: so what it reads after the lock is what the lock orders it after, whatever isolation
#: the session defaults to (``default_transaction_isolation``).
BEGIN = "BEGIN ISOLATION LEVEL READ COMMITTED"
#: The tip row's columns (every commit column but the changes), and the newest commit's row.
TIP = common.names(common.COMMIT[:-1])
TIP_SQL = f"SELECT {TIP} FROM commits ORDER BY seq DESC LIMIT 1"

#: A transaction that writes WAL (an empty logical message) and waits for its flush, which
#: is the flush of every commit before it in the WAL: one statement, its own transaction on
#: an autocommit connection or after COMMIT in a pipeline (committed at the pipeline's sync).
FLUSH = ("SELECT pg_logical_emit_message(true, 'memcommit', '')",)


class Landing:
    """COMMIT, the shared flush, and what a writer is told when its connection is lost."""

    lock_timeout: float
    #: ``SET LOCAL lock_timeout ...; <the advisory lock>``: what a writer runs first.
    _lock_wait: str
    #: `_lock_wait` as the calls of one SELECT: set_config of lock_timeout, then the lock.
    _lock_calls: str
    _begin_sql: bytes
    _pool: ConnectionPool
    _tx: psycopg.Connection | None
    _tx_thread: int | None
    _pending: tuple[int, str] | None  # (seq, id) of the commit written in the open tx
    _tip: tuple[Any, ...] | None
    _queued: list[common.Writes]
    _sealed: tuple[int, str] | None
    #: The commit `write` queued, as a tip row but its hash: the newest commit once it lands.
    _wrote: tuple[Any, ...] = ()
    _known: tuple[Any, ...] | None

    def _share_flushes(self, conn: psycopg.Connection) -> None:
        """Choose how commits wait for their flush: after the lock is gone, if allowed.

        Sets `_flush` and `_ordering` (the Store reads the tip right after `begin`,
        so `begin` reads it in the same round trip: `_locked_tip`). A role that may not
        write a logical message (its EXECUTE revoked) commits as before: its own
        COMMIT waits for the flush, under the lock.
        """
        (allowed,) = conn.execute(
            "SELECT has_function_privilege('pg_logical_emit_message(boolean, text, text)',"
            " 'EXECUTE')"
        ).fetchone() or (False,)
        self._flush: tuple[str, ...] = FLUSH if allowed else ()
        unflushed = "set_config('synchronous_commit', 'off', true), " if allowed else ""
        self._ordering = f"SELECT {unflushed}{self._lock_calls}"

    def _pooled(self, work: Callable[[psycopg.Connection], T], *, until: float = 0.0) -> T:
        """``work(conn)`` on a pooled connection, again on a fresh one if it was lost.

        Tried ``pool_size + 1`` times, or for as long as ``until`` (a `time.monotonic`
        deadline) has not passed. A server that takes no connection at all raises at
        once (`PoolTimeout`, after ``connect_timeout``).
        """
        attempt = 0
        while True:
            conn = self._checkout()
            try:
                return work(conn)
            except psycopg.Error as exc:
                attempt += 1
                more = attempt <= self._pool.max_size or time.monotonic() < until
                if not lost(exc, conn) or not more:
                    raise
            finally:
                self._pool.putconn(conn)

    def _checkout(self) -> psycopg.Connection:
        """A pooled connection. When this process holds every one (other threads' commits,
        reads and snapshots), it waits as long as a commit may keep its own (``lock_timeout``)
        rather than ``connect_timeout``, and says so if none comes back."""
        stats = self._pool.get_stats()
        full = stats["pool_size"] >= self._pool.max_size and not stats["pool_available"]
        if not full:
            return self._pool.getconn()
        try:
            return self._pool.getconn(timeout=self.lock_timeout)
        except PoolTimeout as exc:
            raise Unavailable(
                f"postgresql: all {self._pool.max_size} pooled connections of this process"
                f" stayed in use for {self.lock_timeout:g} s (commits, reads and snapshots of"
                " other threads); open the store with a larger pool_size"
            ) from exc

    def _send(self, conn: psycopg.Connection, *, commit: bool = False) -> None:
        """Send the queued row writes in one pipelined round trip; with ``commit``, then
        COMMIT and `_flush` in the same one."""
        queued, self._queued = self._queued, []
        if not queued and not commit:
            return
        # statements queue in the pipeline, which syncs once at the end (executemany
        # would open a nested pipeline, and sync again)
        with conn.pipeline(), conn.cursor() as cur:
            for w in queued:
                for text, rows in ((w.commit[0], [w.commit[1]]), w.versions, *w.updates):
                    for row in rows:
                        cur.execute(text, row)
            if commit:
                for text in ("COMMIT", *self._flush):
                    cur.execute(text)

    def commit(self) -> None:
        conn = self._tx
        assert conn is not None, "commit() outside begin()"
        pending, self._pending = self._pending, None
        try:
            self._send(conn, commit=True)
            if pending is not None and self._sealed is not None:
                self._known = (*self._wrote, self._sealed[1])
        except UnicodeEncodeError as exc:  # a value was refused before it was sent
            self.rollback()
            raise unencodable(exc) from exc
        except psycopg.Error as exc:
            error = translated(exc)
            if pending is None:
                raise error from exc
            if not isinstance(error, Unavailable):
                self.rollback()  # before `_landed` waits for the writers' lock this one holds
                if not self._landed(*pending):  # else only the flush failed: it landed
                    raise error from exc
                return
            # the lost connection goes back to the pool (which replaces it) before asking:
            # held, it would leave a pool of one nothing to ask with
            self._release()
            try:
                landed = self._landed(*pending)
            except Unavailable:
                raise Unavailable(
                    f"postgresql: connection lost while committing commit {pending[0]}"
                    f" (id {pending[1]}); whether it landed is unknown until the server is"
                    f" reachable again: look for it with store.show() ({exc})"
                ) from exc
            if not landed:
                raise Unavailable(
                    f"postgresql: connection lost while committing commit {pending[0]};"
                    f" it did not land ({exc})"
                ) from exc
        finally:
            self._release()

    def _landed(self, seq: int, commit_id: str) -> bool:
        """Whether commit ``seq`` is stored, asked once the lost transaction has surely ended."""
        return self._landed_row_where("seq = %s AND id = %s", (seq, commit_id)) is not None

    @mapped
    def _landed_row_where(self, where: str, params: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """The tip-shaped row of the commit ``where`` finds, asked under the writers' lock.

        A lost transaction's advisory lock is held until the server has finished it
        either way, so taking the lock first makes the answer final; a commit found is
        made durable (`_flush`) before the answer is given, as its own flush may not
        have run. A connection lost while asking is replaced, for as long as a writer
        would wait for the lock: only a server that takes no connection leaves it unknown.
        """

        def ask(conn: psycopg.Connection) -> tuple[Any, ...] | None:
            conn.execute(self._begin_sql)
            row = conn.execute(f"SELECT {TIP} FROM commits WHERE {where}", params).fetchone()
            conn.execute("ROLLBACK")
            if row is not None:
                with conn.pipeline(), conn.cursor() as cur:
                    for text in self._flush:
                        cur.execute(text)
            return row

        return self._pooled(ask, until=time.monotonic() + self.lock_timeout)

    def rollback(self) -> None:
        conn = self._tx
        if conn is None:
            return
        try:
            if not conn.closed and conn.info.transaction_status != IDLE:
                conn.execute("ROLLBACK")
        except psycopg.Error:
            pass  # the connection broke: the server has dropped its transaction already
        finally:
            self._release()

    def _release(self) -> None:
        conn, self._tx, self._tx_thread, self._pending = self._tx, None, None, None
        self._tip, self._queued = None, []
        if conn is not None:
            self._pool.putconn(conn)  # a broken connection is discarded and replaced
