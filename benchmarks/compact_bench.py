"""Time compaction: finished traces of 20 steps compacted with ``outline``.

Ours: ``Compactor(store, FinishedTraces(), outline).compact()`` over a SQLite
store: a versioned summary per trace, every step moved to the archive as a new
version, the root marked, history kept. The peer is the minimal equivalent in
plain ``sqlite3`` on one mutable table (no versions, no commit log): per trace,
read its rows, build the same outline JSON, insert the summary, update the
steps' tier and the root's metadata, all in one transaction.

Both start from a copy of the same prebuilt database for every run; the script
prints the median of several runs (traces per second) for 10,000 traces, then
the growth curve of ours at 1k / 10k / 50k traces: time per trace must stay
flat (linear total time).

    .venv/bin/python benchmarks/compact_bench.py [--traces 10000] [--curve 1000,10000,50000]
        [--runs 3] [--batch 1000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import memcommit
from memcommit.compaction import Compactor, FinishedTraces, outline
from memcommit.compaction.outline import key_line

STEPS = 20
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
NOW = T0 + timedelta(days=30)
VERBS = ("ran", "read", "edited", "tested", "deployed", "checked", "rolled back")
HOSTS = ("api-1", "api-2", "db-1", "cache-1", "worker-3")


def step_text(trace: int, step: int) -> str:
    """Repetitive but varied step content, like a real agent log."""
    verb = VERBS[(trace + step) % len(VERBS)]
    return f"{verb} step {step % 9} on {HOSTS[(trace * step) % len(HOSTS)]}\nexit code 0, 120 lines"


def build_ours(path: Path, traces: int) -> None:
    """A memcommit store with ``traces`` finished traces (every tenth failed)."""
    store = memcommit.open(str(path))
    for start in range(0, traces, 500):
        with store.commit(message="load", now=T0 + timedelta(seconds=start)) as tx:
            for t in range(start, min(traces, start + 500)):
                trace_id = tx.begin_trace(f"deploy service {t % 97} to region {t % 5}")
                for s in range(1, STEPS + 1):
                    meta = {"error": "timeout"} if t % 10 == 0 and s == STEPS else None
                    tx.step(trace_id, step_text(t, s), metadata=meta)
                tx.finish(trace_id, status="failed" if t % 10 == 0 else "finished")
    store.close()


def build_peer(path: Path, traces: int) -> None:
    """The same traces in one plain table."""
    conn = sqlite3.connect(path)
    conn.executescript(
        "PRAGMA journal_mode=WAL;"
        "CREATE TABLE memories (id TEXT PRIMARY KEY, trace_id TEXT, step INTEGER, content TEXT,"
        " kind TEXT, tier TEXT, tenant TEXT, scope TEXT, metadata TEXT, created_at TEXT);"
        "CREATE INDEX by_trace ON memories (trace_id, step);"
        "CREATE TABLE traces (id TEXT PRIMARY KEY, status TEXT, started_at TEXT, ended_at TEXT);"
    )
    with conn:
        for t in range(traces):
            tid = f"t{t:07d}"
            at = (T0 + timedelta(seconds=t)).isoformat()
            status = "failed" if t % 10 == 0 else "finished"
            conn.execute("INSERT INTO traces VALUES (?, ?, ?, ?)", (tid, status, at, at))
            rows = [(tid, tid, 0, f"deploy service {t % 97} to region {t % 5}", "{}")]
            for s in range(1, STEPS + 1):
                meta = {"error": "timeout"} if t % 10 == 0 and s == STEPS else {}
                rows.append((f"{tid}s{s}", tid, s, step_text(t, s), json.dumps(meta)))
            conn.executemany(
                "INSERT INTO memories VALUES (?, ?, ?, ?, 'event', 'short', 'default', 'shared',"
                " ?, '" + at + "')",
                rows,
            )
    conn.close()


def peer_outline(trace: tuple, rows: list[tuple]) -> dict:
    """outline's fields, computed straight from rows."""
    tid, status, started, ended = trace
    steps = rows[1:]
    seen, lines, errors, kinds = set(), [], [], {}
    for _id, step, content, kind, meta in steps:
        kinds[kind] = kinds.get(kind, 0) + 1
        line = key_line(content)
        if line.casefold() not in seen:
            seen.add(line.casefold())
            lines.append(line)
        error = json.loads(meta).get("error")
        if error:
            errors.append({"step": step, "error": error})
    return {
        "task": rows[0][2],
        "status": status,
        "steps": len(steps),
        "started": started,
        "ended": ended,
        "kinds": kinds,
        "lines": lines,
        "errors": errors,
        "ids": {"trace": tid, "root": rows[0][0], "steps": [r[0] for r in steps]},
    }


