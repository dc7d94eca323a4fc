"""Recall speed at scale: memcommit beside tantivy, SQLite FTS5 and bm25s on one corpus.

Short synthetic memories (10-40 words, Zipf-distributed vocabulary plus common
English function words) spread over 10 tenants; queries are 2-5 words. Every
system searches one tenant (its own index per tenant, as a tenant filter would),
top 10 for the peers. memcommit's figure is recall() end to end: scope filters,
exact TF-IDF cosine blended with recency, and poolsplit packing into a
2,000-token budget (explain=False, rows not built).

memcommit's index is built directly with ``TenantIndex.put_many`` (the same
code a store commit runs, minus 1M SQLite commits); memories are loaded from
the generated corpus for the selected ids, as a store would serve them.

Adds: 1,000 new memories for one tenant, timed as indexing them plus the first
query after them (which computes the document norms it needs under the new
statistics). Explanation: the full row table of one tenant on demand, as
counts per reason plus the first page of 100 rows, and every row at once.

    .venv/bin/python benchmarks/recall_bench.py [--memories 1000000] [--queries 200]
    .venv/bin/python benchmarks/recall_bench.py --quick   # 100,000 memories, no peers
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np

from memcommit.model import Memory
from memcommit.recall import Tokens, recall
from memcommit.recall.index import TenantIndex, Vocabulary
from memcommit.recall.sources import Source

TENANTS = 10
NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)
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


def rss_mb() -> float:
    """Resident memory of this process in MB (Linux)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    """Distinct pronounceable pseudo-words."""
    syllables = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"]
    words: set[str] = set()
    while len(words) < size:
        n = rng.integers(2, 4)
        words.add("".join(syllables[i] for i in rng.integers(0, len(syllables), n)))
    return sorted(words)


def corpus(n: int, seed: int = 7) -> tuple[list[list[str]], list[str]]:
    """``n`` memories split round-robin over tenants (texts per tenant) and the vocabulary."""
    rng = np.random.default_rng(seed)
    words = vocabulary(50_000, rng)
    ranks = np.arange(1, len(words) + 1)
    p = 1.0 / ranks**1.07
    p /= p.sum()
    lengths = rng.integers(10, 41, n)
    content = rng.choice(len(words), size=int(lengths.sum()), p=p)
    function = rng.random(int(lengths.sum())) < 0.3
    fillers = rng.integers(0, len(FUNCTION_WORDS), int(lengths.sum()))
    texts: list[list[str]] = [[] for _ in range(TENANTS)]
    position = 0
    for i, length in enumerate(lengths.tolist()):
        parts = [
            FUNCTION_WORDS[fillers[j]] if function[j] else words[content[j]]
            for j in range(position, position + length)
        ]
        position += length
        texts[i % TENANTS].append(" ".join(parts))
    return texts, words


