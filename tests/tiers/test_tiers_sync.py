"""TieredMemory stays in step with other writers, reads counts not tiers, and touches in one write.

Every test runs on SQLite and PostgreSQL (``make_store``); "another process" is a
second Store object on the same file or schema, whose commits the first one is
never told of.
"""

from __future__ import annotations

import uuid
from collections import Counter
from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcommit.errors import InvalidInput
from memcommit.tiers import LRU
from memcommit.tiers.memory import TieredMemory
from memcommit.tiers.stats import TierStats

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def pair(make_store):
    """Two Store objects on one store: ours (with the TieredMemory) and another writer's."""
    return make_store("shared.db"), make_store("shared.db")


def add(store, n, *, tier="short", scope="shared", tenant="default", **kw):
    with store.commit(message=f"add {n}") as tx:
        return [
            tx.add(f"memory {i}", tier=tier, scope=scope, tenant=tenant, **kw).id for i in range(n)
        ]


def counted(store):
    """The store's own count of evictable working memories (the cache must equal it)."""
    return Counter(store.tier_counts(tiers=["short", "mid", "long"], always=False))


def cached(tm):
    """The TieredMemory's counts, without the partitions it saw emptied (never below zero)."""
    counts = tm._cache.counts()
    assert min(counts.values(), default=0) >= 0
    return Counter({k: n for k, n in counts.items() if n})


# -- the reads the tiers need from the store --------------------------------------------


def test_head_seq_is_the_newest_commit_seen_by_every_store_object(pair):
    ours, theirs = pair
    assert ours.head_seq == 0
    add(theirs, 2)
    assert ours.head_seq == theirs.head_seq == ours.head.seq == 1
    add(theirs, 1, tenant="beta")
    assert ours.tenant("alpha").head_seq == 2  # a view answers for the whole store


def test_tier_counts_group_by_tier_tenant_and_scope(make_store):
    store = make_store()
    add(store, 3)
    add(store, 2, scope="planner", tier="long")
    add(store, 1, tenant="beta", tier="archive")
    add(store, 1, kind="correction", always=True)
    assert store.tier_counts() == {
        ("short", "default", "shared"): 4,
        ("long", "default", "planner"): 2,
        ("archive", "beta", "shared"): 1,
    }
    assert store.tier_counts(tiers=["short"], always=False) == {("short", "default", "shared"): 3}
    assert store.tier_counts(always=True) == {("short", "default", "shared"): 1}
    assert store.tenant("beta").tier_counts() == {("archive", "beta", "shared"): 1}
    with pytest.raises(InvalidInput) as caught:
        store.tier_counts(tiers=["attic"])
    assert caught.value.field == "tiers"
    with pytest.raises(InvalidInput):
        store.tier_counts(always="no")


def test_record_uses_stores_state_in_the_same_write(pair):
    ours, theirs = pair
    (a,) = add(ours, 1)
    ours.record_uses([a, a], state={("tiers", "note"): {"seen": 2}})
    assert theirs.usage([a])[a].count == 2
    assert theirs.state_get("tiers", "note") == {"seen": 2}
    for bad in ({"flat-key": 1}, [("tiers", "x")], {("tiers", "x"): object()}):
        with pytest.raises(InvalidInput) as caught:
            ours.record_uses([a], state=bad)
        assert caught.value.field in ("state", "value")
    assert theirs.usage([a])[a].count == 2  # a refused call records nothing


# -- another writer's commits ---------------------------------------------------------------


def test_a_resident_archived_by_another_writer_is_a_miss(pair):
    ours, theirs = pair
    resident, other = add(ours, 2)
    tm = TieredMemory(ours, capacity=2)
    assert tm.touch([resident]).hits == [resident]  # cached as short-term
    with theirs.commit(message="archive it") as tx:
        tx.archive(resident)
    result = tm.touch([resident, other])
    assert result.paged_in == [resident] and result.hits == [other]
    assert ours.get(resident).tier == "short"


