"""Store speed beside plain sqlite3 doing the minimal equivalent, on the same data in the same run.

    python benchmarks/store_bench.py                 # the issue's sizes (takes a few minutes)
    python benchmarks/store_bench.py --scale 0.1     # a quick look

Figures are medians of ``--runs`` runs. The peer is stdlib sqlite3 with the same
journal (WAL) and synchronous setting, writing rows of the same columns into a
table with a primary key: ``executemany`` for the bulk insert, one INSERT per
transaction for single commits, a primary-key SELECT for get, and an indexed
SELECT for find.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

import memcommit

PEER_TABLE = (
    "CREATE TABLE memories (id TEXT PRIMARY KEY, version INTEGER, content TEXT, kind TEXT,"
    " scope TEXT, tenant TEXT, session TEXT, mkey TEXT, importance REAL, tags TEXT,"
    " project TEXT, always INTEGER, token_count INTEGER, trace_id TEXT, step INTEGER,"
    " metadata TEXT, valid_from TEXT, valid_to TEXT, superseded_by TEXT, status TEXT,"
    " tier TEXT, created_at TEXT, created_commit INTEGER, updated_at TEXT, seq INTEGER)"
)
PEER_INSERT = "INSERT INTO memories VALUES (" + ", ".join("?" * 25) + ")"
KINDS = ("fact", "event", "procedure", "decision")
SCOPES = ("shared", "planner", "coder", "critic", "user")


def text(i: int) -> str:
    return f"memory number {i}: the agent noted that item {i % 977} relates to topic {i % 31}"


def peer(path: Path, synchronous: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"PRAGMA synchronous = {synchronous}")
    conn.execute(PEER_TABLE)
    return conn


def peer_row(i: int, now: str) -> tuple:
    return (
        f"{i:012d}", 1, text(i), KINDS[i % 4], SCOPES[i % 5], f"tenant-{i % 10}", None, None,
        0.5, "[]", None, 0, None, None, None, "{}", None, None, None, "active", "short",
        now, 1, now, 1,
    )  # fmt: skip


def medians(runs: int, ours, plain) -> tuple[float, float]:
    """Median seconds of each, alternating the two so machine load hits both alike."""
    a, b = [], []
    for _ in range(runs):
        a.append(ours())
        b.append(plain())
    return statistics.median(a), statistics.median(b)


def bench_bulk(n: int, runs: int, synchronous: str) -> tuple[float, float]:
    def ours() -> float:
        with tempfile.TemporaryDirectory() as d:
            store = memcommit.open(Path(d) / "s.db", synchronous=synchronous)
            t = time.perf_counter()
            with store.commit(message="bulk") as tx:
                add = tx.add
                for i in range(n):
                    add(text(i), kind=KINDS[i % 4], scope=SCOPES[i % 5], tenant=f"tenant-{i % 10}")
            elapsed = time.perf_counter() - t
            store.close()
            return elapsed

    def plain() -> float:
        with tempfile.TemporaryDirectory() as d:
            conn = peer(Path(d) / "p.db", synchronous)
            t = time.perf_counter()
            now = "2026-11-01T12:00:00.000000+00:00"
            conn.execute("BEGIN")
            conn.executemany(PEER_INSERT, (peer_row(i, now) for i in range(n)))
            conn.execute("COMMIT")
            elapsed = time.perf_counter() - t
            conn.close()
            return elapsed

    return medians(runs, ours, plain)


def bench_single(n: int, runs: int, synchronous: str) -> tuple[float, float]:
    def ours() -> float:
        with tempfile.TemporaryDirectory() as d:
            store = memcommit.open(Path(d) / "s.db", synchronous=synchronous)
            t = time.perf_counter()
            for i in range(n):
                with store.commit(message="one") as tx:
                    tx.add(text(i), kind=KINDS[i % 4], scope=SCOPES[i % 5])
            elapsed = time.perf_counter() - t
            store.close()
            return elapsed

    def plain() -> float:
        with tempfile.TemporaryDirectory() as d:
            conn = peer(Path(d) / "p.db", synchronous)
            now = "2026-11-01T12:00:00.000000+00:00"
            t = time.perf_counter()
            for i in range(n):
                conn.execute("BEGIN")
                conn.execute(PEER_INSERT, peer_row(i, now))
                conn.execute("COMMIT")
            elapsed = time.perf_counter() - t
            conn.close()
            return elapsed

    return medians(runs, ours, plain)


def percentile_50(samples: list[float]) -> float:
    return statistics.median(samples)


def bench_reads(n: int, probes: int, synchronous: str) -> dict[str, tuple[float, float]]:
    """get by id and find by tenant+scope+kind (100 results) on ``n`` stored memories."""
    with tempfile.TemporaryDirectory() as d:
        store = memcommit.open(Path(d) / "s.db", synchronous=synchronous)
        ids = []
        chunk = 100_000
        for start in range(0, n, chunk):
            with store.commit(message="load") as tx:
                for i in range(start, min(n, start + chunk)):
                    ids.append(
                        tx.add(
                            text(i),
                            kind=KINDS[i % 4],
                            scope=SCOPES[i % 5],
                            tenant=f"tenant-{i % 10}",
                        ).id
                    )
        conn = peer(Path(d) / "p.db", synchronous)
        now = "2026-11-01T12:00:00.000000+00:00"
        conn.execute("BEGIN")
        conn.executemany(PEER_INSERT, (peer_row(i, now) for i in range(n)))
        conn.execute("COMMIT")
        conn.execute("CREATE INDEX peer_find ON memories (tenant, scope, kind)")
        step = max(1, n // probes)
        picks = [(ids[i], f"{i:012d}") for i in range(0, n, step)][:probes]

        ours_get, plain_get = [], []
        for our_id, peer_id in picks:
            t = time.perf_counter()
            store.get(our_id)
            ours_get.append(time.perf_counter() - t)
            t = time.perf_counter()
            conn.execute("SELECT * FROM memories WHERE id = ?", (peer_id,)).fetchone()
            plain_get.append(time.perf_counter() - t)

        ours_find, plain_find = [], []
        for k in range(min(probes, 200)):
            tenant, scope, kind = f"tenant-{k % 10}", SCOPES[k % 5], KINDS[k % 4]
            t = time.perf_counter()
            found = store.find(tenant=tenant, scopes=[scope], kinds=[kind], limit=100)
            ours_find.append(time.perf_counter() - t)
            t = time.perf_counter()
            rows = conn.execute(
                "SELECT * FROM memories WHERE tenant = ? AND scope = ? AND kind = ? LIMIT 100",
                (tenant, scope, kind),
            ).fetchall()
            plain_find.append(time.perf_counter() - t)
            assert len(found) == len(rows)
        store.close()
        conn.close()
    return {
        "get": (percentile_50(ours_get), percentile_50(plain_get)),
        "find": (percentile_50(ours_find), percentile_50(plain_find)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every size by this")
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (median)")
    parser.add_argument("--synchronous", default="FULL", choices=["NORMAL", "FULL"])
    parser.add_argument(
        "--only", choices=["bulk", "single", "reads"], action="append", help="run only these"
    )
    args = parser.parse_args()
    parts = args.only or ["bulk", "single", "reads"]
    sync = args.synchronous
    bulk_n, single_n, read_n = (int(x * args.scale) for x in (100_000, 5_000, 1_000_000))
    print(f"memcommit store vs plain sqlite3 (WAL, synchronous={sync}), median of {args.runs}")
    print(f"{'benchmark':<44}{'memcommit':>12}{'sqlite3':>12}{'ratio':>8}{'target':>9}")

    def line(name: str, ours: float, plain: float, unit: str, scale: float, target: str) -> None:
        print(
            f"{name:<44}{ours * scale:>10.3f}{unit:>2}{plain * scale:>10.3f}{unit:>2}"
            f"{ours / plain:>7.2f}x{target:>9}"
        )

    if "bulk" in parts:
        ours, plain = bench_bulk(bulk_n, args.runs, sync)
        line(f"{bulk_n:,} memories in one commit", ours, plain, "s", 1, "<= 3x")
    if "single" in parts:
        ours, plain = bench_single(single_n, args.runs, sync)
        line(f"{single_n:,} single-memory commits", ours, plain, "s", 1, "<= 2x")
    if "reads" in parts:
        reads = bench_reads(read_n, 2000, sync)
        ours, plain = reads["get"]
        line(f"get by id, {read_n:,} stored (p50)", ours, plain, "ms", 1000, "< 0.2ms")
        ours, plain = reads["find"]
        line("find tenant+scope+kind, 100 rows (p50)", ours, plain, "ms", 1000, "< 5ms")


if __name__ == "__main__":
    main()
