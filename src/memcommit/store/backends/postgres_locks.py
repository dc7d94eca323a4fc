"""The partitions a writer locks before the writers' lock: none waits for a rewrite holding it.

A purge's scrub rewrites the partitions of its tenants one at a time, each under
an ACCESS EXCLUSIVE lock (`postgres_scrub`). A writer that took the store-wide
writers' lock first and met the rewrite's lock afterwards (its INSERT into the
partition, a read of it) would hold every other writer, of every tenant, behind
the rewrite. So a writer takes ROW EXCLUSIVE on the partitions it may write
before the writers' lock, in the same round trip: the mode its INSERTs and
UPDATEs take anyway, which conflicts with no other writer or reader, only with a
rewrite (and DDL). The lock order is the partitions, then the writers' lock; a
lock on a partition already held is granted at once, even with a rewrite waiting
for it, so nothing after the writers' lock waits for a rewrite:

- a commit sent whole (only adds, `postgres_sequence`) locks the ``versions``
  partitions of the tenants it adds to;
- a commit of a tenant's view (``store.tenant(t).commit()``) that is ordered in
  its block locks the ``versions`` and ``vectors`` partitions of its tenant;
- any other ordered commit (``store.commit()`` that reads or edits, a state
  write) locks every partition, as its reads by id do anyway.

A tenant's partition is asked of the server once per process (`Partitions`); a
store at the layout before partitions answers the tables themselves.
"""

from __future__ import annotations

from collections.abc import Iterable

import psycopg

#: How many tenants' partitions a process remembers (each new one costs one query).
REMEMBERED = 4096
#: The tables a commit of unknown tenants locks: LOCK TABLE takes every partition of each.
EVERY = ("versions", "vectors")
#: The partition of ``versions`` that holds tenant ``%s`` (no row: not partitioned).
_FIND = (
    "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
    " CROSS JOIN LATERAL regexp_match(pg_get_expr(c.relpartbound, c.oid),"
    " 'modulus (\\d+), remainder (\\d+)') AS b (m)"
    " WHERE i.inhparent = 'versions'::regclass"
    " AND satisfies_hash_partition('versions'::regclass, b.m[1]::int, b.m[2]::int, %s::text)"
)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Partitions:
    """Each tenant's ``versions`` and ``vectors`` partitions, remembered for `REMEMBERED`."""

    def __init__(self) -> None:
        self._of: dict[str, tuple[str, str]] = {}

    def of(self, conn: psycopg.Connection, tenant: str) -> tuple[str, str]:
        """(versions, vectors) partitions of ``tenant``, asked on idle ``conn`` if new."""
        found = self._of.get(tenant)
        if found is None:
            row = conn.execute(_FIND, (tenant,)).fetchone()
            found = (row[0], "vectors" + row[0].removeprefix("versions")) if row else EVERY
            if len(self._of) >= REMEMBERED:
                self._of.pop(next(iter(self._of)))  # the oldest asked
            self._of[tenant] = found
        return found

    def lock(
        self,
        conn: psycopg.Connection,
        tenants: Iterable[str] | None,
        *,
        vectors: bool,
        wait: str,
    ) -> list[str]:
        """The statements that lock what a commit writes in ``tenants`` (None: any), to run
        after BEGIN and before the writers' lock: ``wait`` (its ``SET LOCAL lock_timeout``)
        and one LOCK TABLE in ROW EXCLUSIVE mode. ``vectors``: their partitions too."""
        if tenants is None:
            tables = set(EVERY)
        else:
            tables = set()
            for tenant in tenants:
                versions, vector = self.of(conn, tenant)
                tables.update((versions, vector) if vectors else (versions,))
        if not tables:
            return []
        names = ", ".join(_quoted(t) for t in sorted(tables))
        return [wait, f"LOCK TABLE {names} IN ROW EXCLUSIVE MODE"]
