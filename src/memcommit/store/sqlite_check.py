"""The integrity invariants of a memcommit SQLite database, as queries.

The shared invariants (`sql_checks`) in SQLite's spelling, after SQLite's own
page and foreign key checks.
"""

from __future__ import annotations

import sqlite3

from memcommit.store.sql_checks import SAMPLE, broken, invariants

_CHECKS = invariants(
    is_not="IS NOT",
    seq_hex="substr(printf('%012x', seq), 1, 12)",
    bounds=(
        "memory version not written by a stored commit",
        "SELECT v.id, v.version, v.seq FROM versions v"
        " WHERE NOT EXISTS (SELECT 1 FROM commits c WHERE c.seq = v.seq)"
        " OR (v.end_seq IS NOT NULL AND (v.end_seq < v.seq"
        " OR NOT EXISTS (SELECT 1 FROM commits c WHERE c.seq = v.end_seq)))",
    ),
    one_current="sum(end_seq IS NULL)",
    current_version="max(CASE WHEN end_seq IS NULL THEN version END)",
)


def problems(conn: sqlite3.Connection) -> list[str]:
    """Every broken invariant, one line each with a few of the offending rows."""
    found = []
    quick = [r[0] for r in conn.execute("PRAGMA quick_check")]
    if quick != ["ok"]:
        found.append(f"sqlite quick_check: {'; '.join(quick[:SAMPLE])}")
    broken_links = conn.execute("PRAGMA foreign_key_check").fetchmany(SAMPLE)
    if broken_links:
        found.append(f"foreign key broken: {broken_links}")
    return found + broken(conn, _CHECKS)
