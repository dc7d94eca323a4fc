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

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from memcommit.errors import BackendError, InvalidInput, StoreClosed, Unavailable
from memcommit.store.backends import register
from memcommit.store.backends import sql as common
from memcommit.store.backends.base import Batch
from memcommit.store.backends.chain import Chained, seal_history
from memcommit.store.backends.migrations import CHAIN_MIGRATION, missing, require_current, upgrade
from memcommit.store.records import from_text, to_text
from memcommit.store.validate import flag, seconds

SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")
#: Seconds a scrub's TRUNCATE checkpoint may keep the writers' lock while readers finish.
SCRUB_HOLD = 0.02
#: Page cache per connection, in KiB (SQLite's default is 2 MiB). A commit that writes
#: new versions beside old ones all over a large file (compaction) rereads fewer pages.
CACHE_KIB = 64 * 1024
#: The tenants with a current memory, one probe of ``versions_current`` per tenant (a loose
#: index scan): SQLite's DISTINCT reads every current memory's index entry instead, half
#: a second at 100k memories, where this takes a fraction of a millisecond. (PostgreSQL
#: keeps DISTINCT: there each probe would visit every partition's index.)
CURRENT_TENANTS = (
    "WITH RECURSIVE t(tenant) AS ("
    " SELECT min(tenant) FROM versions WHERE end_seq IS NULL"
    " UNION ALL SELECT (SELECT min(tenant) FROM versions"
    " WHERE end_seq IS NULL AND tenant > t.tenant) FROM t WHERE t.tenant IS NOT NULL"
    ") SELECT tenant FROM t WHERE tenant IS NOT NULL"
)
#: The ledger of applied migrations (`migrations.upgrade`).
LEDGER = (
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY,"
    " name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
)


def _translated(backend: object, exc: Exception) -> BackendError:
    """The memcommit error for a sqlite3 error of ``backend``."""
    text = str(exc)
    if isinstance(exc, sqlite3.OperationalError):
        if "readonly database" in text and hasattr(backend, "target"):
            return BackendError(
                f"sqlite: {backend.target!r} is open read-only (read_only=True, or on"
                f" read-only media); nothing was written ({text})"
            )
        if "unable to open" in text or "disk I/O" in text:
            return Unavailable(f"sqlite: {text}")
    return BackendError(f"sqlite: {text}")


_mapped = common.translating(sqlite3.Error, _translated)


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
    one_current="sum(end_seq IS NULL)",
    current_version="max(CASE WHEN end_seq IS NULL THEN version END)",
)


