"""Tier counters: kept per tenant whichever way TieredMemory was opened, never lost between writers.

Every test runs on SQLite and PostgreSQL; "another process" is a second Store
object on the same file or schema.
"""

from __future__ import annotations

import pytest

from memcommit.errors import InvalidInput
from memcommit.tiers import LRU
from memcommit.tiers.memory import TieredMemory
from memcommit.tiers.stats import TierStats


def add(store, n, *, tier="short", scope="shared", tenant="default"):
    with store.commit(message=f"add {n}") as tx:
        return [tx.add(f"memory {i}", tier=tier, scope=scope, tenant=tenant).id for i in range(n)]


@pytest.fixture
def pair(make_store):
    """Two Store objects on one store."""
    return make_store("counters.db"), make_store("counters.db")


def test_hit_touches_from_two_store_objects_all_count(pair):
    ours, theirs = pair
    (a,) = add(ours, 1)
    first, second = TieredMemory(ours), TieredMemory(theirs)
    first.touch([a])
    second.touch([a])
    first.touch([a])  # once saved the whole blob it held: second's hit was overwritten
    assert TierStats.read(ours).total.hits == 3
    assert first.stats.total.hits == second.stats.total.hits == 3


def test_page_in_commits_from_two_store_objects_all_count(pair):
    ours, theirs = pair
    archived = add(ours, 3, tier="archive")
    first = TieredMemory(ours, capacity=1, eviction=LRU())
    second = TieredMemory(theirs, capacity=1, eviction=LRU())
    first.touch([archived[0]])
    second.touch([archived[1]])
    first.touch([archived[2]])
    total = TierStats.read(theirs).total
    assert (total.misses, total.page_ins, total.evictions) == (3, 3, 2)


def test_counters_are_the_same_through_a_view_and_the_whole_store(make_store):
    store = make_store()
    mine = add(store, 2, tenant="alpha")
    theirs = add(store, 1, tenant="beta")
    TieredMemory(store.tenant("alpha")).touch(mine)  # as the MCP server does
    TieredMemory(store).touch(mine[:1] + theirs)  # as the CLI and the workbench do
    whole = TieredMemory(store).stats
    assert whole.of(("alpha", "shared")).hits == 3
    assert whole.of(("beta", "shared")).hits == 1
    assert TierStats.read(store, tenant="alpha").to_json() == (
        TieredMemory(store.tenant("alpha")).stats.to_json()
    )
    assert set(TierStats.read(store, tenant="beta").partitions) == {("beta", "shared")}


def test_a_view_reads_only_its_own_tenants_counters(make_store):
    store = make_store()
    mine = add(store, 1, tenant="alpha")
    theirs = add(store, 1, tenant="beta", scope="secret-deal")
    TieredMemory(store).touch(mine + theirs)
    view = store.tenant("alpha")
    assert set(TieredMemory(view).stats.partitions) == {("alpha", "shared")}
    assert set(TierStats.read(view).partitions) == {("alpha", "shared")}
    assert "secret-deal" not in str(TierStats.read(view).to_json())
    with pytest.raises(InvalidInput) as caught:
        TierStats.read(view, tenant="beta")
    assert caught.value.field == "tenant"
    stats = TierStats()
    stats.of(("beta", "shared")).hits = 9
    with pytest.raises(InvalidInput):
        stats.save(view)  # a view cannot write another tenant's counters either
    assert TierStats.read(store, tenant="beta").total.hits == 1


def test_saved_counters_are_read_back_per_tenant(make_store):
    store = make_store()
    add(store, 1, tenant="alpha")
    add(store, 1, tenant="beta")
    stats = TierStats()
    stats.of(("alpha", "shared")).hits = 3
    stats.of(("beta", "planner")).misses = 2
    stats.save(store)
    assert TierStats.read(store).to_json() == stats.to_json()
    assert TierStats.read(store.tenant("beta")).total.misses == 2
    loaded = TierStats()
    loaded.load(store, tenant="alpha")
    assert set(loaded.partitions) == {("alpha", "shared")}
