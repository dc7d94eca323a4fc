"""What the SQL backends share: columns, row <-> model conversions, the queries, the checks.

Both backends store the same columns, with tags, metadata and a commit's
changes as the same JSON text, so one piece of code builds their rows and
queries, and states the store's integrity invariants. A `Dialect` names the few
things that differ: the placeholder, the boolean literals, how a list of values is
passed, and whether times and flags travel as Python values (psycopg) or as text
and integers (sqlite3).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memcommit.model import Commit, Memory, Usage
from memcommit.store.backends.base import Batch, MemoryQuery, TraceRow
from memcommit.store.records import change, memory
from memcommit.store.records import commit as make_commit

COLUMNS = (
    "id, version, content, kind, scope, tenant, session, mkey, importance, tags, project,"
    " always, token_count, trace_id, step, metadata, valid_from, valid_to, superseded_by,"
    " status, tier, created_at, created_commit, updated_at, seq"
)
VERSION_COLUMNS = COLUMNS + ", end_seq"
TRACE_COLUMNS = (
    "id, tenant, scope, session, status, last_step, started_seq, started_at, ended_seq, ended_at"
)
TRACE_SELECT = ", ".join("t." + c for c in TRACE_COLUMNS.split(", "))
USE_TICK = ("memcommit", "use_tick")
_compact_json = json.JSONEncoder(separators=(",", ":")).encode


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
    #: The tenant column when ids are also given (SQLite: ``+tenant``, off its index).
    tenant_by_id: str = "tenant"
    #: Order of one trace's steps (the root's step may be NULL: first either way).
    step_order: str = "step"
    #: A datetime (or None) as the driver takes it, and a stored time as a datetime.
    time_out: Callable[[datetime | None], Any] = _same
    time_in: Callable[[Any], datetime | None] = _same
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


def row_to_memory(r: tuple, d: Dialect) -> Memory:
    """A Memory from a row of ``COLUMNS``."""
    tags = r[9]
    meta = r[15]
    time_in = d.time_in
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
            "always": d.flag_in(r[11]),
            "token_count": r[12],
            "trace_id": r[13],
            "step": r[14],
            "metadata": {} if meta == "{}" else json.loads(meta),
            "valid_from": time_in(r[16]),
            "valid_to": time_in(r[17]),
            "superseded_by": r[18],
            "status": r[19],
            "tier": r[20],
            "version": r[1],
            "created_at": time_in(r[21]),
            "created_commit": r[22],
            "updated_at": time_in(r[23]),
            "updated_commit": r[24],
        }
    )


def memory_row(m: Memory, end_seq: int | None, d: Dialect) -> tuple:
    """The ``VERSION_COLUMNS`` row of one memory version."""
    time_out = d.time_out
    return (
        m.id, m.version, m.content, m.kind, m.scope, m.tenant, m.session, m.key, m.importance,
        json.dumps(list(m.tags)) if m.tags else "[]", m.project, m.always, m.token_count,
        m.trace_id, m.step, json.dumps(m.metadata, sort_keys=True) if m.metadata else "{}",
        time_out(m.valid_from), time_out(m.valid_to), m.superseded_by, m.status, m.tier,
        time_out(m.created_at), m.created_commit, time_out(m.updated_at), m.updated_commit,
        end_seq,
    )  # fmt: skip


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


def commit_row(batch: Batch, d: Dialect) -> tuple:
    """The ``commits`` row of a batch's commit."""
    c = batch.commit
    return (c.seq, c.id, c.parent, d.time_out(c.time), c.author, c.message, changes_text(batch))


def insert_version(d: Dialect) -> str:
    """The INSERT of one ``memory_row``."""
    return f"INSERT INTO versions ({VERSION_COLUMNS}) VALUES ({d.marks(26)})"


def insert_commit(d: Dialect) -> str:
    """The INSERT of one ``commit_row``."""
    return (
        "INSERT INTO commits (seq, id, parent, time, author, message, changes)"
        f" VALUES ({d.marks(7)})"
    )


def upsert_trace(d: Dialect) -> str:
    """The INSERT of one trace row, or the update of its state when it exists."""
    return (
        f"INSERT INTO traces ({TRACE_COLUMNS}) VALUES ({d.marks(10)})"
        " ON CONFLICT (id) DO UPDATE SET status = excluded.status,"
        " last_step = excluded.last_step, ended_seq = excluded.ended_seq,"
        " ended_at = excluded.ended_at"
    )


def trace_rows(batch: Batch, d: Dialect) -> list[tuple]:
    """The ``traces`` rows a batch writes."""
    out = d.time_out
    return [
        (t.id, t.tenant, t.scope, t.session, t.status, t.last_step, t.started_seq,
         out(t.started_at), t.ended_seq, out(t.ended_at))
        for t in batch.traces
    ]  # fmt: skip


def row_to_commit(r: tuple, d: Dialect) -> tuple[Commit, list[str | None]]:
    """A Commit, and the tenant of each change, from a ``commits`` row."""
    changes = []
    tenants = []
    for item in json.loads(r[6]) if r[6] != "[]" else ():
        changes.append(change(item[0], item[1], item[2], item[4] if len(item) > 4 else {}))
        tenants.append(item[3])
    made = make_commit(r[0], r[1], r[2], d.time_in(r[3]), r[4], r[5], tuple(changes))
    return made, tenants