def run_peer(path: Path) -> int:
    """Compact every finished trace in one transaction; returns how many."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("BEGIN IMMEDIATE")
    done = 0
    for trace in conn.execute("SELECT * FROM traces ORDER BY ended_at").fetchall():
        rows = conn.execute(
            "SELECT id, step, content, kind, metadata FROM memories WHERE trace_id = ?"
            " ORDER BY step",
            (trace[0],),
        ).fetchall()
        if "compacted_into" in json.loads(rows[0][4]):
            continue
        data = peer_outline(trace, rows)
        summary_id = f"{trace[0]}-summary"
        conn.execute(
            "INSERT INTO memories VALUES (?, NULL, NULL, ?, 'summary', 'long', 'default',"
            " 'shared', ?, ?)",
            (summary_id, data["task"] + "\n" + "\n".join(data["lines"]), json.dumps(data), NOW),
        )
        conn.execute(
            "UPDATE memories SET tier = 'archive' WHERE trace_id = ? AND step > 0", (trace[0],)
        )
        conn.execute(
            "UPDATE memories SET metadata = ? WHERE id = ?",
            (json.dumps({"compacted_into": summary_id}), trace[0]),
        )
        done += 1
    conn.execute("COMMIT")
    conn.close()
    return done


def run_ours(path: Path, batch: int | None) -> int:
    store = memcommit.open(str(path))
    result = Compactor(store, policy=FinishedTraces(), summarizer=outline).compact(
        now=NOW, batch=batch
    )
    store.close()
    assert not result.errors, result.errors[:3]
    return len(result.traces)


def timed(template: Path, work: Path, run, expected: int) -> tuple[float, float]:
    """Wall and CPU seconds of one run on a fresh copy of ``template``.

    CPU time is printed beside wall time because the machine may be shared: it
    shows the growth curve without other processes' noise.
    """
    for suffix in ("", "-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)
    shutil.copy(template, work)
    start, cpu = time.perf_counter(), time.process_time()
    done = run(work)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert done == expected, (done, expected)
    return elapsed, cpu


def template(folder: Path, name: str, traces: int, build) -> Path:
    path = folder / f"{name}-{traces}.db"
    start = time.perf_counter()
    build(path, traces)
    if name == "ours":  # fold the WAL in, so one file copies the whole store
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
    print(f"  built {name} with {traces:,} traces in {time.perf_counter() - start:.1f}s")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=10_000)
    parser.add_argument("--curve", default="1000,10000,50000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=1000, help="traces per commit (0: one)")
    args = parser.parse_args()
    batch = args.batch or None
    sizes = sorted({int(n) for n in args.curve.split(",")} | {args.traces})

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        work = folder / "work.db"
        ours_runs: dict[int, list[tuple[float, float]]] = {}
        print(f"Compaction of finished traces of {STEPS} steps, outline summarizer")
        for n in sizes:
            built = template(folder, "ours", n, build_ours)
            runs = args.runs if n <= args.traces else 1
            ours_runs[n] = [
                timed(built, work, lambda p: run_ours(p, batch), n) for _ in range(runs)
            ]
            built.unlink()
        peer_built = template(folder, "peer", args.traces, build_peer)
        peer = [timed(peer_built, work, run_peer, args.traces) for _ in range(args.runs)]

    n = args.traces
    print()
    print(f"{n:,} traces, median of {args.runs} runs (batch={batch or 'one commit'}):")
    rows = (("memcommit Compactor", ours_runs[n]), ("plain sqlite3 loop (no history)", peer))
    medians = {}
    for name, runs in rows:
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        medians[name] = (wall, cpu)
        print(
            f"  {name:<34}{wall:8.2f}s wall {n / wall:9,.0f} traces/s"
            f"  {cpu:8.2f}s CPU {n / cpu:9,.0f} traces/s"
        )
    (ours_wall, ours_cpu), (peer_wall, peer_cpu) = medians.values()
    print(
        f"  memcommit takes {ours_wall / peer_wall:.1f}x the plain loop's wall time,"
        f" {ours_cpu / peer_cpu:.1f}x its CPU time"
    )
    print()
    print("Growth (ours): time per trace should stay flat (wall, and CPU of this process)")
    base = None
    for size in sizes:
        seconds = statistics.median(wall for wall, _ in ours_runs[size])
        cpu = statistics.median(c for _, c in ours_runs[size])
        per = cpu / size * 1e6
        base = base or per
        print(
            f"  {size:>7,} traces {seconds:8.2f}s wall {size / seconds:9,.0f} traces/s"
            f"  {per:8.0f} us CPU/trace  x{per / base:.2f}"
        )


if __name__ == "__main__":
    main()