def queries(words: list[str], count: int, seed: int = 11) -> list[tuple[int, str]]:
    """(tenant, query) pairs: 2-5 words, mostly from the frequent half of the vocabulary."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        k = int(rng.integers(2, 6))
        picks = rng.integers(0, 5_000, k) if rng.random() < 0.7 else rng.integers(0, len(words), k)
        out.append((int(rng.integers(0, TENANTS)), " ".join(words[i] for i in picks)))
    return out


def memory(tenant: int, number: int, text: str) -> Memory:
    created = NOW - timedelta(minutes=number % 100_000)
    return Memory(
        id=f"t{tenant}-{number:07d}",
        content=text,
        tenant=f"t{tenant}",
        kind="fact",
        created_at=created,
        created_commit=number + 1,
    )


def additions(texts: list[list[str]], adds: int) -> list[str]:
    """New memories for tenant 0: 12 words each, reshuffled from its existing ones."""
    rng = np.random.default_rng(5)
    return [" ".join(rng.choice(texts[0][i].split(), 12)) for i in range(adds)]


def percentiles(times: list[float]) -> tuple[float, float]:
    """p50 and p95 in milliseconds."""
    ordered = sorted(times)
    return (statistics.median(ordered) * 1e3, ordered[int(0.95 * (len(ordered) - 1))] * 1e3)


def timed(
    fn: Callable[[int, str], object], qs: list[tuple[int, str]], runs: int
) -> tuple[float, float]:
    """Median over ``runs`` of (p50, p95) across the queries."""
    results = []
    for _ in range(runs):
        times = []
        for tenant, text in qs:
            start = time.perf_counter()
            fn(tenant, text)
            times.append(time.perf_counter() - start)
        results.append(percentiles(times))
    return statistics.median(r[0] for r in results), statistics.median(r[1] for r in results)


def bench_memcommit(texts, qs, runs, adds):
    gc.collect()
    before = rss_mb()
    shared = Vocabulary()
    start = time.perf_counter()
    indexes = []
    for t, items in enumerate(texts):
        index = TenantIndex(f"t{t}", shared)
        index.put_many(memory(t, i, text) for i, text in enumerate(items))
        index.merge()
        indexes.append(index)
    build = time.perf_counter() - start
    for index in indexes:  # every norm, so the index memory below includes them
        index.norms(np.arange(len(index.ids)))
    gc.collect()
    memory_mb = rss_mb() - before
    array_mb = sum(index.memory_bytes() for index in indexes) / 2**20

    def source(t: int) -> Source:
        def load(ids: list[str]) -> list[Memory]:
            numbers = [int(i.split("-")[1]) for i in ids]
            return [memory(t, n, texts[t][n]) for n in numbers]

        return Source(indexes[t], load, True)

    sources = [source(t) for t in range(TENANTS)]

    def run(scorer: str) -> Callable[[int, str], object]:
        return lambda t, q: recall(
            sources[t],
            q,
            tenant=f"t{t}",
            budget=Tokens(2000),
            recency_weight=0.1,
            scorer=scorer,
            now=NOW,
            explain=False,
        )

    tfidf = timed(run("tfidf"), qs, runs)
    default = timed(run("memory"), qs, max(1, runs // 2))
    explained = explain_ms(run("tfidf"), qs)
    extra = additions(texts, adds)
    first = len(texts[0])
    texts[0].extend(extra)  # the loader serves the added memories from here
    next_query = next(q for t, q in qs if t == 0)
    start = time.perf_counter()
    indexes[0].put_many(memory(0, first + i, text) for i, text in enumerate(extra))
    added = time.perf_counter() - start
    start = time.perf_counter()
    run("tfidf")(0, next_query)
    refresh = time.perf_counter() - start
    return {
        "build_s": build,
        "rss_mb": memory_mb,
        "arrays_mb": array_mb,
        "tfidf": tfidf,
        "memory": default,
        "add_s": added,
        "refresh_s": refresh,
        "explain": explained,
    }


def explain_ms(run: Callable[[int, str], Any], qs: list[tuple[int, str]]) -> dict[str, float]:
    """The explanation of tenant 0's recalls: counts + a page (median), every row (once)."""
    mine = [q for t, q in qs if t == 0][:10]
    paged = []
    for q in mine:
        start = time.perf_counter()
        ctx = run(0, q)
        ctx.explanation.counts()
        ctx.explanation.page(0, 100)
        paged.append(time.perf_counter() - start)
    start = time.perf_counter()
    rows = len(run(0, mine[0]).rows)
    return {
        "page_ms": statistics.median(paged) * 1e3,
        "all_s": time.perf_counter() - start,
        "rows": rows,
    }


def bench_tantivy(texts, qs, runs, extra):
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("body", stored=False)
    builder.add_integer_field("n", stored=True, indexed=False)
    schema = builder.build()
    root = tempfile.mkdtemp(prefix="recall-bench-tantivy-")
    start = time.perf_counter()
    indexes = []
    for t, items in enumerate(texts):
        path = os.path.join(root, str(t))
        os.makedirs(path)
        index = tantivy.Index(schema, path=path)
        writer = index.writer(heap_size=128_000_000, num_threads=1)
        for i, text in enumerate(items):
            writer.add_document(tantivy.Document(body=text, n=i))
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        indexes.append(index)
    build = time.perf_counter() - start
    searchers = [index.searcher() for index in indexes]

    def search(t: int, q: str) -> object:
        parsed = indexes[t].parse_query(q, ["body"])
        return searchers[t].search(parsed, 10).hits

    lat = timed(search, qs, runs)
    writer = indexes[0].writer(heap_size=64_000_000, num_threads=1)
    start = time.perf_counter()
    for i, text in enumerate(extra):
        writer.add_document(tantivy.Document(body=text, n=10_000_000 + i))
    writer.commit()
    indexes[0].reload()
    added = time.perf_counter() - start
    writer.wait_merging_threads()
    shutil.rmtree(root, ignore_errors=True)
    return {"build_s": build, "lat": lat, "add_s": added}


