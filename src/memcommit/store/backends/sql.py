"""What the SQL backends share: the column tables, the queries, the reads and the checks.

Both backends store the same columns, with tags, metadata and a commit's
changes as the same JSON text. Each table is written once below (`MEMORY`,
`COMMIT`, `TRACE`, `USAGE`); every column list, placeholder list, row encoder
and row decoder is derived from it, and rows are decoded by column name. A
`Dialect` names the few things that differ between two SQL databases: the
placeholder, the boolean literals, how a list of values is passed, and whether
times and flags travel as Python values (psycopg) or as text and integers
(sqlite3). `SQLBackend` answers every read, use count, state and check of the
`Backend` protocol from two primitives a backend module implements, and
`translating` makes the decorator that turns its driver's errors into ours.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, ClassVar, ParamSpec, TypeVar

from memcommit.errors import MemcommitError
from memcommit.model import Commit, Memory, Usage
from memcommit.store.backends import seals
from memcommit.store.backends.base import Batch, MemoryQuery, TraceRow
from memcommit.store.ids import seq_of
from memcommit.store.records import change, memory, to_text
from memcommit.store.records import commit as make_commit

_compact_json = json.JSONEncoder(separators=(",", ":")).encode

Row = Sequence[Any]
#: ``(memory, end_seq, salt, erased)`` -> the row of `VERSION_ROW`, its digest computed.
VersionEncoder = Callable[[Memory, "int | None", "str | None", "str | None"], tuple[Any, ...]]
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


@dataclass(frozen=True)
class Column:
    """One stored column: its SQL name, the model field it holds, and how it is stored.

    ``codec``: "plain" (as it is), "time" (a datetime), "flag" (a bool), "list"
    (a tuple as JSON text) or "map" (a dict as JSON text).
    """

    name: str
    field: str
    codec: str = "plain"


def _same_names(*names: str, codecs: dict[str, str] | None = None) -> tuple[Column, ...]:
    """Columns named like the fields they hold."""
    return tuple(Column(n, n, (codecs or {}).get(n, "plain")) for n in names)


#: The ``versions`` table: one row per memory version, in `Memory` field order.
MEMORY: tuple[Column, ...] = (
    Column("id", "id"),
    Column("content", "content"),
    Column("kind", "kind"),
    Column("scope", "scope"),
    Column("tenant", "tenant"),
    Column("session", "session"),
    Column("mkey", "key"),
    Column("importance", "importance"),
    Column("tags", "tags", "list"),
    Column("project", "project"),
    Column("always", "always", "flag"),
    Column("token_count", "token_count"),
    Column("trace_id", "trace_id"),
    Column("step", "step"),
    Column("metadata", "metadata", "map"),
    Column("valid_from", "valid_from", "time"),
    Column("valid_to", "valid_to", "time"),
    Column("superseded_by", "superseded_by"),
    Column("status", "status"),
    Column("tier", "tier"),
    Column("version", "version"),
    Column("created_at", "created_at", "time"),
    Column("created_commit", "created_commit"),
    Column("updated_at", "updated_at", "time"),
    Column("seq", "updated_commit"),
)
#: The version row's one column that is not a memory field: the commit that replaced it.
END_SEQ = Column("end_seq", "end_seq")
#: The version row's seal (`seals`): its salt and digest, and the body hash purge keeps.
SALT = Column("salt", "salt")
DIGEST = Column("digest", "digest")
ERASED = Column("erased", "erased")
#: Every column of a version row, as inserted: `MEMORY`, `END_SEQ`, then the seal.
VERSION_ROW = (*MEMORY, END_SEQ, SALT, DIGEST, ERASED)
#: The ``commits`` table: a commit with its chain hash and its changes as JSON text
#: (changes last: a read without them selects ``COMMIT[:-1]``).
COMMIT = _same_names(
    "seq", "id", "parent", "time", "author", "message", "hash", "changes",
    codecs={"time": "time"},
)  # fmt: skip
#: The ``traces`` table, in `TraceRow` field order.
TRACE = _same_names(
    *(f.name for f in fields(TraceRow)), codecs={"started_at": "time", "ended_at": "time"}
)
#: The ``usage`` table: one use count per memory id.
USAGE = _same_names("id", "count", "first_tick", "last_tick")
#: The ``state`` table: small JSON text values by (namespace, name).
STATE = _same_names("namespace", "name", "value")

assert [c.field for c in MEMORY] == [f.name for f in fields(Memory)], "MEMORY order"


def names(columns: Iterable[Column], prefix: str = "") -> str:
    """The comma-separated SQL names of ``columns`` (each after ``prefix``)."""
    return ", ".join(prefix + c.name for c in columns)


def _codec_fields(columns: Iterable[Column], codec: str) -> tuple[str, ...]:
    return tuple(c.field for c in columns if c.codec == codec)


MEMORY_SELECT = names(MEMORY)
_TRACE_SELECT = names(TRACE, "t.")
USE_TICK = ("memcommit", "use_tick")


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Dialect:
    """The differences between the SQL of two backends that otherwise run the same queries."""

    #: The parameter placeholder: ``?`` or ``%s``.
    mark: str
    true: str
    false: str
    #: The condition "{column} is one of the values in one parameter", and that parameter.
    in_many: str
    pack: Callable[[list[Any]], Any]
    #: The condition "version r's metadata has the key {mark}".
    has_key: str
    #: The tenant column when ids are also given, or a page after an id (SQLite:
    #: ``+tenant``, off its index: the id's index finds the rows in order).
    tenant_by_id: str = "tenant"
    #: Order of one trace's steps (the root's step may be NULL: first either way).
    step_order: str = "step"
    #: A datetime (or None) as the driver takes it, and a stored time as a datetime.
    time_out: Callable[[datetime | None], Any] = _same
    time_in: Callable[[Any], Any] = _same
    #: A stored ``always`` as a bool.
    flag_in: Callable[[Any], bool] = _same

    def in_(self, column: str, values: Sequence[Any], params: list[Any]) -> str:
        """``column = <mark>`` for one value, else ``in_many`` with one parameter for all."""
        if len(values) == 1:
            params.append(values[0])
            return f"{column} = {self.mark}"
        params.append(self.pack(list(values)))
        return self.in_many.format(column=column)

    def marks(self, n: int) -> str:
        """``n`` placeholders, comma-separated."""
        return ", ".join([self.mark] * n)

    def insert(self, table: str, columns: Sequence[Column]) -> str:
        """The INSERT of one row of ``columns`` into ``table``."""
        return f"INSERT INTO {table} ({names(columns)}) VALUES ({self.marks(len(columns))})"


# -- rows <-> model values, derived from the tables ---------------------------------


#: Each codec's value as stored, from the model's ``{v}`` (``m.field``), and back from the
#: stored ``{v}``: the text a row encoder and decoder are compiled from.
_TO_ROW = {
    "plain": "{v}",
    "time": "time_out({v})",
    "flag": "{v}",
    "list": '(dumps(list({v})) if {v} else "[]")',
    "map": '(dumps({v}, sort_keys=True) if {v} else "{{}}")',
}
_FROM_ROW = {
    "plain": "{v}",
    "time": "time_in({v})",
    "flag": "flag_in({v})",
    "list": '(() if {v} == "[]" else tuple(loads({v})))',
    "map": '({{}} if {v} == "{{}}" else loads({v}))',
}


class Rows:
    """The row encoders and decoders of one dialect, built once from the column tables.

    The memory encoder and decoder run once per version written or read (a bulk
    commit writes 100,000), so they are compiled from `MEMORY` into one plain
    function each, as fast as a hand-written tuple, yet every value is taken by
    its column's name: ``(id, content, ...) = row`` and ``(m.id, m.content, ...)``.
    """

    def __init__(self, d: Dialect) -> None:
        self.dialect = d
        converts = d.time_in is not _same
        self._trace_times = _codec_fields(TRACE, "time") if converts else ()
        self._trace_fields = tuple(c.field for c in TRACE)
        namespace = {
            "memory": memory,
            "dumps": json.dumps,
            "loads": json.loads,
            "time_out": d.time_out,
            "time_in": d.time_in,
            "flag_in": d.flag_in,
        }
        same = {"time"} if not converts else set()
        same |= {"flag"} if d.flag_in is _same else set()

        def read(c: Column) -> str:
            codec = "plain" if c.codec in same else c.codec
            return _FROM_ROW[codec].format(v=c.field)

        def write(c: Column) -> str:
            codec = "plain" if c.codec in same else c.codec
            return _TO_ROW[codec].format(v="m." + c.field)

        self.seals = e = seals.Encoders(MEMORY, times_are_text=d.time_out is to_text)
        namespace.update(e.namespace)
        fields_ = ", ".join(c.field for c in MEMORY)
        # the body's hash, then the digest (`seals`), inline: one call per version saved
        digest = (
            "    body = erased if salt is None else sha({body}.encode()).hexdigest()\n"
            "    digest = sha({head}.encode()).hexdigest()\n"
        )
        source = (
            f"def memory_of(row):\n    ({fields_},) = row\n    return memory({{"
            + ", ".join(f"{c.field!r}: {read(c)}" for c in MEMORY)
            + "})\n"
            "def version_row(m, end_seq, salt, erased):\n"
            + "".join(f"    {c.field} = {write(c)}\n" for c in MEMORY)
            + digest.format(body=e.body, head=e.typed_head)
            + f"    return ({fields_}, end_seq, salt, digest, erased)\n"
            f"def digest_of(row):\n    ({fields_}, end_seq, salt, stored, erased) = row\n"
            + digest.format(body=e.body, head=e.head)
            + "    return digest\n"
        )
        assert not namespace.keys() & {c.field for c in MEMORY}, "a field shadows a helper"
        exec(compile(source, f"<memcommit rows {d.mark}>", "exec"), namespace)
        #: A Memory from a row of `MEMORY_SELECT`.
        self.memory: Callable[[Row], Memory] = namespace["memory_of"]  # type: ignore[assignment]
        #: The digest a stored row of `VERSION_ROW` should carry, computed from its fields.
        self.digest_of: Callable[[Row], str] = namespace["digest_of"]  # type: ignore[assignment]
        #: The row of one memory version (`VERSION_ROW`), its digest computed.
        self.version: VersionEncoder = namespace["version_row"]  # type: ignore[assignment]

    def commit(self, row: Row) -> tuple[Commit, list[str | None]]:
        """A Commit, and the tenant of each change, from a row of `COMMIT`."""
        f = dict(zip((c.field for c in COMMIT), row, strict=True))
        changes = []
        tenants = []
        for item in json.loads(f["changes"]) if f["changes"] != "[]" else ():
            op, memory_id, version, tenant, *detail = item
            changes.append(change(op, memory_id, version, detail[0] if detail else {}))
            tenants.append(tenant)
        made = make_commit(
            seq=f["seq"],
            id=f["id"],
            parent=f["parent"],
            time=self.dialect.time_in(f["time"]),
            author=f["author"],
            message=f["message"],
            changes=tuple(changes),
        )
        return made, tenants

    def commit_row(self, batch: Batch, changes: str, hash: str | None) -> tuple[Any, ...]:
        """The row of a batch's commit, in `COMMIT` order (``hash`` None: sealed after)."""
        c = batch.commit
        values = {**c.__dict__, "time": self.dialect.time_out(c.time)}
        values["changes"] = changes
        values["hash"] = hash
        return tuple(values[col.field] for col in COMMIT)

    def trace(self, row: Row) -> TraceRow:
        """A TraceRow from a row of `TRACE`, by column name."""
        f = dict(zip(self._trace_fields, row, strict=True))
        for name in self._trace_times:
            f[name] = self.dialect.time_in(f[name])
        return TraceRow(**f)

    def trace_row(self, t: TraceRow) -> tuple[Any, ...]:
        """The row of one trace, in `TRACE` order."""
        time_out = self.dialect.time_out
        values = {c.field: getattr(t, c.field) for c in TRACE}
        for name in _codec_fields(TRACE, "time"):
            values[name] = time_out(values[name])
        return tuple(values[c.field] for c in TRACE)


