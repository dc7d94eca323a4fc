"""Commits the server orders as they land: the writers' lock held for the server's work only.

Every commit has one place in the store's order, and its rows and hash depend on
it (docs/verification.md): the seq, the id, the parent, the time, the chain hash
over the parent's. A commit that reads the store, or asks for its seq, is ordered
when it does (`order`: the lock, then the tip) and written as ever. A commit that
only adds new memories, at the clock's time, needs nothing of the tip until it
lands, so it is sent whole, in one round trip, without the lock
(`begin_unordered`, `write`, `commit`): on the server, under the lock, one
statement reads the tip, numbers the commit after it (its time never before the
tip's), completes the texts its version digests and hash are taken over
(`seals.SEQ_MARK` and `seals.TIME_MARK`, the encoding of `seals`) and writes it;
the versions follow in the same transaction. The lock is held from the tip's
read to COMMIT, with no round trip to the client inside, so writers on any
tenants add up instead of waiting out each other's network and Python
(docs/postgres.md, "Many writers"). `landed` tells the store where its commit
went, and the memories it returned take their final seq and time.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

import psycopg

from memcommit.errors import BackendError, Unavailable
from memcommit.store.backends import seals
from memcommit.store.backends import sql as common
from memcommit.store.backends.base import Batch
from memcommit.store.backends.postgres_errors import lost, mapped, translated, unencodable
from memcommit.store.backends.postgres_landing import BEGIN, IDLE, TIP, TIP_SQL, Landing
from memcommit.store.backends.postgres_locks import Partitions
from memcommit.store.backends.rows import TEMPLATE_COLUMNS
from memcommit.store.backends.writes import SEAL_FIRST
from memcommit.store.records import to_text

_compact = json.JSONEncoder(separators=(",", ":")).encode
#: The versions of a commit of several as JSON with their text as it is, not as ``\u``
#: escapes: it then meets the connection's encoding, which refuses a character it cannot
#: carry (`unencodable`), as the one-memory statement's columns do.
_as_given = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
#: A version's digest: the SHA-256 of its template (`Rows.version_template`) completed with
#: its commit's seq and time text (`m`, below).
_DIGEST = (
    f"encode(sha256(convert_to(replace(replace({{text}}, chr({ord(seals.SEQ_MARK)}), m.seq::text),"
    f" chr({ord(seals.TIME_MARK)}), m.tt), 'UTF8')), 'hex')"
)
#: The columns of a version a commit fills in: its time, its seq, the digest (`dg`, in `d`).
_FROM_COMMIT = {
    "created_at": "m.time",
    "updated_at": "m.time",
    "created_commit": "m.seq",
    "updated_commit": "m.seq",
    "digest": "d.dg",
}


def _sequence(versions: str, digests: str, values: str) -> str:
    """Under the writers' lock, one statement: the commit numbered after the tip, and its versions.

    Its time is never before the tip's; its hash is taken over the canonical header
    (`seals.commit_header`) and its versions' digests in order, as `writes` does.
    ``versions`` makes `d`, the versions with their digests (``dg``) computed once;
    ``digests`` is their concatenation in order; ``values`` is what a version row gets
    (of `VERSION_ROW`, selected from `m` and `d`).
    """
    header = (
        "'[\"memcommit-commit/1\",' || coalesce('\"' || m.parent_hash || '\"', 'null') || ','"
        " || m.seq || ',\"' || m.id || '\",' || coalesce('\"' || m.parent || '\"', 'null')"
        " || ',\"' || m.tt || '\",' || %(tail)s"
    )
    return (
        "WITH tip AS (SELECT seq, id, hash, time FROM commits ORDER BY seq DESC LIMIT 1),"
        " n AS (SELECT coalesce(t.seq, 0) + 1 AS seq, t.id AS parent,"
        " t.hash AS parent_hash, greatest(%(time)s::timestamptz, t.time) AS time"
        " FROM (VALUES (1)) AS one (x) LEFT JOIN tip AS t ON true),"
        " m AS (SELECT n.*, lpad(to_hex(n.seq), 12, '0') || %(rand)s AS id,"
        " to_char(n.time AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"+00:00\"') AS tt"
        f" FROM n), d AS ({versions}),"
        f" c AS (INSERT INTO commits ({common.names(common.COMMIT)})"
        " SELECT m.seq, m.id, m.parent, m.time, %(author)s, %(message)s,"
        f" encode(sha256(convert_to({header} || {digests}, 'UTF8')), 'hex'), %(changes)s"
        f" FROM m RETURNING {TIP}),"
        f" v AS (INSERT INTO versions ({common.names(common.VERSION_ROW)}) SELECT {values}"
        " FROM m, d) SELECT * FROM c"
    )


def _many() -> str:
    """`_sequence` of any number of versions, given as a JSON array of objects by column
    (``%(versions)s``), each with its template in ``digest``."""
    values = ", ".join(_FROM_COMMIT.get(c.field, f"d.{c.name}") for c in common.VERSION_ROW)
    return _sequence(
        f"SELECT r.*, {_DIGEST.format(text='r.digest')} AS dg FROM m,"
        " json_populate_recordset(NULL::versions, %(versions)s::json) WITH ORDINALITY AS r",
        "(SELECT string_agg(d.dg, '' ORDER BY d.ordinality) FROM d)",
        values,
    )


def _one(template: tuple[str, ...]) -> str:
    """`_sequence` of one version, its ``template`` columns given one by one (their types
    those of the columns they go to): no JSON for the server to parse."""
    given = {name: f"%({name})s" for name in template}
    values = ", ".join(
        _FROM_COMMIT.get(c.field, given.get(c.name, "NULL")) for c in common.VERSION_ROW
    )
    return _sequence(
        f"SELECT {_DIGEST.format(text=given['digest'] + '::text')} AS dg FROM m",
        "(SELECT dg FROM d)",
        values,
    )


#: A template's values (`Rows.version_template`) by column name, and those that are times.
TEMPLATE = (*(c.name for c in TEMPLATE_COLUMNS), common.SALT.name, common.DIGEST.name)
_TIMES = frozenset(c.name for c in TEMPLATE_COLUMNS if c.codec == "time")
#: A commit's parameters, in the order `PREPARE` numbers them, and their types.
_COMMIT_ARGUMENTS = (
    ("time", "timestamptz"),
    ("rand", "text"),
    ("author", "text"),
    ("message", "text"),
    ("tail", "text"),
    ("changes", "text"),
)


@dataclass(frozen=True)
class Statement:
    """A commit statement (`_sequence`), prepared under ``name`` on each connection that
    lands an unordered commit: its parameters are the commit's, then its versions'."""

    name: str
    text: str
    #: The parameters after the commit's, in order (their types are the columns they fill).
    versions: tuple[str, ...]

    @property
    def prepare(self) -> str:
        types = ", ".join(kind for _, kind in _COMMIT_ARGUMENTS)
        names = {name: f"${i}" for i, name in enumerate(self.names, 1)}
        return f"PREPARE {self.name} ({types}) AS {self.text % names}"

    @property
    def names(self) -> tuple[str, ...]:
        return (*(name for name, _ in _COMMIT_ARGUMENTS), *self.versions)

    def call(self, values: str | None = None) -> str:
        """EXECUTE with ``values`` quoted in, or with placeholders for a client cursor."""
        return f"EXECUTE {self.name} ({values or ', '.join(['%s'] * len(self.names))})"


#: Any number of versions, as JSON; one version, column by column (most commits).
SEQUENCE = Statement("memcommit_sequence", _many(), ("versions",))
SEQUENCE_ONE = Statement("memcommit_sequence_one", _one(TEMPLATE), TEMPLATE)
#: ... and the writers' ordering beside them (`Landing._ordering`, with their generic
#: plans: the plans of their first executions are not made one by one). All run before
#: COMMIT: one the session lost fails the commit before anything of it landed.
ORDER = "memcommit_order"
#: The session, to be told from a later one of the same pid should its connection be lost.
_MY_SESSION = "SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()"
#: Where a commit whose connection was lost is looked for: at its expected seq or later,
#: by the random part of its id (the server numbers it, the writer draws the rest).
_LOOK_FOR = "seq >= %s AND substr(id, 13) = %s"
#: A lost connection's server session, by its pid and start (a pid alone may be reused).
_SESSION = "FROM pg_stat_activity WHERE pid = %s AND backend_start = %s"


def _texts(values: list[Any]) -> list[str | None]:
    """``values`` as the text the server reads each from (None stays None): text as plain
    `str` (a subclass may change ``+`` or ``replace``, which `_quoted` uses), a time as
    `to_text` gives it (microseconds, as its digest has it), a bool as true or false, a
    number by its value whatever its class (an IntEnum's repr is not)."""
    return [
        v if v is None or type(v) is str
        else str.__str__(v) if isinstance(v, str)
        else to_text(v) if isinstance(v, datetime)
        else ("true" if v else "false") if isinstance(v, bool)
        else repr(float(v)) if isinstance(v, float)
        else str(int(v))
        for v in values
    ]  # fmt: skip


def _quoted(conn: psycopg.Connection, texts: list[str | None]) -> str | None:
    """``texts`` (`_texts`) as SQL literals, comma-separated.

    Written by hand, not by a client cursor's adapters (a tenth of a writer's CPU
    per commit): ``E'...'`` with backslashes, then quotes, doubled, which reads the
    same whatever the server's ``standard_conforming_strings`` (a reload may change
    it between what the client last heard and the query it reads next). None, for
    the client cursor, where the connection's encoding is not UTF-8 (the query is
    sent in UTF-8) or a value holds a NUL (text cannot; the client cursor says so).
    """
    if conn.pgconn.parameter_status(b"client_encoding") != b"UTF8":
        return None
    if "\x00" in "".join([t for t in texts if t is not None]):
        return None
    return ", ".join(
        [
            "NULL" if t is None else "E'" + t.replace("\\", "\\\\").replace("'", "''") + "'"
            for t in texts
        ]
    )


class Sequencing(Landing):
    """`Sequencer` for `PostgresBackend`: unordered commits, ordered late or by the server."""

    rows: common.Rows
    schema: str
    _mine: Callable[[], bool]  # `PostgresBackend`'s: the open commit is this thread's
    #: What a writer runs after BEGIN to take the lock: one statement (`Landing._share_flushes`).
    _ordering: str
    #: ``SET LOCAL lock_timeout = ...``: how long a writer waits for a lock (the store's).
    _wait_sql: str
    #: The partitions a writer locks before the writers' lock (`postgres_locks`).
    _partitions: Partitions
    #: The tenant the open commit writes in only (a tenant's view's), None: any (`writes_in`).
    _only: str | None = None
    #: The newest commit row this process has seen (begin's tip, or its own landing); an
    #: unordered commit starts on it. (): the store had no commit; None: none seen yet.
    _known: tuple[Any, ...] | None = None
    #: Set while the open commit is unordered and has asked to be told of its first read:
    #: the store's function that orders it (`order_on_read`).
    _order_hook: Callable[[], None] | None = None
    #: Whether the open commit is unordered (`begin_unordered`, until `order`).
    _unordered: bool = False
    #: The unordered commit queued by `write`: its statement, parameters (`Statement`) and
    #: the tenants it adds to.
    _sequenced: tuple[Statement, list[Any], frozenset[str]] | None = None
    #: Where the last commit landed unordered went (`landed`).
    _landed_row: tuple[Any, ...] | None = None
    #: The connections `SEQUENCE` is prepared on, each with its server session (pid, start).
    _prepared: ClassVar[weakref.WeakKeyDictionary[psycopg.Connection, tuple[Any, ...]]] = (
        weakref.WeakKeyDictionary()
    )

    def _refused(self) -> BackendError:
        """What a writer is told when another held the lock past ``lock_timeout``."""
        return BackendError(
            f"postgresql: another writer held the store {self.schema!r} (or a purge's rewrite"
            f" the partition it writes) for more than lock_timeout={self.lock_timeout}s;"
            " nothing was written"
        )

    def writes_in(self, tenant: str | None) -> None:
        """The next commit writes in ``tenant`` only (a tenant's view), or anywhere (None)."""
        self._only = tenant

    def _locked_tip(self, conn: psycopg.Connection) -> tuple[Any, ...]:
        """BEGIN, the open commit's partitions, the writers' lock and the tip on ``conn``, in
        one round trip (() if none): the partitions first (`postgres_locks`)."""
        only = None if self._only is None else (self._only,)
        locks = self._partitions.lock(conn, only, vectors=True, wait=self._wait_sql)
        try:
            cur = conn.execute("; ".join((BEGIN, *locks, self._ordering, TIP_SQL)).encode())
            while cur.nextset():  # the last result is the tip
                pass
            tip = cur.fetchone()
        except psycopg.errors.LockNotAvailable as exc:
            raise self._refused() from exc
        self._known = tip or ()
        return self._known

    @mapped
    def begin_unordered(self) -> None:
        tip = self._known
        if tip is None:  # this process's first commit: the newest one, read without the lock
            tip = self._pooled(lambda conn: conn.execute(TIP_SQL).fetchone()) or ()
        self._tx, self._tx_thread, self._pending = self._checkout(), threading.get_ident(), None
        self._tip, self._sealed, self._unordered = tip, None, True

    def order_on_read(self, order: Callable[[], None]) -> None:
        self._order_hook = order

    def _read_orders(self) -> None:
        """Before a read inside an unordered commit: order it (what it reads is then current)."""
        if self._order_hook is not None and self._mine():
            self._order_hook()

    @mapped
    def order(self) -> None:
        assert self._tx is not None, "order() outside begin_unordered()"
        self._order_hook, self._unordered = None, False
        for attempt in range(self._pool.max_size + 1):
            conn = self._tx
            try:
                self._tip = self._locked_tip(conn)
                return
            except psycopg.Error as exc:  # nothing was sent on it before: another will do
                if not lost(exc, conn) or attempt == self._pool.max_size:
                    raise
                self._tx = None
                self._pool.putconn(conn)
                self._tx = self._pool.getconn()

    def sequences(self, batch: Batch) -> bool:
        """Only new memories' first versions, at most `SEAL_FIRST`, fresh salts, nothing else."""
        return (
            len(batch.versions) <= SEAL_FIRST
            and not (batch.closes or batch.purges or batch.traces or batch.unembed)
            and batch.seals is None
            and not any(batch.ended)
            and all(c.op == "add" for c in batch.commit.changes)
        )

    def _queue_sequenced(self, batch: Batch) -> None:
        """`write` of an unordered commit: queued whole, for `SEQUENCE` to order as it lands."""
        assert self.sequences(batch), "an unordered commit the server cannot order"
        c = batch.commit
        changes = common.changes_text(batch)
        template = self.rows.version_template
        salts = seals.salts(len(batch.versions))
        rows = [template(m, salt) for m, salt in zip(batch.versions, salts, strict=True)]
        tail = _compact([c.author, c.message, changes])[1:]
        values = [c.time, c.id[12:], c.author, c.message, tail, changes]
        tenants = frozenset(m.tenant for m in batch.versions)
        if len(rows) == 1:
            self._sequenced = (SEQUENCE_ONE, [*values, *rows[0]], tenants)
            return
        versions = [
            {n: to_text(v) if n in _TIMES else v for n, v in zip(TEMPLATE, row, strict=True)}
            for row in rows
        ]
        self._sequenced = (SEQUENCE, [*values, _as_given(versions)], tenants)

    def commit(self) -> None:
        if self._sequenced is not None:  # unordered: the server orders it as it lands
            self._commit_sequenced()
            return
        if self._tx is not None and self._tx.info.transaction_status == IDLE:
            self._release()  # unordered and nothing written: nothing was sent
            return
        super().commit()

    def _prepare(self, conn: psycopg.Connection, *, again: bool = False) -> None:
        """Prepare on ``conn``, in one round trip, what an unordered commit executes before
        its COMMIT: its ordering and `SEQUENCE` (``again``: those the session lost)."""
        held = set()
        if again:  # (a DISCARD ALL drops both; a DEALLOCATE perhaps one)
            held = {name for (name,) in conn.execute("SELECT name FROM pg_prepared_statements")}
        calls = self._ordering.removeprefix("SELECT ")
        order = f"SELECT set_config('plan_cache_mode', 'force_generic_plan', true), {calls}"
        texts = [f"PREPARE {ORDER} AS {order}"] if ORDER not in held else []
        texts.extend(st.prepare for st in (SEQUENCE, SEQUENCE_ONE) if st.name not in held)
        cur = conn.execute("; ".join((*texts, _MY_SESSION)).encode())
        while cur.nextset():  # the last result is the session
            pass
        self._prepared[conn] = cur.fetchone() or ()

    def _send_sequenced(self, conn: psycopg.Connection) -> tuple[Any, ...]:
        """The unordered commit in one round trip: BEGIN, its tenants' partitions, the lock,
        `SEQUENCE`, COMMIT, flush.

        The partitions are locked before the writers' lock (`postgres_locks`). The lock
        and `SEQUENCE` run prepared (once per connection), so the server parses and
        plans neither again; `SEQUENCE`'s values are quoted in (`_quoted`), so the
        client makes one simple query.
        """
        assert self._sequenced is not None
        statement, values, tenants = self._sequenced
        texts = _texts(values)
        quoted = _quoted(conn, texts)
        call = statement.call(quoted)
        locks = self._partitions.lock(conn, tenants, vectors=False, wait=self._wait_sql)
        before = (BEGIN, *locks, f"EXECUTE {ORDER}")  # the commit's row is the next result
        text = "; ".join((*before, call, "COMMIT", *self._flush))
        for prepare in (conn not in self._prepared, True):
            if prepare:
                self._prepare(conn, again=conn in self._prepared)
            try:
                cursor = psycopg.ClientCursor(conn) if quoted is None else conn.cursor()
                with cursor as cur:
                    cur.execute(text, texts if quoted is None else None, prepare=False)
                    for _ in before:
                        cur.nextset()
                    row = cur.fetchone()
                break
            except psycopg.errors.InvalidSqlStatementName:  # the session dropped it (DISCARD)
                conn.execute("ROLLBACK")  # nothing ran past the lock
                if prepare:
                    raise
        assert row is not None, "SEQUENCE writes one commit"
        return row

    def _commit_sequenced(self) -> None:
        """`commit` of an unordered commit: sent whole, and known landed or not if it fails.

        Nothing of it depends on the connection it goes on: when that connection is
        lost (an idle one the server ended, a network cut), the connection goes back
        to the pool, its server session is ended for good and the commit is looked for
        under the lock; absent, it is sent again on a fresh connection, up to
        ``pool_size + 1`` times, so it lands once or is reported as not landed.
        """
        assert self._sequenced is not None
        mark = ((self._tip[0] + 1) if self._tip else 1, self._sequenced[1][1])  # (seq, rand)
        try:
            for attempt in range(self._pool.max_size + 1):
                if self._tx is None:
                    self._tx = self._pool.getconn()
                conn = self._tx
                try:
                    row = self._send_sequenced(conn)
                    break
                except psycopg.errors.LockNotAvailable as exc:
                    raise self._refused() from exc
                except UnicodeEncodeError as exc:  # (the client cursor's: nothing was sent)
                    raise unencodable(exc) from exc
                except psycopg.Error as exc:
                    session = self._prepared.get(conn)  # None: nothing of it was sent
                    self._tx = None  # back to the pool before asking (a pool of one)
                    if not conn.closed:
                        with contextlib.suppress(psycopg.Error):
                            conn.execute("ROLLBACK")
                    self._pool.putconn(conn)  # a broken one is replaced
                    found = self._after_failure(
                        exc, mark, session, last=attempt == self._pool.max_size
                    )
                    if found is not None:
                        row = found
                        break
        finally:
            self._release()
        self._landed_row = self._known = row

    def _after_failure(
        self, exc: psycopg.Error, mark: tuple[int, str], session: Any, *, last: bool
    ) -> tuple[Any, ...] | None:
        """The commit's row if it landed all the same; None if it did not and may be sent
        again (its connection was lost); else raise.

        A lost connection's server session may still be waiting for the lock with the
        commit in hand, so it is ended (and gone) before the store is asked, under the
        lock, for a commit numbered ``mark[0]`` or later whose id ends in ``mark[1]``.
        """
        error = translated(exc)
        gone = isinstance(error, Unavailable)
        try:
            if gone and session:
                self._end_session(session)
            found = self._landed_row_where(_LOOK_FOR, mark)
        except Unavailable:
            raise Unavailable(
                "postgresql: connection lost while committing; whether it landed is unknown"
                " until the server is reachable again: look for a commit whose id ends in"
                f" {mark[1]} with store.log() ({exc})"
            ) from exc
        if found is not None or (gone and not last):
            return found
        if gone:
            raise Unavailable(
                f"postgresql: connection lost while committing; it did not land ({exc})"
            ) from exc
        raise error from exc

    @mapped
    def _end_session(self, session: tuple[Any, ...]) -> None:
        """End server session ``session`` (a lost connection's) and wait until it is gone."""
        until = time.monotonic() + self.lock_timeout

        def end(conn: psycopg.Connection) -> None:
            conn.execute(f"SELECT pg_terminate_backend(pid) {_SESSION}", session)
            while conn.execute(f"SELECT 1 {_SESSION}", session).fetchone() is not None:
                if time.monotonic() > until:
                    raise Unavailable(f"postgresql: session {session[0]} would not end")
                time.sleep(0.005)

        self._pooled(end, until=until)

    def landed(self) -> tuple[int, str, str | None, datetime]:
        row = self._landed_row
        assert row is not None, "landed() before an unordered commit landed"
        seq, commit_id, parent, when = row[:4]
        return seq, commit_id, parent, when

    def rollback(self) -> None:
        self._only = None  # (also when nothing was begun: `writes_in` said it for that commit)
        super().rollback()

    def _release(self) -> None:
        self._order_hook, self._unordered, self._sequenced = None, False, None
        self._only = None
        super()._release()
