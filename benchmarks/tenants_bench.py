"""Thousands of small tenants, one serving process: memcommit beside SQLite FTS5 (a tenant column).

One store of T tenants x M short memories (the recall bench's Zipf corpus),
written through the public API in bulk commits by a process that never
recalls. Then ONE fresh process recalls once in every tenant, in a shuffled
order, and a second time at once with another query:

- first recall in a tenant (its index opened: read or built) and warm recall, p50/p95;
- RSS of the process after every tenant was served (and the cache's own charge);
- bytes of recall's index cache on disk (the store's ``.recall`` folder);
- listing the tenants (``store.tenants()``) beside SQLite's plain ``SELECT DISTINCT``;
- the peer, in its own fresh process: the same texts in one SQLite FTS5 table
  with an indexed tenant column, each query ``tenant:"…" AND (w1 OR w2 …)``
  ordered by rank, top 10: its first query in a tenant and the next.

Targets (issue 23, at 10,000 x 40): RSS <= 300 MB, first p50 <= 5 ms,
warm p50 <= 1 ms, index cache on disk <= 100 MB. The built store is cached
(``--store``, default under ``~/.cache/memcommit-bench``), so reruns only measure.

    .venv/bin/python benchmarks/tenants_bench.py --tenants 10000 --memories 40
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from recall_bench import compile_memcommit, corpus, queries, rss_mb

NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)
TENANTS_PER_COMMIT = 100


def tenant(number: int) -> str:
    return f"user-{number:06d}"


def build_store(path: Path, texts: list[str], tenants: int, per_tenant: int) -> None:
    """The store through the public API, bulk commits of 100 tenants each; never recalled."""
    import memcommit

    done = path.with_name(path.name + ".done")
    if done.exists():
        return
    for leftover in path.parent.glob(path.name + "*"):
        if leftover.is_file():
            leftover.unlink()
    start = time.perf_counter()
    with memcommit.open(path) as store:
        for first in range(0, tenants, TENANTS_PER_COMMIT):
            with store.commit(message=f"tenants {first}", now=NOW) as tx:
                for number in range(first, min(first + TENANTS_PER_COMMIT, tenants)):
                    for i in range(per_tenant):
                        tx.add(texts[number * per_tenant + i], tenant=tenant(number))
    done.write_text(json.dumps(time.perf_counter() - start))
    print(f"  built {path.name} in {time.perf_counter() - start:.0f} s", flush=True)


def fts5_tenant(name: str) -> str:
    """The tenant's name as one FTS5 token (``user-000042`` would be two, "user" in every row)."""
    return name.replace("-", "")


def build_fts5(path: Path, texts: list[str], tenants: int, per_tenant: int) -> None:
    if path.with_name(path.name + ".done").exists():
        return
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    db.execute("CREATE VIRTUAL TABLE m USING fts5(body, tenant)")
    rows = (
        (texts[n * per_tenant + i], fts5_tenant(tenant(n)))
        for n in range(tenants)
        for i in range(per_tenant)
    )
    db.executemany("INSERT INTO m(body, tenant) VALUES (?, ?)", rows)
    db.commit()
    db.close()
    path.with_name(path.name + ".done").write_text("")


def order(tenants: int) -> list[str]:
    names = [tenant(n) for n in range(tenants)]
    random.Random(5).shuffle(names)
    return names


def child_memcommit(path: str, names: list[str], qs: list[str]) -> dict:
    import memcommit
    from memcommit.recall.index.live import store_index

    store = memcommit.open(path, read_only=True)
    firsts, warms = [], []
    for k, name in enumerate(names):
        start = time.perf_counter()
        store.recall(qs[(2 * k) % len(qs)], tenant=name, max_records=10, now=NOW)
        middle = time.perf_counter()
        store.recall(qs[(2 * k + 1) % len(qs)], tenant=name, max_records=10, now=NOW)
        warms.append(time.perf_counter() - middle)
        firsts.append(middle - start)
    cache = store_index(store).tenants
    return {
        "first": firsts,
        "warm": warms,
        "rss": rss_mb(),
        "held": len(cache),
        "charged": cache.total,
        "budget": cache.budget,
    }


def child_fts5(path: str, names: list[str], qs: list[str]) -> dict:
    db = sqlite3.connect(path)

    def search(name: str, q: str) -> list:
        words = " OR ".join(f'"{w}"' for w in q.split())
        match = f'tenant : "{fts5_tenant(name)}" AND ({words})'
        sql = "SELECT rowid FROM m WHERE m MATCH ? ORDER BY rank LIMIT 10"
        return db.execute(sql, (match,)).fetchall()

    firsts, warms = [], []
    for k, name in enumerate(names):
        start = time.perf_counter()
        search(name, qs[(2 * k) % len(qs)])
        middle = time.perf_counter()
        search(name, qs[(2 * k + 1) % len(qs)])
        warms.append(time.perf_counter() - middle)
        firsts.append(middle - start)
    return {"first": firsts, "warm": warms, "rss": rss_mb()}


