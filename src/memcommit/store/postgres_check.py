"""The integrity invariants of a memcommit PostgreSQL schema, as queries.

The shared invariants (`sql_checks`) in PostgreSQL's spelling; foreign keys
need no check here because PostgreSQL enforces them on every write.
"""

from __future__ import annotations

import psycopg

from memcommit.store.sql_checks import broken, invariants

_CHECKS = invariants(
    is_not="IS DISTINCT FROM",
    seq_hex="lpad(to_hex(seq), 12, '0')",
    bounds=(
        "memory version ends before it begins",
        "SELECT id, version, seq, end_seq FROM versions WHERE end_seq < seq",
    ),
    one_current="count(*) FILTER (WHERE end_seq IS NULL)",
    current_version="max(version) FILTER (WHERE end_seq IS NULL)",
)


def problems(conn: psycopg.Connection) -> list[str]:
    """Every broken invariant, one line each with a few of the offending rows."""
    return broken(conn, _CHECKS)
