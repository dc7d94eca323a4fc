"""The read queries of the SQL backends: every filter, page and order runs in the database."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memcommit.store.backends.base import MemoryQuery
from memcommit.store.backends.tables import COMMIT, MEMORY_SELECT, TRACE_SELECT, Dialect, names


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
    if query.with_metadata:  # as the index versions_with_metadata is defined (migration 0005)
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
    d: Dialect, *, tiers: Sequence[str] | None, tenant: str | None, always: bool | None
) -> tuple[str, list[Any]]:
    """The SELECT of ``Backend.tier_counts``: current versions by (tier, tenant, scope).

    A purged memory's tombstone is left out: it holds nothing and takes no room,
    and counting it kept a partition of live memories within capacity looking
    over it, so every touch and read of working memory maintained it again.
    """
    where = ["end_seq IS NULL", "status <> 'purged'"]
    params: list[Any] = []
    if tiers is not None:
        where.append(d.in_("tier", tiers, params) if tiers else d.false)
    for column, value in (("tenant", tenant), ("always", always)):
        if value is not None:
            where.append(f"{column} = {d.mark}")
            params.append(value)
    text = "SELECT tier, tenant, scope, count(*) FROM versions WHERE " + " AND ".join(where)
    return text + " GROUP BY tier, tenant, scope", params