def row_to_trace(r: tuple, d: Dialect) -> TraceRow:
    """A TraceRow from a row of ``TRACE_COLUMNS``."""
    t = d.time_in
    return TraceRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], t(r[7]), r[8], t(r[9]))


def commits_sql(
    d: Dialect, seqs: Sequence[int] | None, after: int, upto: int | None, newest_first: bool,
    limit: int | None, changes: bool,
) -> tuple[str, list[Any]]:  # fmt: skip
    """The SELECT of ``Backend.commits``."""
    where = [f"seq > {d.mark}"]
    params: list[Any] = [after]
    if upto is not None:
        where.append(f"seq <= {d.mark}")
        params.append(upto)
    if seqs is not None:
        where.append(d.in_("seq", list(seqs), params))
    text = (
        "SELECT seq, id, parent, time, author, message, "
        + ("changes" if changes else "'[]'")
        + " FROM commits WHERE "
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
    if query.tenant is not None:
        where.append(f"{'tenant' if query.ids is None else d.tenant_by_id} = {p}")
        params.append(query.tenant)
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
    text = f"SELECT {COLUMNS} FROM versions WHERE " + " AND ".join(where)
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
    d: Dialect, ids: Sequence[str] | None, tenant: str | None, as_of: int | None,
    status: str | None, unmarked: str | None, after: str | None, limit: int | None,
) -> tuple[str, list[Any]]:  # fmt: skip
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
    text = f"SELECT {TRACE_SELECT} FROM traces t WHERE " + " AND ".join(where)
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
    d: Dialect, tiers: Sequence[str] | None, tenant: str | None, always: bool | None
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


def usage_sql(d: Dialect, ids: Iterable[str] | None) -> tuple[str, list[Any]] | None:
    """The SELECT of the use counts of ``ids`` (of every memory when None).

    None when ``ids`` is empty: there is nothing to ask.
    """
    text = "SELECT id, count, first_tick, last_tick FROM usage"
    params: list[Any] = []
    if ids is not None:
        ids = list(ids)
        if not ids:
            return None
        text += " WHERE " + d.in_("id", ids, params)
    return text, params


def upsert_usage(d: Dialect) -> str:
    """The INSERT of one use count row, or the update of its count and last tick."""
    return (
        f"INSERT INTO usage (id, count, first_tick, last_tick) VALUES ({d.marks(4)})"
        " ON CONFLICT (id) DO UPDATE SET count = excluded.count,"
        " last_tick = excluded.last_tick"
    )


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
            "purged memory still has content in some version",
            "SELECT DISTINCT v.id FROM versions v JOIN versions p"
            " ON p.id = v.id AND p.status = 'purged' AND p.end_seq IS NULL"
            " WHERE v.content != '' OR v.metadata != '{}' OR v.tags != '[]'",
        ),
    )


def broken(conn: Any, checks: tuple[tuple[str, str], ...]) -> list[str]:
    """One line for each of ``checks`` that finds rows, with a few of them.

    ``conn`` is a sqlite3 or psycopg connection: both have ``execute`` returning a
    cursor with ``fetchmany``.
    """
    found = []
    for what, query in checks:
        rows = conn.execute(query).fetchmany(SAMPLE)
        if rows:
            found.append(f"{what}: {[tuple(r) for r in rows]}")
    return found


def undecodable(conn: Any, d: Dialect) -> list[str]:
    """Problems reading every stored row back, and changes whose version is not stored.

    The invariant queries compare columns inside the database; this reads each
    commit, version, trace and state row as the store would (a damaged page can
    hold text that no longer decodes), then checks that every change naming a
    memory version has that version.
    """
    found: list[str] = []
    stored: set[tuple[str, int]] = set()
    last = "the first row"
    try:
        for r in conn.execute(f"SELECT {COLUMNS} FROM versions ORDER BY id, version"):
            m = row_to_memory(r, d)
            stored.add((m.id, m.version))
            last = f"version {m.version} of {m.id!r}"
    except Exception as exc:  # any failure to decode is the finding
        found.append(f"versions: a row after {last} cannot be read: {exc}")
    wanted: list[tuple[int, str, int]] = []
    last = "the first commit"
    try:
        text, params = commits_sql(d, None, 0, None, False, None, True)
        for r in conn.execute(text, params):
            commit, _ = row_to_commit(r, d)
            wanted += [
                (commit.seq, c.memory_id, c.version)
                for c in commit.changes
                if c.memory_id is not None and c.version is not None
            ]
            last = f"commit {commit.seq}"
    except Exception as exc:
        found.append(f"commits: a row after {last} cannot be read: {exc}")
    if not found:
        missing = [w for w in wanted if (w[1], w[2]) not in stored][:SAMPLE]
        if missing:
            found.append(f"change names a memory version that is not stored: {missing}")
    try:
        for r in conn.execute(f"SELECT {TRACE_COLUMNS} FROM traces"):
            row_to_trace(r, d)
        for r in conn.execute("SELECT namespace, name, value FROM state"):
            json.loads(r[2])
    except Exception as exc:
        found.append(f"traces or state: a row cannot be read: {exc}")
    return found
