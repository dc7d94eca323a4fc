"""Many writers on one store, in separate processes: no lost, duplicated or reordered commit.

Runs on both backends: SQLite serializes writers with its file lock, PostgreSQL
with an advisory lock on the store's schema.
"""

from __future__ import annotations

import itertools
import multiprocessing

import pytest
from backends_workers import commit_many, maintain_once, update_expecting

import memcommit

WRITERS = 8
COMMITS_EACH = 250


@pytest.fixture
def shared(store_backend, tmp_path, request):
    """(target, options) of one fresh store that separate processes can open."""
    # Both without a flush per commit (SQLite NORMAL, PostgreSQL synchronous_commit off):
    # this checks the locking, not the disk, and stays fast.
    if store_backend == "sqlite":
        return str(tmp_path / "shared.db"), {"synchronous": "NORMAL"}
    return request.getfixturevalue("pg_url")(options="-c synchronous_commit=off"), {}


def spawn():
    return multiprocessing.get_context("spawn")


def test_eight_processes_land_every_commit_once_in_a_gap_free_sequence(shared):
    target, options = shared
    memcommit.open(target, **options).close()  # create it once, before the race
    with spawn().Pool(WRITERS) as pool:
        landed = pool.starmap(
            commit_many, [(target, options, w, COMMITS_EACH) for w in range(WRITERS)]
        )
    total = WRITERS * COMMITS_EACH
    assert sum(landed) == total
    with memcommit.open(target, **options) as store:
        log = store.log()[::-1]
        assert [c.seq for c in log] == list(range(1, total + 1))
        for prev, cur in itertools.pairwise(log):
            assert cur.parent == prev.id
        expected = {f"w{w}-{i}" for w in range(WRITERS) for i in range(COMMITS_EACH)}
        messages = [c.message for c in log]
        assert len(messages) == len(set(messages)) and set(messages) == expected
        for w in range(WRITERS):  # each writer's commits landed in the order it made them
            mine = [int(m.split("-")[1]) for m in messages if m.startswith(f"w{w}-")]
            assert mine == sorted(mine)
        memories = store.find()
        assert sorted(m.key for m in memories) == sorted(expected)
        assert {m.created_commit for m in memories} == set(range(1, total + 1))
        assert store.check().ok


def test_rival_updates_with_an_expected_version_have_exactly_one_winner(shared):
    target, options = shared
    rivals = 6
    with memcommit.open(target, **options) as store:
        with store.commit() as tx:
            m = tx.add("contested")
        ctx = spawn()
        with ctx.Manager() as manager, ctx.Pool(rivals) as pool:
            for round_ in range(3):
                version = store.get(m.id).version
                barrier = manager.Barrier(rivals)
                outcomes = pool.starmap(
                    update_expecting,
                    [(target, options, m.id, version, w, barrier) for w in range(rivals)],
                )
                assert sorted(outcomes) == ["conflict"] * (rivals - 1) + ["won"], round_
                now = store.get(m.id)
                assert now.version == version + 1
                assert now.content == f"written by {outcomes.index('won')} over version {version}"
        assert [v.version for v in store.history(m.id)] == [1, 2, 3, 4]
        assert store.check().ok


def test_tier_maintenance_from_two_processes_moves_each_memory_once(shared, now):
    """Both passes see the same over-full tier; the moves land once, whoever commits first."""
    target, options = shared
    capacity, rivals = 10, 2
    with memcommit.open(target, **options) as store:
        with store.commit(now=now) as tx:
            ids = [tx.add(f"working note {i}", scope="desk").id for i in range(40)]
        store.record_uses(ids[:5] * 3 + ids[5:20])  # five are promotable (3 uses)
        ctx = spawn()
        with ctx.Manager() as manager, ctx.Pool(rivals) as pool:
            barrier = manager.Barrier(rivals)
            pool.starmap(
                maintain_once, [(target, options, capacity, barrier) for _ in range(rivals)]
            )
        moved: dict[str, list[str]] = {}
        for commit in store.log():
            for change in commit.changes:
                if change.op in ("move", "archive"):
                    moved.setdefault(change.memory_id, []).append(change.detail["to"])
        assert all(len(tiers) == 1 for tiers in moved.values()), moved
        by_tier: dict[str, set[str]] = {}
        for m in store.find(live=False):
            by_tier.setdefault(m.tier, set()).add(m.id)
        assert by_tier["long"] == set(ids[:5])
        assert len(by_tier["short"]) == capacity  # evicted down to capacity, not below
        assert len(by_tier["archive"]) == 40 - 5 - capacity
        assert set(moved) == by_tier["long"] | by_tier["archive"]
        assert store.check().ok
