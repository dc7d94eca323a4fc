"""Several writers on one store: TieredMemory follows all of them and never fails a landed commit.

"Another writer" is a second Store object on the same file or schema, whose
commits ours is never told of, exactly as with another process. Both backends.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from memcommit.compaction import Compactor
from memcommit.tiers import FIFO, LRU
from memcommit.tiers.memory import TieredMemory

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)
LATER = NOW + timedelta(hours=1)


@pytest.fixture
def pair(make_store):
    """Two Store objects on one store: ours (with the TieredMemory) and another writer's."""
    return make_store("shared.db"), make_store("shared.db")


def add(store, n, *, tier="short", scope="shared", now=NOW, **kw):
    with store.commit(message=f"add {n}", now=now) as tx:
        return [tx.add(f"memory {i}", tier=tier, scope=scope, **kw).id for i in range(n)]


def rival_commits_first(ours, theirs, at):
    """Once, right after our next commit lands: another writer lands a later commit."""
    fired = []

    def rival(commit):
        if not fired:
            fired.append(commit.seq)
            add(theirs, 1, scope="elsewhere", now=at)

    return ours.on_commit(rival)  # subscribed before the TieredMemory: it runs first


def test_maintenance_after_a_commit_outlived_by_another_writer_never_fails_it(pair):
    ours, theirs = pair
    rival_commits_first(ours, theirs, LATER)
    TieredMemory(ours, capacity=2, eviction=FIFO())
    with ours.commit(message="three", now=NOW) as tx:  # over capacity: maintenance follows
        ids = [tx.add(f"note {i}").id for i in range(3)]
    assert tx.result.seq == 1  # it landed, and nothing was raised for it
    assert [ours.get(i).tier for i in ids] == ["archive", "short", "short"]
    maintenance = ours.head
    assert maintenance.author == "tiers" and maintenance.time >= LATER
    times = [c.time for c in reversed(ours.log())]
    assert times == sorted(times)


def test_compaction_in_maintenance_after_a_commit_outlived_by_another_writer_never_fails(pair):
    ours, theirs = pair
    rival_commits_first(ours, theirs, LATER)
    tiers = TieredMemory(ours, capacity=2, compactor=Compactor(ours))
    with ours.commit(message="work", now=NOW) as tx:  # four memories: over capacity
        trace = tx.begin_trace("fix the flaky checkout test")
        steps = [tx.step(trace, f"step {k}").id for k in range(3)]
        tx.finish(trace)
    assert tx.result.seq == 1
    (summary,) = ours.find(kinds=["summary"])
    assert summary.tier == "long" and summary.content.startswith("fix the flaky checkout test")
    assert {ours.get(i).tier for i in steps} == {"archive"}
    assert len(tiers.working(now=LATER)) <= 2
    times = [c.time for c in reversed(ours.log())]
    assert times == sorted(times)


def test_another_writers_additions_are_maintained_at_our_next_commit(pair):
    ours, theirs = pair
    tiers = TieredMemory(ours, capacity=3, eviction=LRU())
    (mine,) = add(ours, 1, scope="mine")
    add(theirs, 5)  # ours is never told: the partition holds 5 of 3
    with ours.commit(message="it no longer holds", now=NOW) as tx:
        tx.invalidate(mine)  # grows nothing
    assert len(tiers.working(scopes=["shared"])) == 3


def test_another_writers_additions_are_maintained_at_our_next_touch(pair):
    ours, theirs = pair
    (mine,) = add(ours, 1, scope="mine")
    tiers = TieredMemory(ours, capacity=3, eviction=LRU())
    add(theirs, 5)
    assert tiers.touch([mine], now=NOW).hits == [mine]
    assert len(ours.find(scopes=["shared"], tiers=["short"])) == 3


def test_another_writers_additions_are_maintained_at_our_next_read(pair):
    ours, theirs = pair
    tiers = TieredMemory(ours, capacity=3, eviction=LRU())
    add(theirs, 5)
    assert len(tiers.working(now=NOW)) == 3
    assert len(ours.find(tiers=["short"])) == 3


def test_a_page_in_evicts_a_memory_that_no_longer_holds_first(pair):
    ours, _ = pair
    live, dead = add(ours, 2)
    (archived,) = add(ours, 1, tier="archive")
    tiers = TieredMemory(ours, capacity=2, eviction=LRU())
    tiers.touch([dead], now=NOW)  # the live one is now the least recently used
    with ours.commit(message="it no longer holds", now=NOW) as tx:
        tx.invalidate(dead)
    result = tiers.touch([archived], now=NOW)
    assert result.evicted == [dead]
    assert ours.get(live).tier == "short" and ours.get(dead).tier == "archive"
    assert {m.id for m in tiers.working(now=NOW)} == {live, archived}
