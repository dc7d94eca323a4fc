"""A commit that purges in one open tenant and grows another, within a tight recall cache
budget: charging one tenant's index may let the other go, so the indexes are charged only
after every tenant is put and the purged one rewritten; the commit lands without a HookError
and the purged words leave the snapshot file (a tenant let go first has its file erased)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import memcommit
from memcommit.recall.index.live import index_dir, snapshot_name, store_index

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)
LATER = T0 + timedelta(days=30)
SECRET = "zanzibarsecretword"


def test_a_purge_with_a_tight_budget_lands_cleanly_and_erases(tmp_path, recall_snapshots):
    store = memcommit.open(tmp_path / "e.db")
    try:
        with store.commit(message="seed", now=T0) as tx:
            for i in range(50):
                tx.add(f"alpha note {i}", id=f"a-{i}", tenant="A")
                tx.add(f"beta note {i}", id=f"b-{i}", tenant="B")
            tx.add(f"the {SECRET} is here", id="secret", tenant="A")
        for tenant in ("A", "B"):
            store.recall("note", tenant=tenant, now=LATER)
        cache = store_index(store).tenants
        cache.budget = sum(cache.charged(t) for t in ("A", "B")) + 2_000  # both fit, barely
        snapshot = index_dir(store) / snapshot_name("A")
        assert SECRET.encode() in snapshot.read_bytes()
        with store.commit(message="purge in A, grow B", now=T0 + timedelta(hours=1)) as tx:
            tx.purge("secret")  # once a HookError(KeyError: 'B')
            for i in range(50, 400):
                tx.add(f"beta extra words number {i} gamma{i}", id=f"b-{i}", tenant="B")
        assert not snapshot.exists() or SECRET.encode() not in snapshot.read_bytes()
    finally:
        store.close()