def changes_text(batch: Batch) -> str:
    """A commit's changes as the compact JSON text both backends store."""
    return _compact_json(
        [
            [ch.op, ch.memory_id, ch.version, tenant, ch.detail]
            if ch.detail
            else [ch.op, ch.memory_id, ch.version, tenant]
            for ch, tenant in zip(batch.commit.changes, batch.tenants, strict=False)
        ]
    )


# -- the statements ------------------------------------------------------------------


@dataclass(frozen=True)
class Statements:
    """Every write statement of one dialect, derived from the tables."""

    insert_commit: str
    insert_version: str
    close_version: str
    erase: str
    seal_commit: str
    upsert_trace: str
    upsert_usage: str
    set_state: str

    @classmethod
    def of(cls, d: Dialect) -> Statements:
        """The statements in ``d``'s spelling (by id and tenant: one partition on PostgreSQL)."""
        p, by_id = d.mark, d.tenant_by_id
        return cls(
            insert_commit=d.insert("commits", COMMIT),
            insert_version=d.insert("versions", VERSION_ROW),
            close_version=f"UPDATE versions SET end_seq = {p} WHERE id = {p} AND version = {p}"
            f" AND {by_id} = {p}",
            # the body and its salt go; the body's hash stays, so the digest still verifies
            erase="UPDATE versions SET content = '', tags = '[]', metadata = '{}',"
            f" salt = NULL, erased = {p} WHERE id = {p} AND version = {p} AND {by_id} = {p}",
            seal_commit=f"UPDATE commits SET hash = {p} WHERE seq = {p}",
            upsert_trace=d.insert("traces", TRACE)
            + " ON CONFLICT (id) DO UPDATE SET status = excluded.status,"
            " last_step = excluded.last_step, ended_seq = excluded.ended_seq,"
            " ended_at = excluded.ended_at",
            upsert_usage=d.insert("usage", USAGE)
            + " ON CONFLICT (id) DO UPDATE SET count = excluded.count,"
            " last_tick = excluded.last_tick",
            set_state=d.insert("state", STATE)
            + " ON CONFLICT (namespace, name) DO UPDATE SET value = excluded.value",
        )


