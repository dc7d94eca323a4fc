"""Several processes writing and recalling on one store: every live index, caught up, answers
exactly as an index built from scratch in a fresh process.

Three spawned workers share one store, each with its own live index: two share a
snapshot folder with this process (one host), the third has a folder of its own
(another host) and a budget that holds one tenant at a time, so its tenants are let
go and reopened from their snapshots. Each runs a seeded random mix of commits
(add, keyed add, update, invalidate, purge), recalls and reopenings of the store,
so snapshots are written, opened, caught up from their stamps, rewritten and
erased while the others commit. Once all have stopped writing, every worker's
recall, this process's (its index opened before the workers ran, caught up now)
and a late process's opening the shared folder's snapshots must equal those of a
fresh process whose folder is empty: the ids in order and every row's version,
text, stage, cosine, score, outcome, reason, pool, cost, trail and components.
"""

from __future__ import annotations

import multiprocessing
from datetime import datetime, timedelta, timezone

import pytest
from recall_processes import TENANTS, answers, fresh, work

import memcommit

WORKERS = 3
STEPS = 40


@pytest.mark.slow
def test_every_processs_recall_equals_a_fresh_build_after_a_random_race(
    store_target, recall_snapshots, tmp_path
):
    target, options = store_target
    now = datetime.now(timezone.utc) + timedelta(days=1)  # after every commit of the run
    shared, other = str(recall_snapshots), str(tmp_path / "other-host")
    with memcommit.open(target, embedder="hash", **options) as store:
        with store.commit(message="seed") as tx:
            for tenant in TENANTS:
                for i in range(8):
                    tx.add(f"alpha deploy cache note {i}", tenant=tenant, key=f"k{i % 3}")
        answers(store, now)  # this process's indexes open (and write snapshots) now
        ctx = multiprocessing.get_context("spawn")
        with ctx.Manager() as manager, ctx.Pool(WORKERS) as pool:
            barrier = manager.Barrier(WORKERS)
            folders = [shared, shared, other]
            ran = pool.starmap_async(
                work,
                [(target, options, w, STEPS, folders[w], now, barrier) for w in range(WORKERS)],
            ).get(300)  # a worker that hangs fails the test instead of the run
            late = pool.apply(fresh, (target, options, shared, now))
            built = pool.apply(fresh, (target, options, str(tmp_path / "empty"), now))
        mine = answers(store, now)
        head = store.head_seq
        assert store.check().ok
    errors = [r["error"] for r in ran if "error" in r]
    assert not errors, "\n".join(errors)
    assert all(opened.startswith("built") for opened in built["opened"]), built["opened"]
    assert built["head"] == late["head"] == head and all(r["head"] == head for r in ran)
    assert head > 1 + WORKERS * STEPS // 3  # the workers' commits landed (some lose a race)
    expected = built["answers"]
    assert any(rows for _, rows in expected)
    for w, result in enumerate(ran):
        assert result["answers"] == expected, f"worker {w}"
    assert mine == expected, "this process, caught up"
    assert late["answers"] == expected, "a process opening the shared snapshots"
    opened = {o for r in ran for o in r["opened"]} | set(late["opened"])
    assert any(o.startswith("loaded") for o in opened), opened  # snapshots were used
