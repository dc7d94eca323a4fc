"""What the SQL backends share: `SQLBackend`, every read, use count, state and check.

`SQLBackend` answers every read, use count, state and check of the `Backend`
protocol from two primitives a backend module implements, and writes a commit's
rows through them; `translating` makes the decorator that turns its driver's
errors into ours. The parts it stands on each have a module of their own: the
column tables and the `Dialect` (`tables`), the row codecs (`rows`), the write
statements and a commit's writes (`writes`), the read queries (`queries`) and
the invariants (`invariants`); their names are re-exported here, where the
backend modules take them from.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, ClassVar, ParamSpec, TypeVar

from memcommit.errors import MemcommitError
from memcommit.model import Commit, Memory, Usage
from memcommit.store.backends.base import Batch, MemoryQuery, TraceRow
from memcommit.store.backends.invariants import SAMPLE, invariants
from memcommit.store.backends.queries import (
    commits_sql,
    memories_sql,
    tier_counts_sql,
    traces_sql,
    versions_sql,
)
from memcommit.store.backends.rows import Row, Rows, VersionEncoder, changes_text
from memcommit.store.backends.tables import (
    COMMIT,
    DIGEST,
    END_SEQ,
    ERASED,
    MEMORY,
    MEMORY_SELECT,
    SALT,
    STATE,
    TRACE,
    TRACE_SELECT,
    USAGE,
    USE_TICK,
    VERSION_ROW,
    Column,
    Dialect,
    names,
)
from memcommit.store.backends.vectors import VectorTable
from memcommit.store.backends.writes import SEAL_FIRST, Statements, Writes, writes
from memcommit.store.ids import seq_of

P = ParamSpec("P")
R = TypeVar("R")


def translating(
    errors: type[Exception] | tuple[type[Exception], ...],
    translate: Callable[[object, Exception], MemcommitError],
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator for a backend's methods: a driver error becomes ``translate(backend, error)``.

    So no driver exception leaves a backend (see `memcommit.errors`); the
    original stays the new error's ``__cause__``.
    """

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return fn(*args, **kwargs)
            except errors as exc:
                raise translate(args[0] if args else None, exc) from exc

        return wrapper

    return decorate