#: Up to this many versions, a commit's rows are all made before its commit row is
#: written, so the commit row carries its hash; above, they stream and an UPDATE seals it.
SEAL_FIRST = 64


@dataclass(frozen=True)
class Writes:
    """The row writes of one batch, statement by statement, in the order they must run.

    ``versions`` is a list when the commit row already holds the hash, else a
    generator whose rows feed the hash as they are made; ``seal`` (the UPDATE of
    the commit's hash) runs last, once they are all made, and has no rows when
    the hash was known first. ``hash()`` is the commit's hash once they are made.
    """

    commit: tuple[str, tuple[Any, ...]]
    versions: tuple[str, Iterable[tuple[Any, ...]]]
    updates: list[tuple[str, list[tuple[Any, ...]]]]  # closes, erasures, trace states
    seal: tuple[str, Callable[[], list[tuple[Any, ...]]]]
    hash: Callable[[], str]


def writes(
    batch: Batch,
    rows: Rows,
    statements: Statements,
    parent_hash: str | None,
    erasures: Sequence[tuple[str, str, int, str]] = (),
) -> Writes:
    """Every row write of ``batch``, chained to ``parent_hash``.

    ``erasures`` are the (body hash, id, version, tenant) of the stored versions a
    purge erases. Salts come from ``batch.seals`` when it has them (an import keeps the
    exported ones), else fresh ones.
    """
    c = batch.commit
    seq = c.seq
    changes = changes_text(batch)
    sealer = seals.Sealer(
        seals.commit_header(
            parent_hash, seq, c.id, c.parent, to_text(c.time) or "", c.author, c.message, changes
        )
    )
    given = batch.seals
    fresh = seals.salts(len(batch.versions)) if given is None else None
    encode = rows.version

    def made() -> Iterator[tuple[Any, ...]]:
        add = sealer.add
        for i, (m, ended) in enumerate(zip(batch.versions, batch.ended, strict=False)):
            salt, erased = (fresh[i], None) if fresh is not None else given[i]  # type: ignore[index]
            row = encode(m, seq if ended else None, salt, erased)
            add(row[-2])
            yield row

    updates: list[tuple[str, list[tuple[Any, ...]]]] = [
        (statements.close_version, [(seq, *close) for close in batch.closes]),
        (statements.erase, list(erasures)),
        (statements.upsert_trace, [rows.trace_row(t) for t in batch.traces]),
    ]
    kept = [(text, params) for text, params in updates if params]
    if len(batch.versions) <= SEAL_FIRST:
        versions = list(made())
        return Writes(
            commit=(statements.insert_commit, rows.commit_row(batch, changes, sealer.hash)),
            versions=(statements.insert_version, versions),
            updates=kept,
            seal=(statements.seal_commit, list),
            hash=lambda: sealer.hash,
        )
    return Writes(
        commit=(statements.insert_commit, rows.commit_row(batch, changes, None)),
        versions=(statements.insert_version, made()),
        updates=kept,
        seal=(statements.seal_commit, lambda: [(sealer.hash, seq)]),
        hash=lambda: sealer.hash,
    )


