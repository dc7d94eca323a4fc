"""Purged tombstones take no room: the store's counts leave them out, so nothing maintains for them.

A purge leaves each memory in its tier as a tombstone. Counted by ``tier_counts``,
tombstones made a partition of live memories within capacity look over it, so
every later ``touch`` and ``working`` ran a whole maintenance (the compactor
included) that found nothing to evict and corrected nothing. Both backends.
"""

from __future__ import annotations

import importlib
import shutil
from datetime import datetime, timedelta, timezone

import pytest

from memcommit.compaction import Compactor
from memcommit.tiers.memory import TieredMemory

T = datetime(2026, 1, 1, tzinfo=timezone.utc)
CAPACITY = 3


class CountingCompactor(Compactor):
    """A Compactor that counts its runs: one per maintenance that compacts."""

    def __init__(self, store):
        super().__init__(store)
        self.runs = 0

    def compact(self, now=None, **options):
        self.runs += 1
        return super().compact(now=now, **options)


def fill(view, n, *, purge=0):
    """``n`` short-term memories in one commit, then the first ``purge`` of them purged."""
    with view.commit(message=f"add {n}", now=T) as tx:
        ids = [tx.add(f"memory {i}").id for i in range(n)]
    if purge:
        with view.commit(message=f"purge {purge}", now=T + timedelta(minutes=1)) as tx:
            for i in ids[:purge]:
                tx.purge(i)
    return ids


def use(tiers, live, calls=10):
    """``calls`` reads of working memory and as many touches of a live memory, in time order."""
    for k in range(calls):
        tiers.working(now=T + timedelta(minutes=2, seconds=k))
        tiers.touch(live, now=T + timedelta(minutes=3, seconds=k))


@pytest.fixture
def view(make_store):
    return make_store().tenant("acme")


def test_tier_counts_leave_purged_tombstones_out(view):
    ids = fill(view, 4, purge=1)
    assert view.get(ids[0]).tier == "short"  # the tombstone stays where it lay
    expected = {("short", "acme", "shared"): 3}
    assert view.tier_counts() == expected
    assert view.tier_counts(always=False) == expected


def test_tombstones_in_a_partition_that_fits_call_for_no_maintenance(view):
    ids = fill(view, 8, purge=5)  # 3 live memories: exactly the capacity
    compactor = CountingCompactor(view)
    tiers = TieredMemory(view, capacity=CAPACITY, compactor=compactor)
    head = view.head_seq
    use(tiers, [ids[5]])
    assert compactor.runs == 0
    assert view.head_seq == head  # no tier commit either
    assert {m.id for m in tiers.working(now=T + timedelta(hours=1))} == set(ids[5:])


def test_a_partition_over_capacity_is_maintained_once_then_left_alone(view):
    ids = fill(view, 8)  # no tombstone: 8 live memories, 5 over
    compactor = CountingCompactor(view)
    tiers = TieredMemory(view, capacity=CAPACITY, compactor=compactor)
    use(tiers, [ids[-1]])
    assert compactor.runs == 1
    assert len(tiers.working(now=T + timedelta(hours=1))) == CAPACITY


def test_a_purge_after_the_counts_were_read_frees_room_at_once(view):
    ids = fill(view, 3)
    compactor = CountingCompactor(view)
    tiers = TieredMemory(view, capacity=CAPACITY, compactor=compactor)
    tiers.working(now=T)  # the counts are read: the partition is full
    with view.commit(message="purge one", now=T + timedelta(minutes=1)) as tx:
        tx.purge(ids[0])
    with view.commit(message="one more", now=T + timedelta(minutes=2)) as tx:
        tx.add("a fourth memory, in the room the purge freed")
    use(tiers, [ids[1]])
    assert compactor.runs == 0
    assert tiers._cache.counts()[("short", "acme", "shared")] == CAPACITY
    assert view.tier_counts(always=False) == {("short", "acme", "shared"): CAPACITY}


def test_a_tenant_with_tombstones_is_indexed_whole_after_a_commit_that_purges(
    make_store, recall_snapshots, monkeypatch
):
    """Recall's index, opened from the commit that wrote a tenant, asks ``tier_counts`` whether
    the commit holds all of it: without tombstones in that count, a commit that adds one memory
    and purges another must not pass for the whole of a tenant holding a third."""
    monkeypatch.setattr(importlib.import_module("memcommit.upkeep"), "KEEP_AFTER", 1)
    store = make_store("indexed.db")
    with store.tenant("acme").commit(message="two", now=T) as tx:
        kept = tx.add("zebra crossing near the depot").id
        secret = tx.add("the secret banana recipe").id
    store.close()
    shutil.rmtree(recall_snapshots)  # the snapshot is gone: the index is opened anew
    view = make_store("indexed.db").tenant("acme")
    with view.commit(message="add one, purge one", now=T + timedelta(minutes=1)) as tx:
        tx.add("apple pie on Fridays")
        tx.purge(secret)
    found = view.recall("zebra", now=T + timedelta(minutes=2)).selected
    assert [m.id for m in found] == [kept]
