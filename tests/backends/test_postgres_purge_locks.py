"""A rewrite of one partition holds back the writers of that partition only (PostgreSQL).

A purge's scrub rewrites a partition under an ACCESS EXCLUSIVE lock. Writers lock
the partitions they write before the store-wide writers' lock (`postgres_locks`),
so a writer of the rewritten partition waits for it without holding the writers'
lock, and commits in other partitions go on. Here the rewrite's lock is held by
hand from another connection for several seconds while a writer of that
partition waits; a commit in another partition, by another store object on its
own connections, must land well before the lock goes.
"""

from __future__ import annotations

import threading
import time
import uuid
from datetime import datetime, timedelta, timezone

import psycopg
import pytest

import memcommit
from memcommit.store.backends.postgres_locks import EVERY, Partitions

pytestmark = pytest.mark.postgres

#: How long the partition stays locked at most; a commit elsewhere must land within BOUND.
HELD = 6.0
BOUND = 1.0


def _partitions(admin, schema: str) -> dict[str, str]:
    rows = admin.execute(f'SELECT tenant, tableoid::regclass::text FROM "{schema}".versions')
    return {tenant: partition.rpartition(".")[2] for tenant, partition in rows}


def _later(hours: int = 0) -> datetime:
    """A ``now=`` of an ordered commit: the blocked one lands last, at the latest time."""
    return datetime.now(timezone.utc) + timedelta(hours=hours, seconds=1)


def _blocked_add(store, tenant: str, kind: str) -> None:
    """One commit in ``tenant`` of the given kind (see the parameters below)."""
    if kind == "adds":  # sent whole, ordered by the server
        with store.tenant(tenant).commit(message="blocked") as tx:
            tx.add("waits for the rewrite")
    elif kind == "view-ordered":  # a tenant's view, ordered at BEGIN
        with store.tenant(tenant).commit(message="blocked", now=_later(1)) as tx:
            tx.add("waits for the rewrite")
    else:  # a store-wide ordered commit: its tenants are not known up front
        with store.commit(message="blocked", now=_later(1)) as tx:
            tx.add("waits for the rewrite", tenant=tenant)


def _waiting_on(admin, schema: str, partition: str) -> bool:
    return bool(
        admin.execute(
            "SELECT 1 FROM pg_locks WHERE NOT granted AND relation = %s::regclass",
            (f'"{schema}"."{partition}"',),
        ).fetchone()
    )


@pytest.mark.parametrize("kind", ["adds", "view-ordered", "store-ordered"])
@pytest.mark.parametrize("free_kind", ["adds", "view-ordered"])
def test_a_writer_waiting_for_a_rewritten_partition_holds_back_no_other_partition(
    pg_url, admin, postgres_server, kind, free_kind
):
    url = pg_url()
    schema = url.rpartition("schema=")[2]
    seeding = memcommit.open(url)
    with seeding.commit(message="tenants") as tx:
        for i in range(12):
            tx.add("seed", tenant=f"t{i}")
    seeding.close()
    where = _partitions(admin, schema)
    rewritten = where["t0"]
    free = next(t for t, p in where.items() if p != rewritten)
    blocked_store, free_store = memcommit.open(url), memcommit.open(url)
    for store, tenant in ((blocked_store, "t0"), (free_store, free)):  # warm: partitions known
        with store.tenant(tenant).commit(message="warm") as tx:
            tx.add("warm")
    errors: list[BaseException] = []

    def blocked() -> None:
        try:
            _blocked_add(blocked_store, "t0", kind)
        except BaseException as exc:  # reported by the test, not lost in the thread
            errors.append(exc)

    with psycopg.connect(postgres_server) as rewrite:  # the scrub's lock, held by hand
        rewrite.execute(f'LOCK TABLE "{schema}"."{rewritten}" IN ACCESS EXCLUSIVE MODE')
        held = time.monotonic()
        release = threading.Timer(HELD, rewrite.rollback)  # a rewrite ends, even if stalled
        release.start()
        waiter = threading.Thread(target=blocked)
        waiter.start()
        while not _waiting_on(admin, schema, rewritten):
            assert time.monotonic() - held < HELD / 2, "the writer of t0 never waited"
            time.sleep(0.01)
        started = time.monotonic()
        with free_store.tenant(free).commit(
            message="free", now=_later() if free_kind == "view-ordered" else None
        ) as tx:
            tx.add("lands while the rewrite holds its partition")
        took = time.monotonic() - started
        still = waiter.is_alive()
        release.cancel()
        rewrite.rollback()
    waiter.join(HELD)
    assert took < BOUND, f"a commit in {where[free]} waited {took:.2f}s for {rewritten}"
    assert still, "the writer of t0 did not wait for the partition"
    assert not errors, errors
    seqs = [c.seq for c in free_store.log()]
    assert sorted(seqs) == list(range(1, len(seqs) + 1)) and len(seqs) == 5
    assert free_store.verify().ok
    blocked_store.close()
    free_store.close()


def test_a_store_before_partitions_locks_its_tables(admin, postgres_server):
    schema = f"test_{uuid.uuid4().hex[:16]}"
    admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    admin.execute(f'CREATE SCHEMA "{schema}"')
    try:
        admin.execute(f'CREATE TABLE "{schema}".versions (tenant text)')
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute(f'SET search_path TO "{schema}"')
            assert Partitions().of(conn, "acme") == EVERY
            statements = Partitions().lock(conn, ["acme"], vectors=False, wait="SET LOCAL x = 1")
            assert statements[1] == 'LOCK TABLE "versions" IN ROW EXCLUSIVE MODE'
    finally:
        admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