# -- the read queries ------------------------------------------------------------------


def commits_sql(
    d: Dialect,
    *,
    seqs: Sequence[int] | None,
    after: int,
    upto: int | None,
    newest_first: bool,
    limit: int | None,
    changes: bool,
) -> tuple[str, list[Any]]:
    """The SELECT of ``Backend.commits`` (``changes=False``: every change list reads empty)."""
    where = [f"seq > {d.mark}"]
    params: list[Any] = [after]
    if upto is not None:
        where.append(f"seq <= {d.mark}")
        params.append(upto)
    if seqs is not None:
        where.append(d.in_("seq", list(seqs), params))
    selected = names(COMMIT) if changes else names(COMMIT[:-1]) + ", '[]'"
    text = (
        f"SELECT {selected} FROM commits WHERE "
        + " AND ".join(where)
        + (" ORDER BY seq DESC" if newest_first else " ORDER BY seq")
    )
    if limit is not None:
        text += f" LIMIT {int(limit)}"
    return text, params


def memories_sql(query: MemoryQuery, d: Dialect) -> tuple[str, list[Any]]:
    """The one SELECT that answers ``query``: every filter runs in the database."""
    p = d.mark
    where: list[str] = []
    params: list[Any] = []
    if query.as_of is None:
        where.append("end_seq IS NULL")
    else:
        where.append(f"seq <= {p} AND (end_seq IS NULL OR end_seq > {p})")
        params += [query.as_of, query.as_of]
    if query.ids is not None:
        where.append(d.in_("id", query.ids, params))
    if query.after is not None:
        where.append(f"id > {p}")
        params.append(query.after)
    if query.tenant is not None:
        by_id = query.ids is not None or query.after is not None
        where.append(f"{d.tenant_by_id if by_id else 'tenant'} = {p}")
        params.append(query.tenant)
    if query.with_metadata:  # as the index versions_with_metadata is defined (migration 0004)
        where.append("metadata <> '{}'")
    for column, values in (
        ("scope", query.scopes),
        ("kind", query.kinds),
        ("session", query.sessions),
        ("tier", query.tiers),
    ):
        if values is not None:
            where.append(d.in_(column, values, params) if values else d.false)
    for column, value, test in (
        ("mkey", query.key, "="),
        ("trace_id", query.trace, "="),
        ("created_at", d.time_out(query.since), ">="),
        ("created_at", d.time_out(query.until), "<="),
    ):
        if value is not None:
            where.append(f"{column} {test} {p}")
            params.append(value)
    if query.traces is not None:
        where.append(d.in_("trace_id", query.traces, params) if query.traces else d.false)
    if query.live_at is not None:
        at = d.time_out(query.live_at)
        where.append(
            "status = 'active' AND superseded_by IS NULL"
            f" AND (valid_from IS NULL OR valid_from <= {p})"
            f" AND (valid_to IS NULL OR valid_to > {p})"
        )
        params += [at, at]
    text = f"SELECT {MEMORY_SELECT} FROM versions WHERE " + " AND ".join(where)
    if query.trace is not None:
        text += f" ORDER BY {d.step_order}, id"
    elif query.traces is not None:
        text += " ORDER BY trace_id, step, id"
    else:
        text += " ORDER BY id"
    if query.limit is not None:
        text += f" LIMIT {int(query.limit)}"
    return text, params