def bench_fts5(texts, qs, runs, extra):
    db = sqlite3.connect(":memory:")
    start = time.perf_counter()
    for t, items in enumerate(texts):
        db.execute(f"CREATE VIRTUAL TABLE m{t} USING fts5(body)")
        db.executemany(f"INSERT INTO m{t}(body) VALUES (?)", ((x,) for x in items))
    db.commit()
    build = time.perf_counter() - start

    def search(t: int, q: str) -> object:
        match = " OR ".join(f'"{w}"' for w in q.split())
        return db.execute(
            f"SELECT rowid FROM m{t} WHERE m{t} MATCH ? ORDER BY rank LIMIT 10", (match,)
        ).fetchall()

    lat = timed(search, qs, runs)
    start = time.perf_counter()
    db.executemany("INSERT INTO m0(body) VALUES (?)", ((x,) for x in extra))
    db.commit()
    added = time.perf_counter() - start
    db.close()
    return {"build_s": build, "lat": lat, "add_s": added}


def bench_bm25s(texts, qs, runs):
    import bm25s

    start = time.perf_counter()
    retrievers = []
    for items in texts:
        retriever = bm25s.BM25()
        retriever.index(
            bm25s.tokenize(items, stopwords="en", show_progress=False), show_progress=False
        )
        retrievers.append(retriever)
    build = time.perf_counter() - start

    def search(t: int, q: str) -> object:
        tokens = bm25s.tokenize([q], stopwords="en", show_progress=False)
        return retrievers[t].retrieve(tokens, k=10, show_progress=False, n_threads=1)

    return {"build_s": build, "lat": timed(search, qs, runs)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3, help="repetitions; medians are shown")
    parser.add_argument("--adds", type=int, default=1_000)
    parser.add_argument("--skip", default="", help="comma-separated peers to skip")
    parser.add_argument(
        "--quick", action="store_true", help="100,000 memories, 50 queries, 1 run, no peers"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.memories, args.queries, args.runs = 100_000, 50, 1
        args.skip = "tantivy,fts5,bm25s"
    texts, words = corpus(args.memories)
    qs = queries(words, args.queries)
    print(
        f"corpus: {args.memories:,} memories, {TENANTS} tenants, {len(qs)} queries, "
        f"medians of {args.runs} runs",
        flush=True,
    )
    ours = bench_memcommit(texts, qs, args.runs, args.adds)
    print(
        f"memcommit index built directly (TenantIndex.put_many) in {ours['build_s']:.1f} s; "
        f"index memory {ours['rss_mb']:.0f} MB RSS ({ours['arrays_mb']:.0f} MB of arrays)",
        flush=True,
    )
    rows = [
        ("memcommit recall, tfidf", *ours["tfidf"], ours["add_s"] + ours["refresh_s"]),
        ("memcommit recall, memory", *ours["memory"], None),
    ]
    skip = set(args.skip.split(","))
    extra = texts[0][-args.adds :]
    del texts[0][-args.adds :]
    if "tantivy" not in skip:
        r = bench_tantivy(texts, qs, args.runs, extra)
        rows.append(("tantivy top-10", *r["lat"], r["add_s"]))
    if "fts5" not in skip:
        r = bench_fts5(texts, qs, args.runs, extra)
        rows.append(("SQLite FTS5 top-10", *r["lat"], r["add_s"]))
    if "bm25s" not in skip:
        r = bench_bm25s(texts, qs, args.runs)
        rows.append(("bm25s top-10", *r["lat"], None))
    print(f"\n{'system':<28}{'p50 ms':>9}{'p95 ms':>9}{'+' + str(args.adds) + ' adds s':>14}")
    for name, p50, p95, add in rows:
        shown = "" if add is None else f"{add:.3f}"
        print(f"{name:<28}{p50:>9.2f}{p95:>9.2f}{shown:>14}")
    print(
        f"\nmemcommit adds: {ours['add_s']:.3f} s to index + {ours['refresh_s']:.3f} s "
        "for the next query (norms of its hits under the new statistics)"
    )
    explained = ours["explain"]
    print(
        f"memcommit explanation of a {explained['rows']:,}-memory tenant: recall + counts + "
        f"first page of 100 rows {explained['page_ms']:.1f} ms (median); "
        f"every row at once {explained['all_s']:.2f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
