"""Working-memory benchmark: our policies beside libCacheSim on the same traces.

    .venv/bin/python benchmarks/tiers_bench.py            # full size: 1M requests
    .venv/bin/python benchmarks/tiers_bench.py --quick    # 100k requests, for a smoke run
    .venv/bin/python benchmarks/tiers_bench.py --touch    # only touch() through SQLite
    .venv/bin/python benchmarks/tiers_bench.py --commit   # only add commits with tiers attached

For each trace (Zipf α=0.8 over 100k ids; the same interrupted by one-time
scans; and by loops) and capacity (1,000 and 10,000 objects) it prints the hits
of FIFO, LRU, LFU, 2Q and ARC from ``memcommit.tiers.simulate`` and from
libCacheSim (object size 1, capacity in objects), whether they are equal, the
hit ratios of Forgetting, Scored and Learned, and simulator speed (median of
``--runs`` runs) beside libCacheSim's C replay of the same trace.

Then it times ``TieredMemory.touch`` of 64 ids on a SQLite store of 100,000
memories (p50 and p90 of 200 touches): all 64 in short-term, and a mixed touch
of 56 hits, 4 warm hits in long-term and 4 misses paged in from the archive;
with SQLite's synchronous=FULL (the store's default: an fsync per transaction)
and NORMAL (WAL's usual setting), beside ``store.record_uses`` of the same 64
ids alone, the floor any touch pays.

Last it times single add commits on a SQLite store of 100,000 memories (60,000
archived, 30,000 long-term, 10,000 short-term in 200 scopes) with a
TieredMemory attached (capacity 64, long_capacity 50,000): into a partition
under capacity, and into one at capacity (each add then evicts one), beside
the same add commit with no TieredMemory attached; and the first commit, which
counts the tiers once with one GROUP BY.
"""

from __future__ import annotations

import argparse
import random
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

import memcommit
from memcommit.tiers import ARC, FIFO, LFU, LRU, Forgetting, Learned, Scored, TwoQueue, simulate
from memcommit.tiers.memory import TieredMemory
from memcommit.tiers.traces import SYNTHETIC, synthetic

try:
    import libcachesim as lcs
except ImportError:  # pragma: no cover - the bench extra installs it
    sys.exit("libcachesim is missing: pip install -e '.[bench]'")

CLASSICS = {"FIFO": FIFO, "LRU": LRU, "LFU": LFU, "TwoQ": TwoQueue, "ARC": ARC}
SCORED = {"Forgetting": Forgetting, "Scored": Scored, "Learned": Learned}


def traces(n: int) -> dict[str, list[int]]:
    """The three traces, each with its own seed."""
    return {kind: synthetic(kind, n, seed=seed) for seed, kind in enumerate(SYNTHETIC, 1)}


def reference_hits(name: str, trace: list[int], capacity: int) -> int:
    """libCacheSim's hit count, one request at a time."""
    cache = getattr(lcs, name)(capacity, hashpower=18)
    req = lcs.Request()
    req.obj_size = 1
    hits = 0
    for x in trace:
        req.obj_id = x
        hits += cache.get(req)
    return hits


def reference_speed(name: str, path: Path, capacity: int, n: int, runs: int) -> float:
    """libCacheSim's requests per second replaying a binary trace in C (median)."""
    rates = []
    for _ in range(runs):
        reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)
        cache = getattr(lcs, name)(capacity, hashpower=18)
        start = time.perf_counter()
        cache.process_trace(reader)
        rates.append(n / (time.perf_counter() - start))
    return statistics.median(rates)


def our_speed(policy: type, trace: list[int], capacity: int, runs: int) -> float:
    """Our simulator's requests per second (median)."""
    rates = []
    for _ in range(runs):
        start = time.perf_counter()
        simulate(trace, capacity=capacity, policy=policy())
        rates.append(len(trace) / (time.perf_counter() - start))
    return statistics.median(rates)


def write_oracle(trace: list[int], path: Path) -> None:
    """libCacheSim's oracleGeneral binary format: time, id, size, next access."""
    path.write_bytes(b"".join(struct.pack("<IQIq", i, x, 1, -1) for i, x in enumerate(trace)))


def touch_latency(tmp: str, synchronous: str, touches: int = 200) -> dict[str, list[float]]:
    """Milliseconds per call: touch() of 64 working-set ids, of a mixed 64, and record_uses."""
    store = memcommit.open(str(Path(tmp) / f"touch-{synchronous}.db"), synchronous=synchronous)
    with store.commit(message="100,000 memories") as tx:
        archived = [
            tx.add(f"memory {i} on topic {i % 997}", tier="archive").id for i in range(99_000)
        ]
        long_term = [tx.add(f"lasting {i}", tier="long").id for i in range(1_000)]
    tm = TieredMemory(store, capacity=64, eviction=ARC())
    rng = random.Random(5)
    tm.touch(rng.sample(archived, 64))
    times: dict[str, list[float]] = {"hits": [], "mixed": [], "record_uses": []}
    for _ in range(touches):
        working = [m.id for m in tm.working()]
        start = time.perf_counter()
        tm.touch(working)
        times["hits"].append(time.perf_counter() - start)
        ids = rng.sample(working, 56) + rng.sample(long_term, 4) + rng.sample(archived, 4)
        start = time.perf_counter()
        tm.touch(ids)
        times["mixed"].append(time.perf_counter() - start)
        start = time.perf_counter()
        store.record_uses(ids)
        times["record_uses"].append(time.perf_counter() - start)
    tm.close()
    store.close()
    return {k: sorted(v) for k, v in times.items()}


