"""Purged content out of PostgreSQL's table files: one partition of ``versions`` at a time.

PostgreSQL keeps an updated row's old version in its page until VACUUM reclaims
the slot, and a plain VACUUM frees the space without clearing it; ``VACUUM FULL``
copies the live rows to new files and drops the old ones, under an ACCESS
EXCLUSIVE lock. ``versions`` is partitioned by a hash of the tenant (migration
0005), so a purge rewrites only its tenants' partitions, each about 1/64 of the
table, and the lock keeps out only what reads that partition while it lasts.

The rewrite asks for its lock with a short ``lock_timeout`` and tries again
later: a lock request waiting behind a long transaction would queue every later
reader of the partition behind itself. A transaction open from before the purge
keeps the old rows alive (VACUUM VERBOSE reports "dead row versions cannot be
removed yet"): the rewrite is tried again a few times, then `scrub` says False.
"""

from __future__ import annotations

import re
import time
from collections.abc import Collection

import psycopg
from psycopg import sql

#: VACUUM VERBOSE's count of dead rows an open snapshot still needs, and how often to retry.
_KEPT = re.compile(r"(\d+) dead row versions cannot be removed yet")
_SNAPSHOT_TRIES = 5
#: How long one rewrite waits in the lock queue before it lets the others go first (ms).
LOCK_WAIT_MS = 50


def partitions(conn: psycopg.Connection, tenants: Collection[str] | None) -> list[str]:
    """The tables that hold the versions and vectors of ``tenants`` (None: every partition).

    A tenant's vectors are in the partition of the same number as its versions
    (both tables hash the same key). A store still at the layout before
    partitions answers ``["versions", "vectors"]``.
    """
    every = [
        name
        for (name,) in conn.execute(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
            " WHERE i.inhparent = 'versions'::regclass ORDER BY c.relname"
        )
    ]
    if not every:
        return ["versions", "vectors"]
    if tenants is None:
        return [*every, *(_vectors(name) for name in every)]
    found = set()
    for tenant in sorted(tenants):  # every memory has a current row: the tombstone, if purged
        row = conn.execute(
            "SELECT tableoid::regclass::text FROM versions"
            " WHERE tenant = %s AND end_seq IS NULL LIMIT 1",
            (tenant,),
        ).fetchone()
        if row is not None:
            found.add(row[0].rpartition(".")[2].strip('"'))
    return [*sorted(found), *(_vectors(name) for name in sorted(found))]


def _vectors(partition: str) -> str:
    """The vectors partition beside the versions partition ``partition`` (same number)."""
    return "vectors" + partition.removeprefix("versions")


def scrub(conn: psycopg.Connection, tenants: Collection[str] | None, patience: float) -> bool:
    """Rewrite the partitions of ``tenants`` on ``conn`` (autocommit, the store's schema).

    Waits for each partition's lock at most `LOCK_WAIT_MS` at a time, for up to
    ``patience`` seconds in all. False when a snapshot kept dead rows alive, or
    the lock never came.
    """
    kept: list[int] = []

    def heard(notice: psycopg.errors.Diagnostic) -> None:
        found = _KEPT.search(notice.message_detail or "")
        if found:
            kept.append(int(found.group(1)))

    conn.add_notice_handler(heard)
    deadline = time.monotonic() + patience
    tables = partitions(conn, tenants)  # may wait for another scrub's rewrite, as any read
    conn.execute(f"SET lock_timeout = '{LOCK_WAIT_MS}ms'")  # the rewrites' own lock requests
    clean = True
    for table in tables:
        statement = sql.SQL("VACUUM (FULL, VERBOSE) {}").format(sql.Identifier(table))
        clean = _rewrite(conn, statement, kept, deadline) and clean
    return clean


def _rewrite(
    conn: psycopg.Connection, statement: sql.Composed, kept: list[int], deadline: float
) -> bool:
    """One partition rewritten until no snapshot keeps its dead rows (True), or given up."""
    snapshots, pause = 0, LOCK_WAIT_MS / 1000
    while True:
        kept.clear()
        try:
            conn.execute(statement)
        except psycopg.errors.LockNotAvailable:
            if time.monotonic() + pause > deadline:
                return False
            time.sleep(pause)  # the queries it held back go first
            pause = min(pause * 2, 1.0)
            continue
        if not any(kept):
            return True
        snapshots += 1
        if snapshots == _SNAPSHOT_TRIES:
            return False
        time.sleep(0.1 * snapshots)  # another session's snapshot: let it end
