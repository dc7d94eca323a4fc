"""Work run in separate processes by test_recall_processes.py (importable by spawned children).

Each worker writes and recalls on one shared store with a live recall index of
its own and a snapshot folder (``MEMCOMMIT_INDEX_DIR``) shared with other
workers or not; `fresh` recalls in a process whose folder is empty, so every
tenant's index is built from the store.
"""

from __future__ import annotations

import importlib
import os
import random
import traceback
from datetime import datetime
from typing import Any

import memcommit
from memcommit.errors import Conflict, NotFound, Purged

TENANTS = ("t", "u")
WORDS = ["alpha", "beta", "gamma", "deploy", "deploys", "cache", "the", "pool", "logs", "nate"]
QUERIES = ["alpha deploy", "cache the pool", "deploying logs", "gamma", "what did nate do"]
#: (scorer, hybrid): words only, and the default scorer fused with the stored vectors (which
#: also compares which vector each memory holds: from the store or another process's file).
SCORERS = (("tfidf", False), ("memory", False), ("memory", True))
#: What a racing writer may be told: another worker changed or purged the memory first.
RACES = (Conflict, NotFound, Purged)


def row(r) -> tuple:
    """Everything recall says of one memory, exactly (floats compared bit for bit)."""
    m = r.memory
    parts = None if r.components is None else tuple(sorted(r.components.items()))
    return (m.id, m.version, m.content, r.stage, r.cosine, r.score, r.outcome, r.reason,
            r.pool, r.cost, r.trail, parts)  # fmt: skip


def answers(store, now: datetime) -> list:
    """Every tenant's recall of every query under every scorer: selected ids and all rows."""
    out = []
    for tenant in TENANTS:
        for query in QUERIES:
            for scorer, hybrid in SCORERS:
                ctx = store.recall(
                    query, tenant=tenant, now=now, scorer=scorer, hybrid=hybrid, max_records=4
                )
                out.append(([m.id for m in ctx.selected], [row(r) for r in ctx.rows]))
    return out


def _place(cache_dir: str) -> Any:
    """Snapshots in ``cache_dir``, kept for every tenant and rewritten after a short catch-up."""
    os.environ["MEMCOMMIT_INDEX_DIR"] = cache_dir
    live = importlib.import_module("memcommit.recall.index.live")
    live.SNAPSHOT_MIN = 1  # the tests' small tenants keep snapshots too (as conftest does)
    live.RESAVE_AFTER = 3  # a snapshot opened a few commits behind is written again
    return live


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5)))


def _change(tx, rng: random.Random, tenant: str, alive: list[str], name: str) -> None:
    """One random change on ``tenant``: add (maybe under a key), update, invalidate, purge."""
    op = rng.choices(["add", "update", "invalidate", "purge"], [5, 3, 1, 1])[0]
    if op == "add" or not alive:
        key = rng.choice([None, None, "k0", "k1", "k2"])  # later ones retire the latest
        tx.add(_text(rng), id=name, tenant=tenant, key=key, session=rng.choice(["s0", "s1"]))
        return
    target = rng.choice(alive)
    if op == "update":
        tx.update(target, content=_text(rng))
    elif op == "invalidate":
        tx.invalidate(target)
    else:
        tx.purge(target)


def work(*args: Any) -> dict[str, Any]:
    """`_work`, its error as text (a pool cannot carry every error back: IndexDamaged)."""
    *_, barrier = args
    try:
        return _work(*args)
    except Exception:
        barrier.abort()  # the others stop waiting for this worker at once
        return {"error": traceback.format_exc()}


def _work(
    target: str,
    options: dict[str, Any],
    worker: int,
    steps: int,
    cache_dir: str,
    now: datetime,
    barrier: Any,
) -> dict[str, Any]:
    """``steps`` seeded random steps (commits of 1-3 changes, recalls, reopening the store),
    then, once every worker has stopped writing, its answers.

    Returns the answers and how its indexes were opened over the run (``opened``).
    """
    live = _place(cache_dir)
    rng = random.Random(2400 + worker)
    budget = {"recall_cache_bytes": 1} if worker == 2 else {}  # one tenant held at a time

    def reopen():
        return memcommit.open(target, embedder="hash", **budget, **options)

    store = reopen()
    opened: set[str] = set()
    barrier.wait(120)
    try:
        for step in range(steps):
            tenant = rng.choice(TENANTS)
            action = rng.choices(["commit", "recall", "reopen"], [6, 3, 1])[0]
            if action == "reopen":
                store.close()
                store = reopen()
            elif action == "recall":
                store.recall(rng.choice(QUERIES), tenant=tenant, now=now, max_records=4)
                opened.update(live.store_index(store).opened.values())
            else:
                alive = sorted(m.id for m in store.find(tenant=tenant))
                try:
                    with store.commit(message=f"w{worker}-{step}") as tx:
                        for n in range(rng.randint(1, 3)):
                            _change(tx, rng, tenant, alive, f"w{worker}-{step}-{n}")
                except RACES:  # another worker changed or purged the memory first
                    pass
        barrier.wait(120)  # every worker has stopped writing: all catch up to one head
        found = answers(store, now)
        opened.update(live.store_index(store).opened.values())
        return {"answers": found, "opened": sorted(opened), "head": store.head_seq}
    finally:
        store.close()


def fresh(target: str, options: dict[str, Any], cache_dir: str, now: datetime) -> dict[str, Any]:
    """Answers of a process whose snapshot folder is ``cache_dir`` (empty: every index built)."""
    live = importlib.import_module("memcommit.recall.index.live")
    os.environ["MEMCOMMIT_INDEX_DIR"] = cache_dir
    with memcommit.open(target, embedder="hash", **options) as store:
        found = answers(store, now)
        opened = sorted(live.store_index(store).opened.values())
        return {"answers": found, "opened": opened, "head": store.head_seq}
