"""Recall in fresh processes: memcommit beside tantivy and SQLite FTS5, same texts and queries.

One tenant of N short synthetic memories (10-40 words: a Zipf-distributed
vocabulary of 50,000 pseudo-words plus common English function words), stored
through the public API in bulk commits of 10,000 (a SQLite file). Queries are
2-5 words drawn from the corpus' own word distribution, function words
included, so common terms are as frequent in queries as in the texts. The
session variants store the same texts in sessions (of 1,000 memories, and of 10,
by default): a long session must cost no more than a short one.

Every latency is measured in a FRESH process (a child of this script):

- cold: open the store + the first recall (memcommit; max_records=10), open the
  on-disk index + the first top-10 query (tantivy, FTS5); median over several
  processes, each with another query. ``import memcommit`` is timed apart.
- warm: p50/p95 over the queries in one process after its first recall.
- RSS of the memcommit child after one recall; size of the index on disk.
- commits: a one-memory commit with the live index subscribed vs without, and
  1,000 adds indexed (the work a commit's hook does) plus the next query.
- ``memcommit recall`` CLI wall time, end to end.
- never recalled: the same texts written through the API in bulk commits of
  20,000 by a child process that never recalls (the writer keeps the tenant's
  snapshot current: `memcommit.upkeep`), then cold and warm as above; and one
  bulk commit of 20,000 into a new store with that upkeep and without it
  (``KEEP_AFTER`` out of reach: nothing indexed, as before it), alternating.
- steady: a writer service's single-memory commits on the big tenant, in fresh
  processes, its snapshot written again after a twentieth of the tenant
  (``KEEP_SHARE``) or after every 1,000 memories (as before it), alternating.

Built stores and peer indexes are cached under ``--cache`` (default
``~/.cache/memcommit-bench``), so reruns only measure. memcommit's modules are
compiled to bytecode first, as an install leaves them: with
PYTHONDONTWRITEBYTECODE set, every fresh process would otherwise compile them
again and the cold figures would measure the compiler.

    .venv/bin/python benchmarks/recall_bench.py --memories 100000
    .venv/bin/python benchmarks/recall_bench.py --memories 1000000 --sessions 0
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)
TENANT = "bench"
BATCH = 10_000
FUNCTION_WORDS = [
    "the",
    "a",
    "to",
    "and",
    "of",
    "in",
    "is",
    "it",
    "that",
    "for",
    "on",
    "with",
    "was",
    "as",
    "at",
    "be",
    "this",
    "have",
]


def compile_memcommit() -> None:
    """Compile memcommit's modules to bytecode (written even under PYTHONDONTWRITEBYTECODE)."""
    import memcommit

    compileall.compile_dir(Path(memcommit.__file__).parent, quiet=1)


def rss_mb() -> float:
    """Resident memory of this process in MB (Linux)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def corpus(n: int, seed: int = 7) -> list[str]:
    """``n`` texts of 10-40 words: Zipf pseudo-words, 30% function words."""
    rng = np.random.default_rng(seed)
    syllables = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"]
    found: set[str] = set()
    while len(found) < 50_000:
        k = int(rng.integers(2, 4))
        found.add("".join(syllables[i] for i in rng.integers(0, len(syllables), k)))
    words = sorted(found)
    p = 1.0 / np.arange(1, len(words) + 1) ** 1.07
    p /= p.sum()
    lengths = rng.integers(10, 41, n)
    total = int(lengths.sum())
    content = rng.choice(len(words), size=total, p=p)
    function = rng.random(total) < 0.3
    fillers = rng.integers(0, len(FUNCTION_WORDS), total)
    tokens = [
        FUNCTION_WORDS[f] if is_function else words[c]
        for c, is_function, f in zip(
            content.tolist(), function.tolist(), fillers.tolist(), strict=True
        )
    ]
    out, position = [], 0
    for length in lengths.tolist():
        out.append(" ".join(tokens[position : position + length]))
        position += length
    return out


def queries(texts: list[str], count: int, seed: int = 11) -> list[str]:
    """2-5 words each, drawn from the corpus' own word distribution (common words included)."""
    rng = np.random.default_rng(seed)
    sample = " ".join(texts[i] for i in rng.integers(0, len(texts), 2_000)).split()
    return [
        " ".join(sample[i] for i in rng.integers(0, len(sample), int(rng.integers(2, 6))))
        for _ in range(count)
    ]


