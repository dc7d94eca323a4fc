"""The SQL of the PostgreSQL backend: statements, row <-> model conversions, the memory query.

Rows have the same columns as the SQLite backend's; tags, metadata and changes
are the same JSON text, so both backends give back equal values.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import psycopg

from memcommit.model import Change, Commit, Memory
from memcommit.store.backend import Batch, Query
from memcommit.store.records import memory

COLUMNS = (
    "id, version, content, kind, scope, tenant, session, mkey, importance, tags, project,"
    " always, token_count, trace_id, step, metadata, valid_from, valid_to, superseded_by,"
    " status, tier, created_at, created_commit, updated_at, seq"
)
VERSION_COLUMNS = COLUMNS + ", end_seq"
INSERT_VERSION = f"INSERT INTO versions ({VERSION_COLUMNS}) VALUES (" + ", ".join(["%s"] * 26) + ")"
INSERT_COMMIT = (
    "INSERT INTO commits (seq, id, parent, time, author, message, changes)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s)"
)
TRACE_COLUMNS = (
    "id, tenant, scope, session, status, last_step, started_seq, started_at, ended_seq, ended_at"
)


def row_to_memory(r: tuple) -> Memory:
    """A Memory from a row of ``COLUMNS`` (psycopg has already made times and numbers)."""
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
            "always": r[11],
            "token_count": r[12],
            "trace_id": r[13],
            "step": r[14],
            "metadata": {} if meta == "{}" else json.loads(meta),
            "valid_from": r[16],
            "valid_to": r[17],
            "superseded_by": r[18],
            "status": r[19],
            "tier": r[20],
            "version": r[1],
            "created_at": r[21],
            "created_commit": r[22],
            "updated_at": r[23],
            "updated_commit": r[24],
        }
    )


def memory_row(m: Memory, end_seq: int | None) -> tuple:
    """The ``VERSION_COLUMNS`` row of one memory version."""
    return (
        m.id, m.version, m.content, m.kind, m.scope, m.tenant, m.session, m.key, m.importance,
        json.dumps(list(m.tags)) if m.tags else "[]", m.project, m.always, m.token_count,
        m.trace_id, m.step, json.dumps(m.metadata, sort_keys=True) if m.metadata else "{}",
        m.valid_from, m.valid_to, m.superseded_by, m.status, m.tier, m.created_at,
        m.created_commit, m.updated_at, m.updated_commit, end_seq,
    )  # fmt: skip


def changes_text(batch: Batch) -> str:
    """A commit's changes as the JSON text both backends store (same shape as SQLite)."""
    return json.dumps(
        [
            [ch.op, ch.memory_id, ch.version, tenant, ch.detail]
            if ch.detail
            else [ch.op, ch.memory_id, ch.version, tenant]
            for ch, tenant in zip(batch.commit.changes, batch.tenants, strict=False)
        ],
        separators=(",", ":"),
    )


def commit_row(batch: Batch) -> tuple:
    """The ``commits`` row of a batch's commit."""
    c = batch.commit
    return (c.seq, c.id, c.parent, c.time, c.author, c.message, changes_text(batch))


def queue_updates(cur: psycopg.Cursor, batch: Batch) -> None:
    """Queue a commit's row updates (closed versions, purges, trace states) in a pipeline."""
    seq = batch.commit.seq
    for mid, version in batch.closes:
        cur.execute(
            "UPDATE versions SET end_seq = %s WHERE id = %s AND version = %s", (seq, mid, version)
        )
    if batch.purges:
        cur.execute(
            "UPDATE versions SET content = '', tags = '[]', metadata = '{}' WHERE id = ANY(%s)",
            (list(batch.purges),),
        )
    for t in batch.traces:
        cur.execute(
            f"INSERT INTO traces ({TRACE_COLUMNS}) VALUES"
            " (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (id) DO UPDATE SET status = excluded.status,"
            " last_step = excluded.last_step, ended_seq = excluded.ended_seq,"
            " ended_at = excluded.ended_at",
            (t.id, t.tenant, t.scope, t.session, t.status, t.last_step, t.started_seq,
             t.started_at, t.ended_seq, t.ended_at),
        )  # fmt: skip


def row_to_commit(r: tuple) -> tuple[Commit, list[str | None]]:
    """A Commit, and the tenant of each change, from a ``commits`` row."""
    changes = []
    tenants = []
    for item in json.loads(r[6]):
        changes.append(Change(item[0], item[1], item[2], item[4] if len(item) > 4 else {}))
        tenants.append(item[3])
    return Commit(r[0], r[1], r[2], r[3], r[4], r[5], tuple(changes)), tenants


