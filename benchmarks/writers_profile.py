"""Where one PostgreSQL commit's time goes, one writer alone, beside plain psycopg.

    python benchmarks/writers_profile.py                 # 3,000 single-memory commits
    python benchmarks/writers_profile.py --commits 1000

Many writers on one store add up as far as two things allow: the time each commit
holds the store's lock, and the CPU each commit costs the two sides on a machine
they share (docs/postgres.md, "Many writers"). For the commit `writers_bench.py`
times (``with view.commit() as tx: tx.add(text, key=...)``, ordered by the server
as it lands) this prints, per commit: the time the caller waits, the writer's own
CPU (``time.process_time``), the server's CPU (every PostgreSQL process of this
host, from ``/proc``: the server must run here) and the time the server holds the
lock (``clock_timestamp()`` stamped as the lock is granted and again after the
COMMIT, in the commit's own round trip, into a temporary table read at the end); and
the same for plain psycopg's ``BEGIN; INSERT; COMMIT`` into a table made ``LIKE
versions INCLUDING ALL``. ``store.verify()`` must hold at the end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

import memcommit
from memcommit import upkeep

TEXT = "the deploy of service 0 finished; note {i} for the on-call owner"
_LOCKED = "set_config('memcommit_profile.locked', clock_timestamp()::text, false)"
_HELD = (
    "INSERT INTO memcommit_profile_held SELECT extract(epoch FROM clock_timestamp()"
    " - current_setting('memcommit_profile.locked')::timestamptz)"
)
_RAW = (
    "INSERT INTO {table} (id, content, kind, scope, tenant, mkey, importance, tags, always,"
    " metadata, status, tier, version, created_at, created_commit, updated_at, seq) VALUES"
    " (%s, %s, 'fact', 'shared', 't0', %s, 0.5, '[]', false, '{{}}', 'active', 'short', 1,"
    " now(), %s, now(), %s)"
)
_TICK = os.sysconf("SC_CLK_TCK")


def server_cpu() -> float:
    """Seconds of CPU every PostgreSQL process on this host has used."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name, _, rest = text.partition(") ")
        if name.endswith("(postgres"):
            fields = rest.split()
            total += int(fields[11]) + int(fields[12])
    return total / _TICK


def _timed(fn: Callable[..., Any], spent: list[float]) -> Callable[..., Any]:
    """``fn``, adding the CPU each call takes to ``spent[0]``."""

    def timed(*args: Any) -> Any:
        began = time.process_time()
        try:
            return fn(*args)
        finally:
            spent[0] += time.process_time() - began

    return timed


#: The writer's CPU in recall's upkeep (a tenant's snapshot written every 1,000 memories).
kept = [0.0]


def memcommit_commits(url: str, n: int) -> tuple[list[float], float, float, list[float]]:
    """(waits, writer CPU, server CPU) of ``n`` commits through the public API, and the
    lock held for each (stamped in the commit's own round trip, into a temporary table)."""
    with memcommit.open(url, pool_size=1) as store:
        backend = store._core.backend
        with backend._pool.connection() as conn:  # type: ignore[attr-defined]
            conn.execute("CREATE TEMPORARY TABLE memcommit_profile_held (held float8)")
        backend._ordering += f", {_LOCKED}"  # type: ignore[attr-defined]
        backend._flush = (_HELD, *backend._flush)  # type: ignore[attr-defined]
        view = store.tenant("t0")
        waits = []
        upkeep.after_commit = _timed(upkeep.after_commit, kept)
        for i in range(n + 50):  # the first 50 warm the connection and the plans up
            if i == 50:
                cpu, server = time.process_time(), server_cpu()
            began = time.perf_counter()
            with view.commit(message=f"w0-{i}") as tx:
                tx.add(TEXT.format(i=i), key=f"w0-{i}")
            waits.append(time.perf_counter() - began)
            if i == 49:
                kept[0] = 0.0
        cpu, server = time.process_time() - cpu, server_cpu() - server
        with backend._pool.connection() as conn:  # type: ignore[attr-defined]
            held = [h for (h,) in conn.execute("SELECT held FROM memcommit_profile_held")]
        report = store.verify()
        if report.problems:
            raise SystemExit(f"verify failed: {report.problems[0]}")
    return waits[50:], cpu, server, held[50:]


def raw_commits(base: str, table: str, n: int) -> tuple[list[float], float, float]:
    """(waits, client CPU, server CPU) of ``n`` single-row transactions with plain psycopg."""
    waits = []
    with psycopg.connect(base, autocommit=True) as conn:
        for i in range(n + 50):
            if i == 50:
                cpu, server = time.process_time(), server_cpu()
            began = time.perf_counter()
            with conn.transaction():
                conn.execute(_RAW.format(table=table), (f"{i:032d}", TEXT.format(i=i), i, i, i))
            waits.append(time.perf_counter() - began)
        # before the connection closes: its server process's CPU goes with it
        return waits[50:], time.process_time() - cpu, server_cpu() - server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=3000)
    parser.add_argument(
        "--postgres",
        default=os.environ.get(
            "MEMCOMMIT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
        ),
    )
    args = parser.parse_args()
    n, schema = args.commits, f"wprofile_{uuid.uuid4().hex[:12]}"
    try:
        waits, cpu, server, held = memcommit_commits(f"{args.postgres}?schema={schema}", n)
        with psycopg.connect(args.postgres, autocommit=True) as conn:
            conn.execute(f'CREATE TABLE "{schema}".raw (LIKE "{schema}".versions INCLUDING ALL)')
        raw_waits, raw_cpu, raw_server = raw_commits(args.postgres, f'"{schema}".raw', n)
    finally:
        with psycopg.connect(args.postgres, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    print(f"{n} single-memory commits, one writer; microseconds a commit\n")
    print(f"{'':<36} {'memcommit':>10} {'psycopg':>10}")
    rows = (
        ("the caller waits (median)", statistics.median(waits), statistics.median(raw_waits)),
        ("the writer's CPU (mean)", cpu / n, raw_cpu / n),
        ("  of which recall's upkeep", kept[0] / n, 0.0),
        ("the server's CPU (mean)", server / n, raw_server / n),
        ("the server holds the lock (median)", statistics.median(held), 0.0),
    )
    for what, ours, theirs in rows:
        print(f"{what:<36} {ours * 1e6:>10.0f} {theirs * 1e6:>10.0f}")


if __name__ == "__main__":
    main()