# ── building (cached) ───────────────────────────────────────────────────────


def build_store(path: Path, texts: list[str], session_size: int) -> None:
    """The store through the public API (bulk commits), then one recall in the same process.

    The commits keep the tenant's snapshot current as they land (`memcommit.upkeep`),
    so "stored" includes that, and the recall after them only reads what it kept.
    """
    import memcommit

    if (path.parent / (path.name + ".done")).exists():
        with memcommit.open(path) as store:  # a snapshot of an older format is rebuilt here
            store.recall("warm up", tenant=TENANT, max_records=10)
        return
    for leftover in path.parent.glob(path.name + "*"):
        shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
    start = time.perf_counter()
    with memcommit.open(path) as store:
        for first in range(0, len(texts), BATCH):
            moment = NOW - timedelta(seconds=len(texts) - first)
            with store.commit(message=f"bulk {first}", now=moment) as tx:
                for i in range(first, min(first + BATCH, len(texts))):
                    session = f"s{i // session_size}" if session_size else None
                    tx.add(texts[i], tenant=TENANT, session=session)
        stored = time.perf_counter() - start
        start = time.perf_counter()
        store.recall("warm up", tenant=TENANT, max_records=10)
        indexed = time.perf_counter() - start
    print(
        f"  built {path.name}: stored in {stored:.0f} s, first recall {indexed:.1f} s", flush=True
    )
    (path.parent / (path.name + ".done")).write_text(json.dumps([stored, indexed]))


def build_tantivy(path: Path, texts: list[str]) -> None:
    import tantivy

    if (path / "done").exists():
        return
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("body", stored=False)
    index = tantivy.Index(builder.build(), path=str(path))
    writer = index.writer(heap_size=256_000_000, num_threads=1)
    for text in texts:
        writer.add_document(tantivy.Document(body=text))
    writer.commit()
    writer.wait_merging_threads()
    (path / "done").write_text("")


def build_fts5(path: Path, texts: list[str]) -> None:
    if path.with_suffix(".done").exists():
        return
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    db.execute("CREATE VIRTUAL TABLE m USING fts5(body)")
    db.executemany("INSERT INTO m(body) VALUES (?)", ((t,) for t in texts))
    db.commit()
    db.close()
    path.with_suffix(".done").write_text("")


# ── children: each measurement in a fresh process ───────────────────────────