def test_a_page_in_evicts_what_another_writer_added(pair):
    ours, theirs = pair
    add(ours, 2)
    first, second = add(ours, 2, tier="archive")
    tm = TieredMemory(ours, capacity=2, eviction=LRU())
    assert len(tm.touch([first]).evicted) == 1  # the partition's residents are read
    add(theirs, 3)  # ours is never told: its partition now holds 5
    result = tm.touch([second])
    assert len(result.evicted) == 4
    assert len(tm.working()) == 2


def test_maintain_sees_another_writers_additions(pair):
    ours, theirs = pair
    tm = TieredMemory(ours, capacity=3, eviction=LRU())
    add(ours, 2)
    assert tm.maintain().evicted == []
    add(theirs, 4)
    assert len(tm.maintain().evicted) == 3
    assert len(tm.working()) == 3
    assert cached(tm) == counted(ours)


def test_a_long_gap_starts_over_from_the_store(pair):
    ours, theirs = pair
    tm = TieredMemory(ours, capacity=2, auto=False)
    add(ours, 1)
    tm.maintain()
    for _ in range(300):  # more commits than are worth replaying
        add(theirs, 1, tier="long")
    add(theirs, 2)
    assert len(tm.maintain().evicted) == 1
    assert cached(tm) == counted(ours)


OPS = st.lists(
    st.tuples(
        st.sampled_from(["ours", "theirs"]),
        st.sampled_from(["add", "add_pinned", "archive", "long", "page_in", "touch"]),
        st.sampled_from(["a", "b"]),
        st.integers(0, 50),
    ),
    min_size=1,
    max_size=12,
)


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(ops=OPS)
def test_counts_and_residents_stay_equal_to_the_store(make_store, ops):
    name = f"steps-{uuid.uuid4().hex}.db"
    stores = {"ours": make_store(name), "theirs": make_store(name)}
    ours = stores["ours"]
    tm = TieredMemory(ours, capacity=3, mid_capacity=None, auto=True)
    tm.maintain()
    for who, op, scope, pick in ops:
        store = stores[who]
        ids = [m.id for m in ours.find(live=False)]
        target = ids[pick % len(ids)] if ids else None
        if op == "add":
            add(store, 1 + pick % 3, scope=scope)
        elif op == "add_pinned":
            add(store, 1, scope=scope, kind="correction", always=True)
        elif op == "touch" and target:
            tm.touch([target])
        elif target:
            with store.commit(message=op) as tx:
                if op == "archive":
                    tx.archive(target)
                elif op == "page_in":
                    tx.page_in(target)
                else:
                    tx.move(target, "long")
    tm.maintain()
    assert cached(tm) == counted(ours)
    for (tenant, scope), residents in tm._cache.short.items():
        found = ours.find(tenant=tenant, scopes=[scope], tiers=["short"], live=False)
        assert set(residents) == {m.id for m in found if not m.always}
    for store in stores.values():
        store.close()


# -- one write per touch ----------------------------------------------------------------


def test_a_touch_of_hits_lands_uses_and_counters_without_a_commit(pair):
    ours, theirs = pair
    a, b = add(ours, 2)
    tm = TieredMemory(ours, capacity=2)
    head = ours.head_seq
    tm.touch([a, b, a])
    assert theirs.head_seq == head
    assert theirs.usage([a])[a].count == 2
    assert TierStats.read(theirs).total.hits == 3


def test_a_touch_that_pages_in_lands_as_one_commit_with_its_uses_and_counters(pair):
    ours, theirs = pair
    resident = add(ours, 2)
    (archived,) = add(ours, 1, tier="archive")
    tm = TieredMemory(ours, capacity=2, eviction=LRU())
    head = ours.head_seq
    result = tm.touch([resident[1], archived])
    assert theirs.head_seq == head + 1 == result.commit.seq
    commit = theirs.head
    assert commit.author == "tiers" and archived in commit.message and resident[0] in commit.message
    assert sorted(c.op for c in commit.changes) == ["archive", "page_in"]
    assert theirs.usage([archived])[archived].count == 1
    stats = TierStats.read(theirs).total
    assert (stats.hits, stats.page_ins, stats.evictions) == (1, 1, 1)
    assert cached(tm) == counted(theirs)