def traces_sql(
    d: Dialect,
    *,
    ids: Sequence[str] | None,
    tenant: str | None,
    as_of: int | None,
    status: str | None,
    unmarked: str | None,
    after: str | None,
    limit: int | None,
) -> tuple[str, list[Any]]:
    """The SELECT of ``Backend.traces``: filters, paging and order in the database."""
    p = d.mark
    where = [d.true]
    params: list[Any] = []
    if ids is not None:
        where.append(d.in_("t.id", ids, params))
    if tenant is not None:
        where.append(f"t.tenant = {p}")
        params.append(tenant)
    if as_of is not None:
        where.append(f"t.started_seq <= {p}")
        params.append(as_of)
    if status is not None and as_of is None:
        where.append(f"t.status = {p}")
        params.append(status)
    elif status == "open":  # at as_of: a trace that ended later was still open
        where.append(f"(t.ended_seq IS NULL OR t.ended_seq > {p})")
        params.append(as_of)
    elif status is not None:
        where.append(f"t.status = {p} AND t.ended_seq <= {p}")
        params += [status, as_of]
    if unmarked is not None:  # the root is the memory named like the trace, at as_of
        live = "r.end_seq IS NULL"
        if as_of is not None:
            live = f"r.seq <= {p} AND (r.end_seq IS NULL OR r.end_seq > {p})"
            params += [as_of, as_of]
        where.append(
            f"NOT EXISTS (SELECT 1 FROM versions r WHERE r.id = t.id AND {live} AND {d.has_key})"
        )
        params.append(unmarked)
    if after is not None:
        where.append(f"(t.started_seq, t.id) > (SELECT started_seq, id FROM traces WHERE id = {p})")
        params.append(after)
    text = f"SELECT {_TRACE_SELECT} FROM traces t WHERE " + " AND ".join(where)
    text += " ORDER BY t.started_seq, t.id"  # ties: one commit began several (ids sort by birth)
    if limit is not None:
        text += f" LIMIT {int(limit)}"
    return text, params