def child(argv: list[str]) -> dict:
    """Run this script as a child with ``argv``; its last stdout line is JSON."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", *argv],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "MEMCOMMIT_INDEX_DIR": ""},
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def child_memcommit(store: str, scorer: str, qs: list[str]) -> dict:
    start = time.perf_counter()
    import memcommit

    imported = time.perf_counter() - start
    start = time.perf_counter()
    opened = memcommit.open(store, read_only=True)
    opened.recall(qs[0], tenant=TENANT, max_records=10, scorer=scorer, now=NOW)
    cold = time.perf_counter() - start
    rss = rss_mb()
    times = []
    for q in qs[1:]:
        start = time.perf_counter()
        opened.recall(q, tenant=TENANT, max_records=10, scorer=scorer, now=NOW)
        times.append(time.perf_counter() - start)
    return {"import": imported, "cold": cold, "rss": rss, "warm": times}


def child_tantivy(path: str, qs: list[str]) -> dict:
    import tantivy

    start = time.perf_counter()
    index = tantivy.Index.open(path)
    searcher = index.searcher()
    searcher.search(index.parse_query(qs[0], ["body"]), 10)
    cold = time.perf_counter() - start
    times = []
    for q in qs[1:]:
        start = time.perf_counter()
        searcher.search(index.parse_query(q, ["body"]), 10)
        times.append(time.perf_counter() - start)
    return {"cold": cold, "warm": times}


def child_fts5(path: str, qs: list[str]) -> dict:
    def search(db: sqlite3.Connection, q: str) -> list:
        match = " OR ".join(f'"{w}"' for w in q.split())
        sql = "SELECT rowid FROM m WHERE m MATCH ? ORDER BY rank LIMIT 10"
        return db.execute(sql, (match,)).fetchall()

    start = time.perf_counter()
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    search(db, qs[0])
    cold = time.perf_counter() - start
    times = []
    for q in qs[1:]:
        start = time.perf_counter()
        search(db, q)
        times.append(time.perf_counter() - start)
    return {"cold": cold, "warm": times}


def child_commits(store: str, other: str, texts: list[str]) -> dict:
    """One-memory commits with and without the live index; 1,000 adds indexed + next query.

    A commit only queues its change for the live index; the next recall applies
    it. So "with" times the commit plus that catch-up (the index's share of the
    work, wherever it lands), "without" the commit alone, on a copy of the
    store (so neither sees the other's commits as another writer's); the two
    alternate, one commit each, so drift in the machine's speed falls on both.
    """
    import memcommit
    from memcommit.recall.index.live import store_index

    def one(opened: memcommit.Store, i: int, catch_up: bool) -> tuple[float, float]:
        start = time.perf_counter()
        with opened.commit(message="one") as tx:
            tx.add(texts[i % len(texts)], tenant=TENANT)
        landed = time.perf_counter()
        if catch_up:
            store_index(opened).index(TENANT)
        return landed - start, time.perf_counter() - start

    plain = memcommit.open(other)
    indexed = memcommit.open(store)
    indexed.recall("warm up", tenant=TENANT, max_records=10)
    without, with_index, commit_only = [], [], []
    for i in range(200):
        without.append(one(plain, i, catch_up=False)[0])
        alone, caught_up = one(indexed, i, catch_up=True)
        commit_only.append(alone)
        with_index.append(caught_up)
    with indexed.commit(message="adds") as tx:
        added = [tx.add(texts[i], tenant=TENANT) for i in range(1_000)]
    index = store_index(indexed).index(TENANT)
    start = time.perf_counter()
    index.put_many(added)
    put = time.perf_counter() - start
    start = time.perf_counter()
    indexed.recall(texts[0][:40], tenant=TENANT, max_records=10, scorer="tfidf")
    next_query = time.perf_counter() - start
    return {
        "without": statistics.median(without),
        "with": statistics.median(with_index),
        "commit_only": statistics.median(commit_only),
        "put_1000": put,
        "next_query": next_query,
    }


WRITER_BATCH = 20_000


def child_write(path: str, n: int) -> dict:
    """The corpus through the API in bulk commits of 20,000, by a process that never recalls."""
    import memcommit

    texts, times = corpus(n), []
    with memcommit.open(path) as store:
        for first in range(0, n, WRITER_BATCH):
            start = time.perf_counter()
            with store.commit(message=f"bulk {first}", now=NOW) as tx:
                for i in range(first, min(first + WRITER_BATCH, n)):
                    tx.add(texts[i], tenant=TENANT)
            times.append(time.perf_counter() - start)
    return {"commits": times}


def child_bulk(work: str, n: int) -> dict:
    """One bulk commit of 20,000 into new stores, with the writer's upkeep and without it."""
    import memcommit
    from memcommit import upkeep

    texts = corpus(n)[:WRITER_BATCH]
    kept, plain = [], []
    for trial in range(3):
        for keep, times in ((True, kept), (False, plain)):
            path = Path(work) / f"bulk-{trial}-{keep}.db"
            upkeep.KEEP_AFTER = 1_000 if keep else 2**62
            with memcommit.open(path) as store:
                start, cpu = time.perf_counter(), time.process_time()
                with store.commit(message="bulk", now=NOW) as tx:
                    for text in texts:
                        tx.add(text, tenant=TENANT)
                times.append((time.perf_counter() - start, time.process_time() - cpu))
    return {
        "kept": statistics.median(wall for wall, _ in kept),
        "plain": statistics.median(wall for wall, _ in plain),
        "kept_cpu": statistics.median(cpu for _, cpu in kept),
        "plain_cpu": statistics.median(cpu for _, cpu in plain),
    }


