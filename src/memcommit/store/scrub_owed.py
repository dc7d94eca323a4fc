"""Scrubs owed: the tenants whose purged content may still be in the database's files.

A purge lands in its commit; the scrub that removes the copies a database keeps
beyond the live rows (SQLite's log, PostgreSQL's old row versions) runs after
it, and may fail (a reader still held them) or never run (the process died as
the commit landed). So the purging commit records each tenant it purged in, in
its own transaction, with a count of purges. A scrub clears the tenants it
covered whose count is still the one it read before it began (a purge landing
meanwhile keeps its tenant owed). What is owed is scrubbed after the next purge,
after a process's first commit, and by `Store.scrub` / ``memcommit scrub``;
`Store.scrub_pending` lists it.
"""

from __future__ import annotations

from collections.abc import Collection

from memcommit.store.backends.base import Backend

#: The state namespace of the counts ("/": no namespace a caller names, nor a view's).
NAMESPACE = "memcommit/scrub-owed"


def record(backend: Backend, tenants: Collection[str]) -> None:
    """Count one more purge owed a scrub in each of ``tenants`` (inside the purge's commit)."""
    for tenant in sorted(tenants):
        before = backend.state_get(NAMESPACE, tenant)
        backend.state_set(NAMESPACE, tenant, str(int(before or 0) + 1))


def owed(backend: Backend) -> dict[str, int]:
    """Tenant -> count of purges owed a scrub (empty: every purge's copies are gone)."""
    return {tenant: int(count) for _, tenant, count in backend.state_items(NAMESPACE)}


def settle(backend: Backend, seen: dict[str, int]) -> None:
    """Clear the tenants of ``seen`` (as read before a scrub that then covered them) whose
    count has not moved since (inside a write transaction)."""
    for tenant, count in sorted(seen.items()):
        if backend.state_get(NAMESPACE, tenant) == str(count):
            backend.state_delete(NAMESPACE, tenant)