def versions_sql(d: Dialect, ids: Sequence[str]) -> tuple[str, list[Any]]:
    """The SELECT of the current version number of each of ``ids``."""
    params: list[Any] = []
    return "SELECT id, version FROM versions WHERE end_seq IS NULL AND " + d.in_(
        "id", ids, params
    ), params


def tier_counts_sql(
    d: Dialect, *, tiers: Sequence[str] | None, tenant: str | None, always: bool | None
) -> tuple[str, list[Any]]:
    """The SELECT of ``Backend.tier_counts``: current versions by (tier, tenant, scope)."""
    where = ["end_seq IS NULL"]
    params: list[Any] = []
    if tiers is not None:
        where.append(d.in_("tier", tiers, params) if tiers else d.false)
    for column, value in (("tenant", tenant), ("always", always)):
        if value is not None:
            where.append(f"{column} = {d.mark}")
            params.append(value)
    text = "SELECT tier, tenant, scope, count(*) FROM versions WHERE " + " AND ".join(where)
    return text + " GROUP BY tier, tenant, scope", params


# -- integrity: each query returns offending rows (a few at most); none means it holds --

SAMPLE = 5


def invariants(
    *, is_not: str, seq_hex: str, bounds: tuple[str, str], one_current: str, current_version: str
) -> tuple[tuple[str, str], ...]:
    """(what, query) of every invariant, given the dialect's spelling of a few expressions.

    ``is_not``: the null-safe "differs" operator; ``seq_hex``: a seq as 12 lowercase
    hex digits; ``bounds``: the (what, query) of the check on versions' seq and end_seq;
    ``one_current``: the number of current versions of a memory, ``current_version``:
    the version number of its current one (both aggregates over a memory's versions).
    """
    return (
        (
            "commit sequence has a gap or does not start at 1",
            "SELECT count(*), min(seq), max(seq) FROM commits"
            " HAVING count(*) > 0 AND (min(seq) != 1 OR max(seq) != count(*))",
        ),
        (
            "commit parent is not the previous commit",
            "SELECT c.seq, c.parent FROM commits c LEFT JOIN commits p ON p.seq = c.seq - 1"
            " WHERE (c.seq = 1 AND c.parent IS NOT NULL)"
            f" OR (c.seq > 1 AND c.parent {is_not} p.id)",
        ),
        (
            "commit id does not carry its seq",
            f"SELECT seq, id FROM commits WHERE length(id) != 32 OR substr(id, 1, 12) != {seq_hex}",
        ),
        bounds,
        (
            "memory versions not numbered 1..n with exactly one current (the last)",
            "SELECT id, count(*), max(version) FROM versions GROUP BY id"
            " HAVING min(version) != 1 OR max(version) != count(*)"
            f" OR {one_current} != 1 OR {current_version} != max(version)",
        ),
        (
            "superseded_by names a memory that does not exist",
            "SELECT v.id, v.superseded_by FROM versions v WHERE v.end_seq IS NULL"
            " AND v.superseded_by IS NOT NULL"
            " AND NOT EXISTS (SELECT 1 FROM versions w WHERE w.id = v.superseded_by)",
        ),
        (
            "memory names a trace that does not exist",
            "SELECT v.id, v.trace_id FROM versions v WHERE v.end_seq IS NULL"
            " AND v.trace_id IS NOT NULL"
            " AND NOT EXISTS (SELECT 1 FROM traces t WHERE t.id = v.trace_id)",
        ),
        (
            "trace has no root memory",
            "SELECT t.id FROM traces t WHERE NOT EXISTS"
            " (SELECT 1 FROM versions v WHERE v.id = t.id AND v.trace_id = t.id AND v.step = 0)",
        ),
        (
            "trace step numbers repeat",
            "SELECT trace_id, step, count(*) FROM versions WHERE end_seq IS NULL"
            " AND trace_id IS NOT NULL GROUP BY trace_id, step HAVING count(*) > 1",
        ),
        (
            "commit without a chain hash",
            "SELECT seq FROM commits WHERE hash IS NULL",
        ),
        (
            "memory version without a digest, or not either salted or erased",
            "SELECT id, version FROM versions"
            " WHERE digest IS NULL OR (salt IS NULL) = (erased IS NULL)",
        ),
        (
            "erased memory version still holds content, tags or metadata",
            "SELECT id, version FROM versions WHERE salt IS NULL"
            " AND (content != '' OR tags != '[]' OR metadata != '{}')",
        ),
        (
            "purged memory still has content in some version",
            "SELECT DISTINCT v.id FROM versions v JOIN versions p"
            " ON p.id = v.id AND p.status = 'purged' AND p.end_seq IS NULL"
            " WHERE v.content != '' OR v.metadata != '{}' OR v.tags != '[]'",
        ),
    )


# -- the shared backend -----------------------------------------------------------------


class SQLBackend:
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

    def state_items(self) -> list[tuple[str, str, str]]:
        # sorted in Python: code point order on every database, whatever its collation
        return sorted(self._select(f"SELECT {names(STATE)} FROM state"))

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
            for r in self._select(f"SELECT {_TRACE_SELECT} FROM traces t"):
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
