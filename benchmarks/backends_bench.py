"""SQLite and PostgreSQL side by side: the same workloads on the same data in the same run.

    python benchmarks/backends_bench.py                # the issue's sizes (several minutes)
    python benchmarks/backends_bench.py --scale 0.1    # a quick look

Workloads: one bulk commit of 100,000 memories; 2,000 single commits (one
memory each); recall p50 over a tenant of 100,000 memories (after the index is
built, which is shown too); 8 processes committing at once. Figures are medians
of ``--runs`` runs (recall: the median of ``--recalls`` queries over the last
bulk store, since each recall at that size takes seconds).

Durability is the same on both unless ``--relaxed``: every commit is flushed to
disk before it returns (SQLite WAL + ``synchronous=FULL``; PostgreSQL
``synchronous_commit=on`` with the server's ``fsync=on``). ``--relaxed`` compares
SQLite ``synchronous=NORMAL`` with PostgreSQL ``synchronous_commit=off``: both
may lose the last commits on power loss, neither corrupts.
PostgreSQL: ``MEMCOMMIT_TEST_POSTGRES`` or ``--postgres`` (default
postgresql://postgres@127.0.0.1:5432/test), a fresh schema per run, dropped after.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

import memcommit
from memcommit.recall import Words, recall

TENANT = "bench"
VOCABULARY = (
    "database timeout deploy release cache eviction memory agent planner user prefers tea"
    " coffee incident checkout pool connection restart service logs alert owner page budget"
    " token context recall commit trace step summary policy tier archive promote evict query"
    " index schema migration backup restore latency throughput replica primary failover"
)
WORDS = tuple(VOCABULARY.split())
QUERIES = [
    "database timeout at checkout", "which cache eviction policy", "restart the service",
    "user prefers tea or coffee", "migration of the schema", "alert owner page",
    "recall budget tokens", "failover to the replica", "archive old traces", "planner step",
]  # fmt: skip


def content(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16)))


class Backend:
    """How to open a fresh store of one backend, and drop it afterwards."""

    def __init__(self, name: str, *, postgres: str, relaxed: bool, workdir: Path) -> None:
        self.name = name
        self.postgres = postgres
        self.relaxed = relaxed
        self.workdir = workdir
        self.made: list[str] = []

    def fresh(self) -> tuple[str, dict[str, Any]]:
        """(target, options) of a new, empty store."""
        tag = uuid.uuid4().hex[:12]
        if self.name == "sqlite":
            return str(self.workdir / f"{tag}.db"), {
                "synchronous": "NORMAL" if self.relaxed else "FULL"
            }
        schema = f"bench_{tag}"
        self.made.append(schema)
        target = self.postgres
        if self.relaxed:
            joiner = "&" if "?" in target else "?"
            target += joiner + "options=-c%20synchronous_commit%3Doff"
        return target, {"schema": schema}

    def drop(self) -> None:
        if self.made:
            with psycopg.connect(self.postgres, autocommit=True) as conn:
                for schema in self.made:
                    conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            self.made.clear()


def bulk(backend: Backend, n: int) -> tuple[float, str, dict[str, Any]]:
    """Seconds to land ``n`` memories in one commit; the store stays for recall."""
    target, options = backend.fresh()
    rng = random.Random(7)
    texts = [content(rng) for _ in range(n)]
    with memcommit.open(target, **options) as store:
        started = time.perf_counter()
        with store.commit(message="bulk") as tx:
            for i, text in enumerate(texts):
                tx.add(text, tenant=TENANT, kind=("fact", "event", "procedure")[i % 3])
        return time.perf_counter() - started, target, options


def singles(backend: Backend, n: int) -> float:
    """Median milliseconds of one commit of one memory, over ``n`` commits."""
    target, options = backend.fresh()
    rng = random.Random(11)
    took = []
    with memcommit.open(target, **options) as store:
        for _ in range(n):
            text = content(rng)
            started = time.perf_counter()
            with store.commit(message="one") as tx:
                tx.add(text, tenant=TENANT)
            took.append(time.perf_counter() - started)
    return statistics.median(took) * 1000


def recalls(target: str, options: dict[str, Any], rounds: int) -> tuple[float, float]:
    """(seconds to build the index, median milliseconds per recall) over the bulk store."""
    with memcommit.open(target, **options) as store:
        started = time.perf_counter()
        recall(store, "warm up", tenant=TENANT, budget=Words(200))
        build = time.perf_counter() - started
        took = []
        for i in range(rounds):
            started = time.perf_counter()
            recall(store, QUERIES[i % len(QUERIES)], tenant=TENANT, budget=Words(200))
            took.append(time.perf_counter() - started)
    return build, statistics.median(took) * 1000


def _writer(target: str, options: dict[str, Any], count: int, start: Any) -> tuple[float, float]:
    with memcommit.open(target, **options) as store:
        start.wait()
        began = time.perf_counter()
        for i in range(count):
            with store.commit(message=f"w{os.getpid()}-{i}") as tx:
                tx.add(f"process {os.getpid()} memory {i}", tenant=TENANT)
        return began, time.perf_counter()


def processes(backend: Backend, workers: int, each: int) -> float:
    """Commits per second with ``workers`` processes committing ``each`` commits at once."""
    target, options = backend.fresh()
    memcommit.open(target, **options).close()
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager, ctx.Pool(workers) as pool:
        start = manager.Barrier(workers)
        spans = pool.starmap(_writer, [(target, options, each, start)] * workers)
    with memcommit.open(target, **options) as store:
        assert store.head.seq == workers * each and store.check().ok
    return workers * each / (max(e for _, e in spans) - min(b for b, _ in spans))


def median_of(runs: int, fn: Callable[[], Any]) -> Any:
    values = [fn() for _ in range(runs)]
    if isinstance(values[0], tuple):
        return tuple(statistics.median(v) for v in zip(*values, strict=True))
    return statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every size")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--relaxed", action="store_true", help="no flush per commit")
    parser.add_argument("--recalls", type=int, default=7, help="recalls timed (median)")
    parser.add_argument(
        "--postgres",
        default=os.environ.get(
            "MEMCOMMIT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
        ),
    )
    args = parser.parse_args()
    n_bulk = int(100_000 * args.scale)
    n_single = int(2_000 * args.scale)
    each = max(1, int(250 * args.scale))
    with tempfile.TemporaryDirectory() as tmp:
        backends = [
            Backend(name, postgres=args.postgres, relaxed=args.relaxed, workdir=Path(tmp))
            for name in ("sqlite", "postgresql")
        ]
        rows: dict[str, dict[str, str]] = {b.name: {} for b in backends}
        try:
            for b in backends:
                print(f"[{b.name}] bulk commit of {n_bulk:,} ...", flush=True)
                times = []
                for _ in range(args.runs):  # recall then reads the last of these stores
                    seconds, target, options = bulk(b, n_bulk)
                    times.append(seconds)
                rows[b.name]["bulk"] = f"{statistics.median(times):.2f} s"
                build, p50 = recalls(target, options, args.recalls)
                rows[b.name]["index"] = f"{build:.2f} s"
                rows[b.name]["recall"] = f"{p50:.1f} ms"
                b.drop()
            for b in backends:
                print(f"[{b.name}] {n_single:,} single commits ...", flush=True)
                ms = median_of(args.runs, lambda b=b: singles(b, n_single))
                rows[b.name]["single"] = f"{ms:.2f} ms"
                rows[b.name]["single_ms"] = ms
                b.drop()
            for b in backends:
                print(f"[{b.name}] 8 processes x {each} commits ...", flush=True)
                rate = median_of(args.runs, lambda b=b: processes(b, 8, each))
                rows[b.name]["procs"] = f"{rate:,.0f} commits/s"
                b.drop()
        finally:
            for b in backends:
                b.drop()
    durability = (
        "relaxed: SQLite synchronous=NORMAL, PostgreSQL synchronous_commit=off"
        if args.relaxed
        else "flushed per commit: SQLite WAL synchronous=FULL, PostgreSQL synchronous_commit=on"
    )
    print(f"\nmedians of {args.runs} runs; {durability}\n")
    labels = [
        ("bulk", f"bulk commit, {n_bulk:,} memories"),
        ("index", f"recall index build, {n_bulk:,} memories"),
        ("recall", f"recall p50, {n_bulk:,} memories"),
        ("single", f"single commit p50 ({n_single:,} commits)"),
        ("procs", f"8 processes x {each} commits"),
    ]
    print(f"{'workload':<40} {'SQLite':>20} {'PostgreSQL':>20}")
    for key, label in labels:
        print(f"{label:<40} {rows['sqlite'][key]:>20} {rows['postgresql'][key]:>20}")
    ratio = rows["postgresql"]["single_ms"] / rows["sqlite"]["single_ms"]
    print(f"\nPostgreSQL single-commit latency = {ratio:.2f}x SQLite's (target: within 3x)")


if __name__ == "__main__":
    main()