class SQLBackend(VectorTable):
    """Every read, use count, state and check of `Backend`, over a SQL database.

    A backend module subclasses it, sets `dialect` and `checks`, and implements
    `_select` (a query's rows) and `_write_all` (one statement for many rows),
    each translating its driver's errors into memcommit's; it keeps only what
    its database does differently: connecting and migrating, the write
    transaction (`begin`, `commit`, `rollback`), `scrub` and `close`. `write`
    and `tip` work through the primitives; a backend may do them faster.
    """

    dialect: ClassVar[Dialect]
    #: (what, query) of each invariant, from `invariants` in the dialect's spelling.
    checks: ClassVar[tuple[tuple[str, str], ...]]
    rows: ClassVar[Rows]
    statements: ClassVar[Statements]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "dialect" in cls.__dict__:
            cls.rows = Rows(cls.dialect)
            cls.statements = Statements.of(cls.dialect)

    # -- the two primitives ----------------------------------------------------------

    def _select(self, text: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Every row ``text`` returns."""
        raise NotImplementedError

    def _write_all(self, text: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run ``text`` once per row (in the open transaction, if any)."""
        raise NotImplementedError

    # -- the write transaction's rows, and the tip -----------------------------------

    #: (seq, hash) of the commit this backend wrote last in the open transaction (the
    #: parent of the next one an import writes); `begin` forgets it.
    _sealed: tuple[int, str] | None = None

    def write(self, batch: Batch) -> None:
        """Write the rows of ``batch`` in the open transaction, one statement at a time."""
        w = self._writes(batch)
        self._write_all(w.commit[0], [w.commit[1]])
        self._write_all(*w.versions)  # a generator: rows made and dropped one at a time
        sealing = w.seal[1]()
        if sealing:
            self._write_all(w.seal[0], sealing)
        for text, rows in w.updates:
            self._write_all(text, rows)
        self._sealed = (batch.commit.seq, w.hash())

    def _writes(self, batch: Batch) -> Writes:
        """The writes of ``batch``, chained to its parent, with the erasures of its purges."""
        return writes(
            batch,
            self.rows,
            self.statements,
            self._parent_hash(batch.commit.seq - 1),
            self._erasures(batch) if batch.purges else (),
        )

    def _parent_hash(self, seq: int) -> str | None:
        """The hash of commit ``seq`` (None for seq 0, the empty store)."""
        if seq == 0:
            return None
        if self._sealed is not None and self._sealed[0] == seq:
            return self._sealed[1]
        found = self._select(f"SELECT hash FROM commits WHERE seq = {self.dialect.mark}", (seq,))
        return found[0][0] if found else None

    def _erasures(self, batch: Batch) -> list[tuple[str, str, int, str]]:
        """(body hash, id, version, tenant) of every stored, unerased version ``batch`` purges."""
        d = self.dialect
        params: list[Any] = []
        text = (
            "SELECT salt, content, tags, metadata, id, version, tenant FROM versions WHERE "
            + d.in_("id", list(batch.purges), params)
            + " AND "
            + d.in_(d.tenant_by_id, sorted(batch.purged_tenants()), params)
            + " AND salt IS NOT NULL"
        )
        body_hash = self.rows.seals.body_hash
        return [
            (body_hash(salt, content, tags, metadata), mid, version, tenant)
            for salt, content, tags, metadata, mid, version, tenant in self._select(text, params)
        ]

    def tip(self) -> tuple[int, str] | None:
        """The seq and id of the newest commit (None: no commit yet)."""
        found = self._select("SELECT seq, id FROM commits ORDER BY seq DESC LIMIT 1")
        if not found:
            return None
        seq, commit_id = found[0]
        return seq, commit_id

    # -- reads ---------------------------------------------------------------------

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
        text, params = commits_sql(
            self.dialect,
            seqs=seqs,
            after=after,
            upto=upto,
            newest_first=newest_first,
            limit=limit,
            changes=changes,
        )
        return [self.rows.commit(r) for r in self._select(text, params)]

    def commit_seq(self, commit_id: str) -> int | None:
        seq = seq_of(commit_id)
        if seq is None:
            return None
        p = self.dialect.mark
        found = self._select(
            f"SELECT seq FROM commits WHERE seq = {p} AND id = {p}", (seq, commit_id)
        )
        return found[0][0] if found else None

    def seq_at(self, time: datetime) -> int:
        text = f"SELECT max(seq) FROM commits WHERE time <= {self.dialect.mark}"
        return self._select(text, (self.dialect.time_out(time),))[0][0] or 0

    def memories(self, query: MemoryQuery) -> list[Memory]:
        text, params = memories_sql(query, self.dialect)
        return [self.rows.memory(r) for r in self._select(text, params)]

    def versions(self, ids: Sequence[str]) -> dict[str, int]:
        if not ids:
            return {}
        text, params = versions_sql(self.dialect, ids)
        return dict(self._select(text, params))

    def history(self, memory_id: str) -> list[Memory]:
        text = (
            f"SELECT {MEMORY_SELECT} FROM versions WHERE id = {self.dialect.mark} ORDER BY version"
        )
        return [self.rows.memory(r) for r in self._select(text, (memory_id,))]

    def traces(
        self,
        *,
        ids: Sequence[str] | None = None,
        tenant: str | None = None,
        as_of: int | None = None,
        status: str | None = None,
        unmarked: str | None = None,
        after: str | None = None,
        limit: int | None = None,
    ) -> list[TraceRow]:
        text, params = traces_sql(
            self.dialect,
            ids=ids,
            tenant=tenant,
            as_of=as_of,
            status=status,
            unmarked=unmarked,
            after=after,
            limit=limit,
        )
        return [self.rows.trace(r) for r in self._select(text, params)]

    def tenants(self, as_of: int | None = None) -> list[str]:
        if as_of is None:
            found = self._select("SELECT DISTINCT tenant FROM versions WHERE end_seq IS NULL")
        else:
            text = f"SELECT DISTINCT tenant FROM versions WHERE seq <= {self.dialect.mark}"
            found = self._select(text, (as_of,))
        return sorted(tenant for (tenant,) in found)

    def tier_counts(
        self, tiers: Sequence[str] | None, tenant: str | None, always: bool | None
    ) -> dict[tuple[str, str, str], int]:
        text, params = tier_counts_sql(self.dialect, tiers=tiers, tenant=tenant, always=always)
        return {(tier, ten, scope): n for tier, ten, scope, n in self._select(text, params)}

    def applied_migrations(self) -> list[int]:
        """Numbers of the migrations this database has, in order."""
        return [n for (n,) in self._select("SELECT version FROM schema_migrations ORDER BY 1")]

    # -- use counts and small state ------------------------------------------------

    def record_uses(self, ids: Sequence[str]) -> dict[str, Usage]:
        current = self.usage(set(ids))
        tick = counted(current, ids, int(self.state_get(*USE_TICK) or 0))
        self._write_all(
            self.statements.upsert_usage,
            [(mid, u.count, u.first_tick, u.last_tick) for mid, u in current.items()],
        )
        self.state_set(*USE_TICK, str(tick))
        return current

    def usage(self, ids: Iterable[str] | None = None) -> dict[str, Usage]:
        text = f"SELECT {names(USAGE)} FROM usage"
        params: list[Any] = []
        if ids is not None:
            ids = list(ids)
            if not ids:
                return {}
            text += " WHERE " + self.dialect.in_("id", ids, params)
        return {
            mid: Usage(count=count, first_tick=first, last_tick=last)
            for mid, count, first, last in self._select(text, params)
        }

    def state_get(self, namespace: str, key: str) -> str | None:
        p = self.dialect.mark
        text = f"SELECT value FROM state WHERE namespace = {p} AND name = {p}"
        found = self._select(text, (namespace, key))
        return found[0][0] if found else None

    def state_set(self, namespace: str, key: str, value: str) -> None:
        self._write_all(self.statements.set_state, [(namespace, key, value)])

    def state_delete(self, namespace: str, key: str) -> None:
        p = self.dialect.mark
        text = f"DELETE FROM state WHERE namespace = {p} AND name = {p}"
        self._write_all(text, [(namespace, key)])

    def state_items(self, namespace: str | None = None) -> list[tuple[str, str, str]]:
        # sorted in Python: code point order on every database, whatever its collation
        text = f"SELECT {names(STATE)} FROM state"
        if namespace is None:
            return sorted(self._select(text))
        return sorted(self._select(f"{text} WHERE namespace = {self.dialect.mark}", (namespace,)))

    # -- the chain -----------------------------------------------------------------

    def hashes(self, seqs: Sequence[int]) -> list[tuple[int, str | None]]:
        if not seqs:
            return []
        params: list[Any] = []
        text = "SELECT seq, hash FROM commits WHERE " + self.dialect.in_("seq", seqs, params)
        return [(seq, h) for seq, h in self._select(text + " ORDER BY seq", params)]

    def seals(self, memory_id: str) -> list[tuple[str | None, str | None, str | None]]:
        text = (
            f"SELECT {names((SALT, DIGEST, ERASED))} FROM versions"
            f" WHERE id = {self.dialect.mark} ORDER BY version"
        )
        return [(salt, digest, erased) for salt, digest, erased in self._select(text, (memory_id,))]

    # -- integrity -----------------------------------------------------------------

    def check(self, *, full: bool = False) -> list[str]:
        found = self._engine_problems(full)
        for what, query in self.checks:
            rows = self._select(f"{query} LIMIT {SAMPLE}")
            if rows:
                found.append(f"{what}: {[tuple(r) for r in rows]}")
        return found + self._unreadable()

    def _engine_problems(self, full: bool) -> list[str]:
        """Problems the database's own checks find (none to run by default)."""
        return []

    def _unreadable(self) -> list[str]:
        """Rows that do not decode, and changes whose memory version is not stored.

        The invariant queries compare columns inside the database; this reads each
        version, commit, trace and state row as the store would (a damaged page
        can hold text that no longer decodes), then checks that every change
        naming a memory version has it (a cut backup restored by hand would not).
        """
        found: list[str] = []
        stored: set[tuple[str, int]] = set()
        try:
            for r in self._select(f"SELECT {MEMORY_SELECT} FROM versions"):
                m = self.rows.memory(r)
                stored.add((m.id, m.version))
        except Exception as exc:  # any failure to read a row back is the finding
            found.append(f"versions: a row cannot be read: {exc}")
        wanted: list[tuple[int, str, int]] = []
        try:
            text, params = commits_sql(
                self.dialect, seqs=None, after=0, upto=None, newest_first=False, limit=None,
                changes=True,
            )  # fmt: skip
            for r in self._select(text, params):
                commit, _ = self.rows.commit(r)
                wanted += [
                    (commit.seq, c.memory_id, c.version)
                    for c in commit.changes
                    if c.memory_id is not None and c.version is not None
                ]
        except Exception as exc:
            found.append(f"commits: a row cannot be read: {exc}")
        if not found:
            missing = [w for w in wanted if (w[1], w[2]) not in stored][:SAMPLE]
            if missing:
                found.append(f"change names a memory version that is not stored: {missing}")
        try:
            for r in self._select(f"SELECT {TRACE_SELECT} FROM traces t"):
                self.rows.trace(r)
            for _, _, value in self.state_items():
                json.loads(value)
        except Exception as exc:
            found.append(f"traces or state: a row cannot be read: {exc}")
        return found


def counted(current: dict[str, Usage], ids: Sequence[str], tick: int) -> int:
    """Count one use of each of ``ids`` in ``current`` (in place), from logical time ``tick``.

    Returns the new tick: one step per use, in order.
    """
    for mid in ids:
        tick += 1
        old = current.get(mid)
        current[mid] = (
            Usage(1, tick, tick) if old is None else Usage(old.count + 1, old.first_tick, tick)
        )
    return tick


__all__ = [
    "COMMIT",
    "DIGEST",
    "END_SEQ",
    "ERASED",
    "MEMORY",
    "MEMORY_SELECT",
    "SALT",
    "SAMPLE",
    "SEAL_FIRST",
    "STATE",
    "TRACE",
    "TRACE_SELECT",
    "USAGE",
    "USE_TICK",
    "VERSION_ROW",
    "Column",
    "Dialect",
    "Row",
    "Rows",
    "SQLBackend",
    "Statements",
    "VersionEncoder",
    "Writes",
    "changes_text",
    "commits_sql",
    "counted",
    "invariants",
    "memories_sql",
    "names",
    "tier_counts_sql",
    "traces_sql",
    "translating",
    "versions_sql",
    "writes",
]