def child_steady(path: str, n: int, share: bool) -> dict:
    """A writer service on the big tenant: ``n`` single-memory commits in a fresh process.

    ``share``: the snapshot is written again once a `KEEP_SHARE`-th of the tenant was
    added (the default); else after every `KEEP_AFTER` memories, as before it.
    """
    import memcommit
    from memcommit import upkeep

    if not share:
        upkeep.KEEP_SHARE = 2**62
    spent = [0.0]
    after = upkeep.after_commit

    def timed(*args: object) -> None:
        began = time.perf_counter()
        try:
            after(*args)  # type: ignore[arg-type]
        finally:
            spent[0] += time.perf_counter() - began

    upkeep.after_commit = timed
    with memcommit.open(path) as store:
        view = store.tenant(TENANT)
        start = time.perf_counter()
        for i in range(n):
            with view.commit(message=f"steady {i}") as tx:
                tx.add(f"steady note {i} on the deploy of service {i % 17}")
        wall = time.perf_counter() - start
    return {"commit": wall / n, "upkeep": spent[0] / n}


def run_child(args: argparse.Namespace) -> None:
    payload = json.loads(Path(args.child_input).read_text())
    kind = payload["kind"]
    if kind == "memcommit":
        result = child_memcommit(payload["path"], payload["scorer"], payload["queries"])
    elif kind == "tantivy":
        result = child_tantivy(payload["path"], payload["queries"])
    elif kind == "fts5":
        result = child_fts5(payload["path"], payload["queries"])
    elif kind == "write":
        result = child_write(payload["path"], payload["n"])
    elif kind == "bulk":
        result = child_bulk(payload["folder"], payload["n"])
    elif kind == "steady":
        result = child_steady(payload["path"], payload["n"], payload["share"])
    else:
        result = child_commits(payload["path"], payload["other"], payload["texts"])
    print(json.dumps(result))


def measure(kind: str, work: Path, **payload: object) -> dict:
    spec = work / f"{kind}-{os.getpid()}.json"
    spec.write_text(json.dumps({"kind": kind, **payload}))
    try:
        return child(["--child-input", str(spec)])
    finally:
        spec.unlink()


def cold_and_warm(kind: str, work: Path, processes: int, qs: list[str], **payload) -> dict:
    """Cold: median over ``processes`` fresh processes (another first query each); warm: one."""
    colds, warm, extra = [], [], {}
    for p in range(processes):
        result = measure(kind, work, queries=qs if not p else [qs[p]], **payload)
        colds.append(result["cold"])
        if not p:
            warm, extra = result["warm"], result
    ordered = sorted(warm)
    return {
        "cold_ms": statistics.median(colds) * 1e3,
        "p50_ms": statistics.median(ordered) * 1e3,
        "p95_ms": ordered[int(0.95 * (len(ordered) - 1))] * 1e3,
        "rss_mb": extra.get("rss"),
        "import_ms": extra.get("import", 0.0) * 1e3,
    }