def touch_section(tmp: str) -> None:
    """Print touch() latency under both synchronous settings."""
    print("\n== touch() of 64 ids, SQLite, 100,000 memories (ms; p50 / p90 of 200)")
    print("   hits: the 64 in short-term; mixed: 56 hits, 4 warm (long), 4 misses paged in")
    print(f"{'synchronous':<13}{'touch hits':>16}{'touch mixed':>16}{'record_uses alone':>20}")
    for mode in ("FULL", "NORMAL"):
        t = touch_latency(tmp, mode)
        cells = [
            f"{v[len(v) // 2] * 1e3:.2f} / {v[len(v) * 9 // 10] * 1e3:.2f}" for v in t.values()
        ]
        print(f"{mode:<13}{cells[0]:>16}{cells[1]:>16}{cells[2]:>20}")


def seeded_store(path: str, synchronous: str) -> memcommit.Store:
    """A store of 100,000 memories: 60,000 archived, 30,000 long, 10,000 short in 200 scopes."""
    store = memcommit.open(path, synchronous=synchronous)
    with store.commit(message="100,000 memories") as tx:
        for i in range(60_000):
            tx.add(f"memory {i} on topic {i % 997}", tier="archive")
        for i in range(30_000):
            tx.add(f"lasting {i}", tier="long")
        for i in range(10_000):
            tx.add(f"short {i}", scope=f"s{i % 200}")
    return store


def add_latency(store: memcommit.Store, scope: str, n: int) -> list[float]:
    """Seconds per single add commit into ``scope``, sorted."""
    times = []
    for i in range(n):
        start = time.perf_counter()
        with store.commit(message=f"add {i}") as tx:
            tx.add(f"new memory {i} in {scope}", scope=scope)
        times.append(time.perf_counter() - start)
    return sorted(times)


def commit_section(tmp: str, commits: int = 50) -> None:
    """Print add-commit latency with and without a TieredMemory attached."""
    print("\n== add commit, SQLite, 100,000 memories (ms; p50 / p90 of", commits, "commits)")
    print("   tiers: TieredMemory(capacity=64, long_capacity=50,000) attached; bare: none")
    print(
        f"{'synchronous':<13}{'bare add':>16}{'tiers, under cap':>18}{'tiers, evicting':>18}"
        f"{'first (counts)':>16}"
    )
    for mode in ("FULL", "NORMAL"):
        store = seeded_store(str(Path(tmp) / f"commit-{mode}.db"), mode)
        bare = add_latency(store, "s0", commits)
        tm = TieredMemory(store, capacity=64, long_capacity=50_000)
        first = add_latency(store, "s1", 1)[0]
        under = add_latency(store, "s2", 10)  # s2 holds 50: ten adds stay under 64
        evicting = add_latency(store, "s1", commits)  # s1 reaches 64, then each add evicts
        tm.close()
        store.close()
        cells = [
            f"{v[len(v) // 2] * 1e3:.2f} / {v[len(v) * 9 // 10] * 1e3:.2f}"
            for v in (bare, under, evicting)
        ]
        print(f"{mode:<13}{cells[0]:>16}{cells[1]:>18}{cells[2]:>18}{first * 1e3:>14.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100k requests instead of 1M")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per figure (median)")
    parser.add_argument("--touch", action="store_true", help="only the touch() latency")
    parser.add_argument("--commit", action="store_true", help="only the add-commit latency")
    args = parser.parse_args()
    if args.touch or args.commit:
        with tempfile.TemporaryDirectory() as tmp:
            if args.touch:
                touch_section(tmp)
            if args.commit:
                commit_section(tmp)
        return
    n = 100_000 if args.quick else 1_000_000
    all_equal = True
    with tempfile.TemporaryDirectory() as tmp:
        for trace_name, trace in traces(n).items():
            path = Path(tmp) / f"{trace_name}.oracleGeneral"
            write_oracle(trace, path)
            for capacity in (1_000, 10_000):
                print(f"\n== {trace_name}: {len(trace):,} requests, capacity {capacity:,}")
                print(
                    f"{'policy':<11}{'ours':>9}{'libCacheSim':>12}{'equal':>7}"
                    f"{'hit ratio':>11}{'ours req/s':>13}{'lcs req/s':>13}"
                )
                best = 0.0
                for name, policy in CLASSICS.items():
                    ours = simulate(trace, capacity=capacity, policy=policy())
                    theirs = reference_hits(name, trace, capacity)
                    equal = ours.hits == theirs
                    all_equal &= equal
                    best = max(best, ours.hit_ratio)
                    mine = our_speed(policy, trace, capacity, args.runs)
                    ref = reference_speed(name, path, capacity, len(trace), args.runs)
                    print(
                        f"{name:<11}{ours.hits:>9}{theirs:>12}{'yes' if equal else 'NO':>7}"
                        f"{ours.hit_ratio:>11.4f}{mine / 1e6:>11.2f}M/s{ref / 1e6:>11.2f}M/s"
                    )
                for name, policy in SCORED.items():
                    start = time.perf_counter()
                    ours = simulate(trace, capacity=capacity, policy=policy())
                    took = time.perf_counter() - start
                    gap = (ours.hit_ratio - best) * 100
                    print(
                        f"{name:<11}{ours.hits:>9}{'-':>12}{'':>7}{ours.hit_ratio:>11.4f}"
                        f"{len(trace) / took / 1e6:>11.2f}M/s   ({gap:+.2f} pts vs best classic)"
                    )
        touch_section(tmp)
        commit_section(tmp)
    print("\nexact match with libCacheSim:", "all equal" if all_equal else "MISMATCH")


if __name__ == "__main__":
    main()