class SQLiteBackend(Chained, common.SQLBackend):
    """Commits and memory versions in one SQLite database."""

    dialect = SQLITE
    checks = CHECKS
    reads_beside_commits = False  # one connection: an open commit's writes are seen on it

    @_mapped
    def __init__(
        self,
        target: str,
        *,
        synchronous: str = "FULL",
        busy_timeout: float = 30.0,
        read_only: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ):
        path = target.removeprefix("sqlite://") or ":memory:"
        if synchronous not in SYNCHRONOUS:
            raise InvalidInput("synchronous", synchronous, f"must be one of {SYNCHRONOUS}")
        busy_timeout = seconds("busy_timeout", busy_timeout)
        flag("read_only", read_only)
        if progress is not None and not callable(progress):
            raise InvalidInput("progress", progress, "must be callable as progress(done, total)")
        self.target = path
        self._busy_timeout = busy_timeout
        # A store on read-only media (a read-only mount, an immutable file) opens for reading.
        read_only = read_only or (path != ":memory:" and os.path.isfile(path) and _unwritable(path))
        self.read_only = read_only
        if read_only:
            _check_readable(target, path)
        folder = os.path.dirname(os.path.abspath(path))
        if path != ":memory:" and not path.startswith("file:") and not os.path.isdir(folder):
            raise InvalidInput(
                "store", target, f"its folder {folder!r} does not exist: create it first"
            )
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
        #: Each thread's read snapshot (`begin_read`), on a connection of its own, so a
        #: commit through this backend in another thread neither waits for it nor ends it.
        self._readers: dict[int, sqlite3.Connection] = {}
        #: The file a snapshot's connection opens (a later chdir must not move it); None
        #: in memory, where a snapshot is a copy made while no commit is open (`_turn`).
        self._file = None if path == ":memory:" else os.path.abspath(path)
        self._turn = threading.Lock() if path == ":memory:" else None  # held by `_writer`
        self._closed = False
        self._writer: int | None = None  # the thread whose commit is open on the connection
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        try:  # the first statement that reads the file
            conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        except sqlite3.DatabaseError as exc:
            conn.close()
            if "not a database" not in str(exc):
                raise
            raise InvalidInput("store", target, "is not a memcommit store (not SQLite)") from None
        if read_only:
            return
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA secure_delete = ON")  # freed space is zeroed: purges leave nothing
        conn.execute(f"PRAGMA synchronous = {synchronous}")
        conn.execute("PRAGMA foreign_keys = ON")
        self._migrate(progress)

    def _migrate(self, progress: Callable[[int, int], None] | None) -> None:
        """Apply the migrations not applied yet, under the writers' lock (idempotent).

        A store with every migration applied opens without the lock: another
        process's long commit must not make an open wait, or fail. Whether
        anything is missing is asked again under the lock before applying it. A
        store that had history before the hash chain has it hashed once, in the
        same transaction (``progress(done, rows)`` hears of it).
        """
        conn = self._conn
        has_ledger = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
        ).fetchone()
        if has_ledger:
            done = [n for (n,) in conn.execute("SELECT version FROM schema_migrations")]
            if not missing("sqlite", done, self.target):
                return
        conn.execute("BEGIN IMMEDIATE")
        try:
            applied = upgrade(
                "sqlite",
                self.target,
                conn.execute,
                ledger=LEDGER,
                mark="?",
                statements=split_statements,
            )
            if CHAIN_MIGRATION in applied:
                seal_history(self.rows, self._select, self._write_all, progress)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    # -- the write transaction ------------------------------------------------

    @_mapped
    def begin(self) -> None:
        self._sealed = None
        if self._writer == threading.get_ident():  # (in memory, waiting would never end)
            raise InvalidInput("commit", "inside a commit", "this thread's commit is still open")
        if self._turn is not None:  # no snapshot copies the store in memory meanwhile
            self._turn.acquire()
        try:
            # read-only: a read snapshot (an export); a write in it is refused by SQLite
            self._conn.execute("BEGIN" if self.read_only else "BEGIN IMMEDIATE")
        except BaseException:
            if self._turn is not None:
                self._turn.release()
            raise
        self._writer = threading.get_ident()

    @_mapped
    def begin_read(self) -> None:
        """A deferred transaction on a connection of this thread's own: its first read
        fixes a snapshot (WAL keeps it for us). In memory, on a copy of the database made
        between commits. Refused inside this thread's own commit (its rollback would end
        the commit)."""
        if self._writer == threading.get_ident():
            raise InvalidInput(
                "snapshot",
                "inside a commit",
                "a read snapshot (export, verify, migrate) runs outside a commit",
            )
        reader = self._snapshot_connection()
        try:
            reader.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")
            reader.execute("PRAGMA query_only = ON")
            reader.execute("BEGIN")
        except BaseException:
            reader.close()
            raise
        self._readers[threading.get_ident()] = reader

    def _snapshot_connection(self) -> sqlite3.Connection:
        """A new connection to the store's file (never creating one), or a copy in memory."""
        if self._file is None:
            copy = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            assert self._turn is not None
            with self._turn:  # no commit is open on the one connection while it is copied
                self._conn.backup(copy)
            return copy
        uri = _read_only_uri(self._file) if self.read_only else f"file:{quote(self._file)}?mode=rw"
        return sqlite3.connect(
            uri,
            isolation_level=None,
            check_same_thread=False,
            timeout=self._busy_timeout,
            uri=True,
        )

    @_mapped
    def commit(self) -> None:
        if self._end_read("COMMIT"):
            return
        self._conn.execute("COMMIT")
        self._end_write()
        if self._written is not None and self._tip_at is not None:
            self._tip, self._written = self._written, None

    @_mapped
    def rollback(self) -> None:
        if self._end_read("ROLLBACK") or self._writer not in (None, threading.get_ident()):
            return  # another thread's commit is not this one's to drop
        self._written = None
        try:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
        finally:
            self._end_write()

    def _end_read(self, statement: str) -> bool:
        """End this thread's read snapshot, if it has one on a connection of its own (and
        no commit open: the commit ends first)."""
        me = threading.get_ident()
        if not self._readers or self._writer == me or me not in self._readers:
            return False
        reader = self._readers.pop(me)
        try:
            reader.execute(statement)
        finally:
            reader.close()
        return True

    def _end_write(self) -> None:
        """The open commit has ended: the connection is free (in memory, to be copied too)."""
        if self._writer is not None:
            self._writer = None
            if self._turn is not None:
                self._turn.release()

    @_mapped
    def tip(self) -> tuple[int, str] | None:
        """The newest commit, read again only when another connection has committed since."""
        if self._reading() is not self._conn:  # as this thread's snapshot has it
            return super().tip()
        seen = self._conn.execute("PRAGMA data_version").fetchone()[0]
        if seen != self._tip_at:
            self._tip, self._tip_at = super().tip(), seen
        return self._tip

    def tenants(self, as_of: int | None = None) -> list[str]:
        if as_of is not None:
            return super().tenants(as_of)
        return sorted(tenant for (tenant,) in self._select(CURRENT_TENANTS))

    def write(self, batch: Batch) -> None:
        self._written = (batch.commit.seq, batch.commit.id)  # the tip once it commits
        super().write(batch)

    # -- the primitives of the shared reads --------------------------------------------

    @_mapped
    def _select(self, text: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._reading().execute(text, params).fetchall()

    @_mapped
    def _write_all(self, text: str, rows: Iterable[Sequence[Any]]) -> None:
        self._reading().executemany(text, rows)  # in a read snapshot, refused (query_only)

    def _reading(self) -> sqlite3.Connection:
        """This thread's read snapshot's connection (outside its commits), else the backend's."""
        if not self._readers or self._writer == (me := threading.get_ident()):
            return self._conn
        reader = self._readers.get(me, self._conn)
        if self._closed:  # the store closed while this thread's snapshot was open
            raise StoreClosed("the store was closed while this read ran")
        return reader

    @_mapped
    def scrub(self, tenants: Collection[str] | None = None) -> bool:
        """Checkpoint the WAL into the file (zeroed by ``secure_delete``) and truncate it.

        A purge's old page images live on in the ``-wal`` file until then. The
        copying runs as PASSIVE checkpoints, which take no lock a writer waits
        for; only the last step, a TRUNCATE checkpoint, holds the writers' lock,
        and it waits for readers at most `SCRUB_HOLD` seconds before letting go
        and trying again (a TRUNCATE under the store's own busy timeout would
        hold every writer out for as long as readers kept it waiting). Tries for
        up to the busy timeout; False when readers held the log that long.
        One file holds every tenant, so ``tenants`` changes nothing.
        """
        conn = self._conn
        deadline = time.monotonic() + self._busy_timeout
        pause = SCRUB_HOLD
        conn.execute(f"PRAGMA busy_timeout = {int(SCRUB_HOLD * 1000)}")
        try:
            while True:
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                busy: int = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
                if busy == 0:
                    return True
                if time.monotonic() + pause > deadline:
                    return False
                time.sleep(pause)  # the writers the attempt held back go first
                pause = min(pause * 2, 1.0)
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")

    def _engine_problems(self, full: bool) -> list[str]:
        """SQLite's page checks: ``quick_check``, or ``integrity_check`` when ``full``."""
        found = []
        pragma = "integrity_check" if full else "quick_check"
        pages = [line for (line,) in self._select(f"PRAGMA {pragma}")]
        if pages != ["ok"]:
            found.append(f"sqlite {pragma}: {'; '.join(pages[: common.SAMPLE])}")
        broken_links = self._select("PRAGMA foreign_key_check")[: common.SAMPLE]
        if broken_links:
            found.append(f"foreign key broken: {broken_links}")
        return found

    def cache_dir(self, name: str, key: str) -> Path | None:
        """Beside the file, ``<file>.<name>/`` (the file's real path: every spelling of it
        shares the folder); None in memory. A store open read-only reads and keeps its
        derived files there too (recall's snapshots: the next process starts at once)."""
        if self.target == ":memory:" or self.target.startswith("file::memory:"):
            return None
        return Path(os.path.realpath(self.target) + "." + name)

    def close(self) -> None:
        """Close the connection; each snapshot's own is closed by its thread as it ends
        (closing one another thread is reading from would crash the process)."""
        self._closed = True
        try:
            self._conn.close()
        except sqlite3.Error as exc:  # closing twice or a broken file: nothing left to save
            raise BackendError(f"sqlite: {exc}") from exc


def split_statements(sql: str) -> list[str]:
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
                [n for (n,) in conn.execute("SELECT version FROM schema_migrations")]
                if has_schema
                else None
            )
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise InvalidInput("store", target, f"cannot read it as SQLite ({exc})") from None
    require_current("sqlite", done, target)
    if journal.lower() != "wal" and not _unwritable(path):  # immutable reads report "delete"
        raise InvalidInput(
            "store", target, f"is in {journal} journal mode; memcommit stores use WAL"
        )


register("sqlite", SQLiteBackend)
