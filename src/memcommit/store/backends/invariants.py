"""The store's invariants as SQL: each query returns a few offending rows; none means it holds.

Written once, in each dialect's spelling of a few expressions (`invariants`);
`SQLBackend.check` runs them.
"""

from __future__ import annotations

SAMPLE = 5


def invariants(
    *, is_not: str, seq_hex: str, one_current: str, current_version: str
) -> tuple[tuple[str, str], ...]:
    """(what, query) of every invariant, given the dialect's spelling of a few expressions.

    ``is_not``: the null-safe "differs" operator; ``seq_hex``: a seq as 12 lowercase
    hex digits; ``one_current``: the number of current versions of a memory, ``current_version``:
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
        (  # kept by the writers, not by foreign keys (PostgreSQL's migration 0006); each
            # NOT EXISTS alone in its WHERE, so the server runs it as one anti-join
            "memory version not written, or ended, by a stored commit",
            "SELECT v.id, v.version, v.seq, v.end_seq FROM versions v"
            " WHERE NOT EXISTS (SELECT 1 FROM commits c WHERE c.seq = v.seq)"
            " UNION ALL SELECT v.id, v.version, v.seq, v.end_seq FROM versions v"
            " WHERE v.end_seq IS NOT NULL"
            " AND NOT EXISTS (SELECT 1 FROM commits c WHERE c.seq = v.end_seq)"
            " UNION ALL SELECT v.id, v.version, v.seq, v.end_seq FROM versions v"
            " WHERE v.end_seq < v.seq",
        ),
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
