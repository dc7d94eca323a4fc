"""The layers above the store (tiers, compaction) do the same on both backends.

Their own suites open SQLite files; this replays one working-memory session and
one compaction on SQLite and on PostgreSQL and compares everything the API reads.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from backends_scenario import everything

import memcommit
from memcommit.compaction import Compactor
from memcommit.tiers import LRU, AccessCount
from memcommit.tiers.memory import TieredMemory

pytestmark = pytest.mark.postgres

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


def session(store) -> None:
    """Memories over capacity, touches that page in and evict, maintenance, a compaction."""
    with store.commit(message="notes", now=NOW) as tx:
        for i in range(12):
            tx.add(f"note {i} about the release", id=f"n{i:02d}", scope="desk")
        trace = tx.begin_trace("ship the release", scope="desk")
        for step in ("run the tests", "tag the build", "publish"):
            tx.step(trace, step)
        tx.finish(trace)
    tiers = TieredMemory(store, capacity=4, eviction=LRU(), promotion=AccessCount(3), auto=False)
    tiers.maintain(NOW + timedelta(minutes=1))
    for k, ids in enumerate((["n00", "n01"], ["n00", "n05"], ["n00", "n11", "n01"])):
        tiers.touch(ids, now=NOW + timedelta(minutes=2 + k))
    tiers.maintain(NOW + timedelta(minutes=10))
    tiers.close()
    Compactor(store).compact(now=NOW + timedelta(minutes=20))


def test_tiers_and_compaction_agree(tmp_path, pg_url):
    stores = [memcommit.open(tmp_path / "layers.db"), memcommit.open(pg_url())]
    try:
        for store in stores:
            session(store)
        assert everything(stores[0]) == everything(stores[1])
        tiers = {m.id: m.tier for m in stores[1].find(live=False)}
        assert tiers["n00"] == "long" and list(tiers.values()).count("short") <= 4
        assert any(m.kind == "summary" for m in stores[1].find())
    finally:
        for store in stores:
            store.close()