def in_(column: str, values: Sequence[Any], params: list[Any]) -> str:
    """``column = %s`` for one value, ``column = ANY(%s)`` (one array parameter) for more."""
    if len(values) == 1:
        params.append(values[0])
        return f"{column} = %s"
    params.append(list(values))
    return f"{column} = ANY(%s)"


def memories_sql(query: Query) -> tuple[str, list[Any]]:
    """The one SELECT that answers ``query``: every filter runs in the database."""
    where: list[str] = []
    params: list[Any] = []
    if query.as_of is None:
        where.append("end_seq IS NULL")
    else:
        where.append("seq <= %s AND (end_seq IS NULL OR end_seq > %s)")
        params += [query.as_of, query.as_of]
    if query.ids is not None:
        where.append(in_("id", query.ids, params))
    if query.tenant is not None:
        where.append("tenant = %s")
        params.append(query.tenant)
    for column, values in (
        ("scope", query.scopes),
        ("kind", query.kinds),
        ("session", query.sessions),
        ("tier", query.tiers),
    ):
        if values is not None:
            where.append(in_(column, values, params) if values else "false")
    for column, value, test in (
        ("mkey", query.key, "="),
        ("trace_id", query.trace, "="),
        ("created_at", query.since, ">="),
        ("created_at", query.until, "<="),
    ):
        if value is not None:
            where.append(f"{column} {test} %s")
            params.append(value)
    if query.traces is not None:
        where.append(in_("trace_id", query.traces, params) if query.traces else "false")
    if query.live_at is not None:
        where.append(
            "status = 'active' AND superseded_by IS NULL"
            " AND (valid_from IS NULL OR valid_from <= %s)"
            " AND (valid_to IS NULL OR valid_to > %s)"
        )
        params += [query.live_at, query.live_at]
    text = f"SELECT {COLUMNS} FROM versions WHERE " + " AND ".join(where)
    if query.trace is not None:
        text += " ORDER BY step NULLS FIRST, id"
    elif query.traces is not None:
        text += " ORDER BY trace_id, step, id"
    else:
        text += " ORDER BY id"
    if query.limit is not None:
        text += f" LIMIT {int(query.limit)}"
    return text, params


def traces_sql(
    ids: Sequence[str] | None, tenant: str | None, as_of: int | None, status: str | None,
    unmarked: str | None, after: str | None, limit: int | None,
) -> tuple[str, list[Any]]:  # fmt: skip
    """The SELECT of `PostgresBackend.traces`: filters, paging and order in the database."""
    where = ["true"]
    params: list[Any] = []
    if ids is not None:
        where.append(in_("t.id", ids, params))
    if tenant is not None:
        where.append("t.tenant = %s")
        params.append(tenant)
    if as_of is not None:
        where.append("t.started_seq <= %s")
        params.append(as_of)
    if status is not None and as_of is None:
        where.append("t.status = %s")
        params.append(status)
    elif status == "open":  # at as_of: a trace that ended later was still open
        where.append("(t.ended_seq IS NULL OR t.ended_seq > %s)")
        params.append(as_of)
    elif status is not None:
        where.append("t.status = %s AND t.ended_seq <= %s")
        params += [status, as_of]
    if unmarked is not None:  # the root is the memory named like the trace, at as_of
        live = "r.end_seq IS NULL"
        if as_of is not None:
            live = "r.seq <= %s AND (r.end_seq IS NULL OR r.end_seq > %s)"
            params += [as_of, as_of]
        where.append(
            f"NOT EXISTS (SELECT 1 FROM versions r WHERE r.id = t.id AND {live}"
            " AND r.metadata::jsonb ? %s)"
        )
        params.append(unmarked)
    if after is not None:
        where.append("(t.started_seq, t.id) > (SELECT started_seq, id FROM traces WHERE id = %s)")
        params.append(after)
    columns = ", ".join("t." + c for c in TRACE_COLUMNS.split(", "))
    text = f"SELECT {columns} FROM traces t WHERE " + " AND ".join(where)
    text += " ORDER BY t.started_seq, t.id"  # ties: one commit began several (ids sort by birth)
    if limit is not None:
        text += f" LIMIT {int(limit)}"
    return text, params
