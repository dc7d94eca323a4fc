"""Where one PostgreSQL commit spends the time it holds the store's lock, one writer alone.

    python benchmarks/writers_profile.py                 # 1,500 single-memory commits
    python benchmarks/writers_profile.py --commits 300

The ceiling of many writers on one store is the time each commit holds the
store's advisory lock (docs/postgres.md, "Many writers"). This measures its parts
for the commit `writers_bench.py` times (``with view.commit() as tx: tx.add(...)``):
timers around `PostgresBackend.begin` (the first round trip: lock and tip),
`Transaction.add`, `PostgresBackend.write` (rows, digests, the commit's hash) and
the COMMIT's send, and on the server the time from the lock granted to the COMMIT
done (``clock_timestamp()`` stamped after the lock, read back right after the
COMMIT in the same pipeline: the stamp and the read add a little). The timers
wrap the backend's methods in this process only; the commits and their checks are
the store's own, and ``store.verify()`` must hold at the end. Medians and 10th/90th
percentiles in microseconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

import psycopg

import memcommit
from memcommit.store.backends import postgres_landing
from memcommit.store.backends.postgres import PostgresBackend
from memcommit.store.transaction import Transaction

TEXT = "the deploy of service 0 finished; note {i} for the on-call owner"
_STAMP = "SELECT set_config('memcommit_profile.locked', clock_timestamp()::text, false)"
_HELD = (
    "SELECT extract(epoch FROM clock_timestamp()"
    " - current_setting('memcommit_profile.locked')::timestamptz)"
)


def _timed(cls: type, name: str, marks: dict[str, float]) -> None:
    """Wrap ``cls.name`` so each call stamps ``marks[name + "0"]`` and ``marks[name + "1"]``."""
    inner = getattr(cls, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        marks[name + "0"] = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            marks[name + "1"] = time.perf_counter()

    setattr(cls, name, timed)


def _instrument(marks: dict[str, float], held: list[float]) -> None:
    """The timers, and the server's stamp of the lock granted and of the COMMIT done."""
    for cls, name in ((PostgresBackend, "begin"), (Transaction, "add"), (PostgresBackend, "write")):
        _timed(cls, name, marks)
    share: Callable[..., None] = postgres_landing.Landing._share_flushes

    def stamped_share(self: Any, conn: psycopg.Connection) -> None:
        share(self, conn)
        text = self._begin_tip_sql.decode()
        tip = text.index("; SELECT ", text.index("pg_advisory_xact_lock"))
        self._begin_tip_sql = f"{text[:tip]}; {_STAMP}{text[tip:]}".encode()

    def stamped_send(self: Any, conn: psycopg.Connection, *, commit: bool = False) -> None:
        if not commit:
            return send(self, conn)
        marks["send0"] = time.perf_counter()
        queued, self._queued = self._queued, []
        with conn.pipeline() as pipeline, conn.cursor() as cur, conn.cursor() as stamp:
            for w in queued:  # as `Landing._send`
                for text, rows in ((w.commit[0], [w.commit[1]]), w.versions, *w.updates):
                    for row in rows:
                        cur.execute(text, row)
            cur.execute("COMMIT")
            marks["commit_sent"] = time.perf_counter()
            stamp.execute(_HELD)
            for text in self._flush:
                cur.execute(text)
            pipeline.sync()
            (seconds,) = stamp.fetchone() or (0,)
        held.append(float(seconds))
        marks["send1"] = time.perf_counter()

    send = postgres_landing.Landing._send
    postgres_landing.Landing._share_flushes = stamped_share  # type: ignore[method-assign]
    postgres_landing.Landing._send = stamped_send  # type: ignore[method-assign]


#: (what, from mark, to mark) of each client span reported.
SPANS = (
    ("first round trip (lock, tip)", "begin0", "begin1"),
    ("tip -> tx.add called", "begin1", "add0"),
    ("tx.add", "add0", "add1"),
    ("block end -> write (batch)", "add1", "write0"),
    ("write (rows, digests, hash)", "write0", "write1"),
    ("write -> COMMIT sent (psycopg)", "write1", "commit_sent"),
    ("tip -> COMMIT sent", "begin1", "commit_sent"),
    ("COMMIT sent -> flush answered", "commit_sent", "send1"),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=1500)
    parser.add_argument(
        "--postgres",
        default=os.environ.get(
            "MEMCOMMIT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
        ),
    )
    args = parser.parse_args()
    marks: dict[str, float] = {}
    held: list[float] = []
    spans: dict[str, list[float]] = {what: [] for what, _, _ in SPANS}
    totals: list[float] = []
    _instrument(marks, held)
    schema = f"wprofile_{uuid.uuid4().hex[:12]}"
    try:
        with memcommit.open(f"{args.postgres}?schema={schema}") as store:
            view = store.tenant("t0")
            for i in range(args.commits + 50):  # the first 50 warm the connections up
                marks.clear()
                began = time.perf_counter()
                with view.commit(message=f"w0-{i}") as tx:
                    tx.add(TEXT.format(i=i), key=f"w0-{i}")
                if i >= 50:
                    totals.append(time.perf_counter() - began)
                    for what, start, end in SPANS:
                        spans[what].append(marks[end] - marks[start])
            report = store.verify()
            if report.problems:
                raise SystemExit(f"verify failed: {report.problems[0]}")
    finally:
        with psycopg.connect(args.postgres, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    rows = [*spans.items(), ("server: lock granted -> COMMIT done", held[50:])]
    rows.append(("the whole commit, as the caller sees it", totals))
    print(f"{args.commits} single-memory commits, one writer; microseconds\n")
    print(f"{'':<42} {'median':>8} {'p10':>8} {'p90':>8}")
    for what, values in rows:
        ordered = sorted(values)
        p10, p90 = ordered[len(ordered) // 10], ordered[len(ordered) * 9 // 10]
        median = statistics.median(ordered)
        print(f"{what:<42} {median * 1e6:>8.1f} {p10 * 1e6:>8.1f} {p90 * 1e6:>8.1f}")


if __name__ == "__main__":
    main()