def cli_wall(store: Path, query: str) -> float:
    exe = Path(sys.executable).with_name("memcommit")
    start = time.perf_counter()
    subprocess.run(
        [
            str(exe),
            "recall",
            query,
            "--tenant",
            TENANT,
            "--max-records",
            "10",
            "--store",
            str(store),
        ],
        capture_output=True,
        check=True,
        env={**os.environ, "MEMCOMMIT_INDEX_DIR": ""},
    )
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument(
        "--sessions", default="1000,10", help="session sizes, comma-separated (0: none)"
    )
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--processes", type=int, default=5, help="fresh processes for cold")
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "memcommit-bench"))
    parser.add_argument(
        "--skip", default="", help="comma-separated: tantivy,fts5,commits,never-recalled,steady"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child-input", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        run_child(args)
        return 0
    compile_memcommit()
    n = args.memories
    cache = Path(args.cache) / f"recall-{n}"
    cache.mkdir(parents=True, exist_ok=True)
    texts = corpus(n)
    qs = queries(texts, args.queries)
    skip = set(args.skip.split(","))
    print(f"{n:,} memories in one tenant, {len(qs)} queries; cache {cache}", flush=True)
    plain = cache / "store.db"
    build_store(plain, texts, 0)
    variants = [("no sessions", plain)]
    for size in [int(size) for size in args.sessions.split(",") if int(size)]:
        sessions = cache / f"sessions-{size}.db"
        build_store(sessions, texts, size)
        variants.append((f"sessions of {size:,}", sessions))
    never = cache / "never-recalled.db"
    if "never-recalled" not in skip and not never.with_name(never.name + ".done").exists():
        for leftover in cache.glob(never.name + "*"):
            shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
        written = measure("write", cache, path=str(never), n=n)["commits"]
        never.with_name(never.name + ".done").write_text(json.dumps(written))
    if "tantivy" not in skip:
        build_tantivy(cache / "tantivy", texts)
    if "fts5" not in skip:
        build_fts5(cache / "fts5.db", texts)
    work = Path(tempfile.mkdtemp(prefix="recall-bench-"))
    rows = []
    for label, path in variants:
        for scorer in ("tfidf", "memory"):
            result = cold_and_warm(
                "memcommit", work, args.processes, qs, path=str(path), scorer=scorer
            )
            rows.append((f"memcommit {scorer}, {label}", result))
            print(f"  measured memcommit {scorer}, {label}", flush=True)
    if "never-recalled" not in skip:
        result = cold_and_warm(
            "memcommit", work, args.processes, qs, path=str(never), scorer="memory"
        )
        rows.append(("memcommit memory, never recalled", result))
    if "tantivy" not in skip:
        result = cold_and_warm("tantivy", work, args.processes, qs, path=str(cache / "tantivy"))
        rows.append(("tantivy top-10", result))
    if "fts5" not in skip:
        result = cold_and_warm("fts5", work, args.processes, qs, path=str(cache / "fts5.db"))
        rows.append(("SQLite FTS5 top-10", result))
    print(f"\n{'fresh process, max 10 results':<40}{'cold ms':>9}{'p50 ms':>9}{'p95 ms':>9}")
    for name, r in rows:
        print(f"{name:<40}{r['cold_ms']:>9.1f}{r['p50_ms']:>9.2f}{r['p95_ms']:>9.2f}")
    peers = dict(rows)
    if "tantivy top-10" in peers:
        tantivy = peers["tantivy top-10"]["p50_ms"]
        print("\nwarm p50 against tantivy's top-10 (same queries, same run):")
        for name, r in rows:
            if name.startswith("memcommit"):
                print(f"  {name:<38}{r['p50_ms'] / tantivy:>6.2f}x")
    plain_memory = peers["memcommit memory, no sessions"]["p50_ms"]
    for name, r in rows:
        if name.startswith("memcommit memory, sessions"):
            print(f"{name}: {r['p50_ms'] / plain_memory:.2f}x its no-session p50")
    ours = rows[0][1]
    snapshot = sum(p.stat().st_size for p in Path(str(plain) + ".recall").glob("*.idx"))
    stored, indexed = json.loads((cache / "store.db.done").read_text())
    print(
        f"\nimport memcommit {ours['import_ms']:.0f} ms; RSS after one recall "
        f"{ours['rss_mb']:.0f} MB; index snapshot on disk {snapshot / 2**20:.0f} MB "
        f"(store file {plain.stat().st_size / 2**20:.0f} MB); built through the API in "
        f"{stored:.0f} s (snapshot kept current by the commits), the writer's first recall "
        f"{indexed:.1f} s (both timed when the cache was "
        "built, by the code of that day: delete it to time them again)"
    )
    if "never-recalled" not in skip:
        written = json.loads(never.with_name(never.name + ".done").read_text())
        bulk = measure("bulk", work, folder=str(work), n=n)
        print(
            f"written by a process that never recalled, bulk commits of {WRITER_BATCH:,}: "
            f"{sum(written):.0f} s in all (each {min(written):.1f}-{max(written):.1f} s, its "
            "snapshot kept current at each end; timed when the cache was built); first "
            f"recall in a fresh process {peers['memcommit memory, never recalled']['cold_ms']:.0f}"
            f" ms. One bulk commit of {WRITER_BATCH:,} into a new store, medians of 3: "
            f"{bulk['plain']:.2f} s nothing kept, {bulk['kept']:.2f} s with its snapshot "
            f"kept ({bulk['kept'] / bulk['plain']:.2f}x); in CPU time {bulk['plain_cpu']:.2f} s "
            f"and {bulk['kept_cpu']:.2f} s ({bulk['kept_cpu'] / bulk['plain_cpu']:.2f}x)"
        )
    walls = [cli_wall(plain, q) for q in qs[:3]]
    print(f"memcommit recall CLI, end to end: {statistics.median(walls):.2f} s (median of 3)")
    if "commits" not in skip:
        copies = [work / "commits.db", work / "plain.db"]
        for copy in copies:
            shutil.copyfile(plain, copy)
            shutil.copytree(str(plain) + ".recall", str(copy) + ".recall")
        c = measure("commits", work, path=str(copies[0]), other=str(copies[1]), texts=texts[:1_000])
        print(
            f"one-memory commit, medians of 200 alternating: {c['without'] * 1e3:.2f} ms "
            f"without a live index; with one, {c['commit_only'] * 1e3:.2f} ms for the commit "
            f"(+{100 * (c['commit_only'] / c['without'] - 1):.0f}%) and "
            f"{c['with'] * 1e3:.2f} ms with the index caught up "
            f"(+{100 * (c['with'] / c['without'] - 1):.0f}%); 1,000 adds indexed in "
            f"{c['put_1000']:.3f} s, next query {c['next_query'] * 1e3:.1f} ms"
        )
    if "steady" not in skip:
        steady(plain, work, n)
    shutil.rmtree(work, ignore_errors=True)
    return 0


def steady(plain: Path, work: Path, n: int) -> None:
    """A writer's single-memory commits on the big tenant, its snapshot rewritten after a
    share of the tenant or after every 1,000 memories, alternating on fresh copies."""
    commits = max(5_000, n // 10)
    runs: dict[bool, list[dict]] = {True: [], False: []}
    for _ in range(2):
        for share in (True, False):
            copy = work / "steady.db"
            shutil.copyfile(plain, copy)
            shutil.rmtree(str(copy) + ".recall", ignore_errors=True)
            shutil.copytree(str(plain) + ".recall", str(copy) + ".recall")
            runs[share].append(measure("steady", work, path=str(copy), n=commits, share=share))
    figures = {
        share: (
            statistics.median(r["commit"] for r in done) * 1e3,
            statistics.median(r["upkeep"] for r in done) * 1e3,
        )
        for share, done in runs.items()
    }
    print(
        f"a writer's {commits:,} single-memory commits on the {n:,}-memory tenant, fresh "
        f"processes, medians of 2: {figures[True][0]:.2f} ms a commit with the snapshot "
        f"written again after a twentieth of the tenant ({figures[True][1]:.2f} ms of it "
        f"upkeep), {figures[False][0]:.2f} ms after every 1,000 memories "
        f"({figures[False][1]:.2f} ms upkeep)"
    )


if __name__ == "__main__":
    raise SystemExit(main())
