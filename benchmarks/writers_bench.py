"""Many writers on one PostgreSQL store, beside plain psycopg doing the same in the same run.

    python benchmarks/writers_bench.py                     # W = 1, 2, 4, 8; 3 runs
    python benchmarks/writers_bench.py --commits 100 --runs 1   # a quick look

W processes each land ``--commits`` single-memory commits through the public
API (``with store.tenant(t).commit() as tx: tx.add(...)``): each on its own
tenant ("distinct"), then all on one tenant ("one"). Beside them, the same W
processes run single-row transactions with plain psycopg (``BEGIN; INSERT;
COMMIT``) into a table made ``LIKE versions INCLUDING ALL``: the same columns and
indexes as memcommit's own table. Throughput is commits over the span from the
first writer's start to the last one's end (every process waits at a barrier
first, so start-up is not timed); figures are medians of ``--runs`` runs, each
run measuring every kind at every W. After each memcommit run the store is
checked: every commit landed once, seqs gap-free, no writer saw an error.

Durability is the server's (``synchronous_commit=on``, ``fsync=on``) for both.
PostgreSQL: ``MEMCOMMIT_TEST_POSTGRES`` or ``--postgres`` (default
postgresql://postgres@127.0.0.1:5432/test), a fresh schema per store, dropped after.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import time
import uuid
from typing import Any

import psycopg

import memcommit

KINDS = ("distinct", "one", "raw")
TEXT = "the deploy of service {w} finished; note {i} for the on-call owner"


def _memcommit_writer(
    target: str, w: int, tenant: str, count: int, start: Any
) -> tuple[float, float, int]:
    """(start, end, errors) of ``count`` single-memory commits on ``tenant``."""
    errors = 0
    with memcommit.open(target) as store:
        view = store.tenant(tenant)
        start.wait()
        began = time.perf_counter()
        for i in range(count):
            try:
                with view.commit(message=f"w{w}-{i}") as tx:
                    tx.add(TEXT.format(w=w, i=i), key=f"w{w}-{i}")
            except memcommit.errors.MemcommitError:
                errors += 1
        return began, time.perf_counter(), errors


def _raw_writer(
    conninfo: str, table: str, w: int, tenant: str, count: int, start: Any
) -> tuple[float, float, int]:
    """(start, end, errors) of ``count`` single-row transactions with plain psycopg."""
    insert = (
        f"INSERT INTO {table} (id, content, kind, scope, tenant, mkey, importance, tags,"
        " always, metadata, status, tier, version, created_at, created_commit, updated_at,"
        " seq) VALUES (%s, %s, 'fact', 'shared', %s, %s, 0.5, '[]', false, '{}', 'active',"
        " 'short', 1, now(), %s, now(), %s)"
    )
    with psycopg.connect(conninfo, autocommit=True) as conn:
        start.wait()
        began = time.perf_counter()
        for i in range(count):
            n = w * count + i + 1
            with conn.transaction():
                conn.execute(
                    insert, (f"{w:08d}{i:024d}", TEXT.format(w=w, i=i), tenant, f"w{w}-{i}", n, n)
                )
        return began, time.perf_counter(), 0


def _url(base: str, schema: str) -> str:
    return f"{base}{'&' if '?' in base else '?'}schema={schema}"


def one_round(base: str, kind: str, writers: int, count: int) -> float:
    """Commits per second of ``writers`` processes of ``kind``; the store checked after."""
    schema = f"wbench_{uuid.uuid4().hex[:12]}"
    target = _url(base, schema)
    ctx = multiprocessing.get_context("spawn")
    try:
        memcommit.open(target).close()  # the schema and its tables, before the race
        with ctx.Manager() as manager, ctx.Pool(writers) as pool:
            start = manager.Barrier(writers)
            if kind == "raw":
                table = f"{schema}.raw_versions"
                with psycopg.connect(base, autocommit=True) as conn:
                    conn.execute(f"CREATE TABLE {table} (LIKE {schema}.versions INCLUDING ALL)")
                jobs = [(base, table, w, f"t{w}", count, start) for w in range(writers)]
                spans = pool.starmap(_raw_writer, jobs)
            else:
                tenant = "shared" if kind == "one" else None
                jobs2 = [(target, w, tenant or f"t{w}", count, start) for w in range(writers)]
                spans = pool.starmap(_memcommit_writer, jobs2)
        errors = sum(e for _, _, e in spans)
        if kind != "raw":
            _check(target, writers, count, errors)
        return writers * count / (max(e for _, e, _ in spans) - min(b for b, _, _ in spans))
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def _check(target: str, writers: int, count: int, errors: int) -> None:
    """Every commit landed once, in a gap-free order, and no writer saw an error."""
    with memcommit.open(target) as store:
        seqs = [c.seq for c in store.log()]
        keys = sorted(m.key or "" for m in store.find())
    want = sorted(f"w{w}-{i}" for w in range(writers) for i in range(count))
    if errors or sorted(seqs) != list(range(1, writers * count + 1)) or keys != want:
        raise SystemExit(
            f"{writers} writers: {errors} errors, {len(seqs)} commits, {len(keys)} memories"
            f" (wanted {len(want)} of each, none lost, seqs 1..{len(want)})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=300, help="commits per process")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--writers", default="1,2,4,8", help="the W to measure")
    parser.add_argument(
        "--postgres",
        default=os.environ.get(
            "MEMCOMMIT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
        ),
    )
    args = parser.parse_args()
    ws = [int(w) for w in args.writers.split(",")]
    rates: dict[tuple[str, int], list[float]] = {(k, w): [] for k in KINDS for w in ws}
    for run in range(args.runs):
        for w in ws:
            for kind in KINDS:
                rate = one_round(args.postgres, kind, w, args.commits)
                rates[(kind, w)].append(rate)
                print(f"run {run + 1}: {kind:>8} W={w}: {rate:,.0f} commits/s", flush=True)
    med = {key: statistics.median(values) for key, values in rates.items()}
    print(
        f"\nmedians of {args.runs} runs, {args.commits} commits per process, commits/s"
        " (synchronous_commit=on)\n"
    )
    print(
        f"{'W':>3} {'distinct':>10} {'one':>10} {'psycopg':>10}"
        f" {'distinct/raw':>13} {'one/raw':>8} {'distinct/W1':>12} {'one/W1':>7}"
    )
    for w in ws:
        d, o, r = med[("distinct", w)], med[("one", w)], med[("raw", w)]
        print(
            f"{w:>3} {d:>10,.0f} {o:>10,.0f} {r:>10,.0f} {d / r:>13.2f} {o / r:>8.2f}"
            f" {d / med[('distinct', ws[0])]:>12.2f} {o / med[('one', ws[0])]:>7.2f}"
        )


if __name__ == "__main__":
    main()