def measure(kind: str, path: Path, names: list[str], qs: list[str]) -> dict:
    spec = path.with_name(f"{kind}-{os.getpid()}.json")
    spec.write_text(json.dumps({"kind": kind, "path": str(path), "names": names, "queries": qs}))
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(spec)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "MEMCOMMIT_INDEX_DIR": ""},
        )
    finally:
        spec.unlink()
    return json.loads(done.stdout.strip().splitlines()[-1])


def percentiles(seconds: list[float]) -> tuple[float, float]:
    ordered = sorted(seconds)
    return statistics.median(ordered) * 1e3, ordered[int(0.95 * (len(ordered) - 1))] * 1e3


def summary(result: dict) -> dict:
    """The figures of one child, rounded (printed as soon as it is measured)."""
    first, warm = percentiles(result["first"]), percentiles(result["warm"])
    return {
        "first p50 ms": round(first[0], 2),
        "warm p50 ms": round(warm[0], 2),
        "RSS MB": round(result["rss"]),
    }


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0


def listing(path: Path) -> tuple[float, float]:
    """Median ms of ``store.tenants()`` and of the plain ``SELECT DISTINCT`` it replaced."""
    import memcommit

    def median_ms(work) -> float:
        runs = []
        for _ in range(7):
            start = time.perf_counter()
            work()
            runs.append(time.perf_counter() - start)
        return statistics.median(runs) * 1000

    plain = "SELECT DISTINCT tenant FROM versions WHERE end_seq IS NULL"
    with memcommit.open(path, read_only=True) as store, sqlite3.connect(path) as conn:
        assert store.tenants() == sorted(t for (t,) in conn.execute(plain))
        return median_ms(store.tenants), median_ms(lambda: conn.execute(plain).fetchall())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenants", type=int, default=10_000)
    parser.add_argument("--memories", type=int, default=40, help="memories per tenant")
    parser.add_argument("--store", help="the store file (default under ~/.cache/memcommit-bench)")
    parser.add_argument("--skip", default="", help="comma-separated: fts5")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        spec = json.loads(Path(args.child).read_text())
        run = child_memcommit if spec["kind"] == "memcommit" else child_fts5
        print(json.dumps(run(spec["path"], spec["names"], spec["queries"])))
        return 0
    compile_memcommit()
    cache = Path.home() / ".cache" / "memcommit-bench"
    cache.mkdir(parents=True, exist_ok=True)
    label = f"tenants-{args.tenants}x{args.memories}"
    path = Path(args.store) if args.store else cache / f"{label}.db"
    texts = corpus(args.tenants * args.memories)
    qs = queries(texts, 2_000)
    qs = [" ".join(q.split()[:4]) for q in qs]  # 2-4 words
    print(f"{args.tenants:,} tenants x {args.memories} memories; store {path}", flush=True)
    build_store(path, texts, args.tenants, args.memories)
    names = order(args.tenants)
    rows = [("memcommit (default scorer)", measure("memcommit", path, names, qs))]
    print(f"  measured memcommit: {json.dumps(summary(rows[0][1]))}", flush=True)
    if "fts5" not in args.skip.split(","):
        peer = cache / f"{label}-fts5-v2.db"
        build_fts5(peer, texts, args.tenants, args.memories)
        rows.append(("SQLite FTS5, tenant column", measure("fts5", peer, names, qs)))
    head = f"{'first p50':>10}{'p95':>8}{'warm p50':>10}{'p95':>8}{'RSS MB':>8}"
    print(f"\n{'one fresh process, ms':<30}{head}")
    for name, result in rows:
        first, warm = percentiles(result["first"]), percentiles(result["warm"])
        print(
            f"{name:<30}{first[0]:>10.2f}{first[1]:>8.2f}{warm[0]:>10.2f}{warm[1]:>8.2f}"
            f"{result['rss']:>8.0f}"
        )
    ours = rows[0][1]
    disk = folder_bytes(Path(str(path) + ".recall"))
    text = sum(len(t.encode()) for t in texts)
    each = ours["charged"] / max(ours["held"], 1) / 1024
    print(
        f"\nrecall cache: {ours['held']:,} tenants held, charged {ours['charged'] / 2**20:.0f} MB "
        f"of a {ours['budget'] / 2**20:.0f} MB budget ({each:.1f} KB a "
        f"tenant; its text {text / args.tenants / 1024:.1f} KB); index cache on disk "
        f"{disk / 2**20:.1f} MB; store file {path.stat().st_size / 2**20:.0f} MB"
    )
    listed, distinct = listing(path)
    print(
        f"listing the tenants: store.tenants() {listed:.2f} ms, SQLite's SELECT DISTINCT over the"
        f" same rows {distinct:.2f} ms ({distinct / listed:.1f}x), medians of 7"
    )
    if len(rows) > 1:
        peer = rows[1][1]
        print(
            "against FTS5 (same queries, same run): first p50 "
            f"{percentiles(ours['first'])[0] / percentiles(peer['first'])[0]:.2f}x, warm p50 "
            f"{percentiles(ours['warm'])[0] / percentiles(peer['warm'])[0]:.2f}x, RSS "
            f"{ours['rss'] / peer['rss']:.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
