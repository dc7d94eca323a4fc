"""The integrity invariants of a memcommit PostgreSQL schema, as queries.

The same invariants as the SQLite backend checks; foreign keys need no check
here because PostgreSQL enforces them on every write. Each query returns
offending rows (a few at most); an empty result means the invariant holds.
"""

from __future__ import annotations

import psycopg

_SAMPLE = 5

_CHECKS = (
    (
        "commit sequence has a gap or does not start at 1",
        "SELECT count(*), min(seq), max(seq) FROM commits"
        " HAVING count(*) > 0 AND (min(seq) != 1 OR max(seq) != count(*))",
    ),
    (
        "commit parent is not the previous commit",
        "SELECT c.seq, c.parent FROM commits c LEFT JOIN commits p ON p.seq = c.seq - 1"
        " WHERE (c.seq = 1 AND c.parent IS NOT NULL)"
        " OR (c.seq > 1 AND c.parent IS DISTINCT FROM p.id)",
    ),
    (
        "commit id does not carry its seq",
        "SELECT seq, id FROM commits WHERE length(id) != 32"
        " OR substr(id, 1, 12) != lpad(to_hex(seq), 12, '0')",
    ),
    (
        "memory version ends before it begins",
        "SELECT id, version, seq, end_seq FROM versions WHERE end_seq < seq",
    ),
    (
        "memory versions not numbered 1..n with exactly one current (the last)",
        "SELECT id, count(*), max(version) FROM versions GROUP BY id"
        " HAVING min(version) != 1 OR max(version) != count(*)"
        " OR count(*) FILTER (WHERE end_seq IS NULL) != 1"
        " OR max(version) FILTER (WHERE end_seq IS NULL) != max(version)",
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


def problems(conn: psycopg.Connection) -> list[str]:
    """Every broken invariant, one line each with a few of the offending rows."""
    found = []
    for what, query in _CHECKS:
        rows = conn.execute(query).fetchmany(_SAMPLE)
        if rows:
            found.append(f"{what}: {[tuple(r) for r in rows]}")
    return found
