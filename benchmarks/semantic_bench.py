"""Hybrid recall latency: lexical beside hybrid in one process, and numpy brute force as the peer.

One tenant of N synthetic memories (recall_bench's corpus: Zipf pseudo-words)
and N random unit vectors of 384 dims (the shape of the offline model's; a real
model embeds ~8 texts/s here, so a million texts would take a day and a half:
the vectors are random, the work of ranking them is the same). The tenant's
index and its int8 vector rows are built once, written as the snapshot and its
vector file (cached under ``--cache``, by size and the vector file's block size),
then every figure comes from FRESH child processes:

- memcommit: hybrid and lexical (``hybrid=False``) recalls, each mode in its own
  fresh process over the same queries in the same order: cold = open the
  snapshot and the vector file + the first recall (max_records=10); warm p50/p95
  of the rest, as wall time and as the process's CPU time; RSS after them. Each
  process pays its own first reads of a term's postings and of a vector row (a
  mode run after the other in one process would find them read already); then
  how much of the exact scan's dense top 10 and top 100 the candidate stage kept
  (the sign-code Hamming stage is approximate, see recall/index/dense.py). The
  query embedder gives a fixed random unit vector per query text (no model time).
- peer, numpy brute force: the same vectors as a float32 ``.npy`` file, mapped;
  cold = map + the first exact top-10 (``V @ q``, ``argpartition``); warm p50;
  RSS. (usearch/faiss are not installed here.)

    .venv/bin/python benchmarks/semantic_bench.py --memories 100000
    .venv/bin/python benchmarks/semantic_bench.py --memories 1000000 --queries 30
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from recall_bench import compile_memcommit, corpus, queries, rss_mb

NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)
TENANT = "bench"
DIMS = 384
EMBEDDER = "random-unit/384"
STAMP = ("bench-store", 1, "bench-commit")
CHUNK = 50_000


class QueryVectors:
    """An embedder of queries only: a fixed random unit vector per text (seeded by its hash)."""

    name, dims = EMBEDDER, DIMS

    def embed(self, texts, *, kind="passage"):
        out = np.empty((len(texts), DIMS), dtype=np.float32)
        for row, text in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            vector = np.random.default_rng(seed).standard_normal(DIMS)
            out[row] = vector / np.linalg.norm(vector)
        return out


def unit_vectors(n: int, seed: int = 5):
    """``n`` random unit vectors, a chunk at a time (float32)."""
    rng = np.random.default_rng(seed)
    for start in range(0, n, CHUNK):
        block = rng.standard_normal((min(CHUNK, n - start), DIMS)).astype(np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        yield block


def build(folder: Path, n: int) -> None:
    """The tenant's snapshot, its vector file and the peer's float32 matrix (once per size)."""
    from memcommit.model import Memory
    from memcommit.recall.index import persist, vectorfile
    from memcommit.recall.index.dense import DenseRows
    from memcommit.recall.index.persist import Stamp
    from memcommit.recall.index.tenant import TenantIndex

    done = folder / "done"
    if done.exists() and readable(folder):
        return
    folder.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    texts = corpus(n)
    index = TenantIndex(TENANT)
    with index.bulk():
        index.put_many(
            Memory(id=f"m{i:08d}", tenant=TENANT, content=text, kind="event", created_at=NOW)
            for i, text in enumerate(texts)
        )
    rows = DenseRows(EMBEDDER, DIMS)
    peer = np.lib.format.open_memmap(folder / "peer.npy", "w+", np.float32, (n, DIMS))
    at = 0
    for block in unit_vectors(n):
        docs = np.array([index.ids.find(f"m{i:08d}") for i in range(at, at + len(block))])
        rows.put(docs, block)
        peer[at : at + len(block)] = block
        at += len(block)
    peer.flush()
    del peer
    index.dense[EMBEDDER] = rows
    stamp = Stamp(*STAMP)
    snapshot = folder / "tenant.idx"
    persist.write(snapshot, TENANT, stamp, index.export())
    docs = np.flatnonzero(index.alive.view())
    vectorfile.write(folder / vectorfile.name(snapshot.name, EMBEDDER), TENANT, stamp, rows, docs)
    done.write_text(json.dumps({"seconds": time.perf_counter() - start}))
    print(f"  built {n:,} memories and vectors in {time.perf_counter() - start:.0f} s", flush=True)


def readable(folder: Path) -> bool:
    """Whether this version reads the cached vector file (a file of an older layout is refused)."""
    from memcommit.recall.index import persist, vectorfile

    snapshot = folder / "tenant.idx"
    try:
        stamp = persist.read(snapshot, TENANT, STAMP[0]).stamp
        vectorfile.read(folder / vectorfile.name(snapshot.name, EMBEDDER), TENANT, EMBEDDER,
                        DIMS, stamp)  # fmt: skip
    except persist.SnapshotRefused:
        return False
    return True


def child_memcommit(folder: str, qs: list[str], hybrid: bool) -> dict:
    """Cold open + the first recall, then warm recalls, all hybrid or all lexical."""
    start = time.perf_counter()
    from memcommit.model import Memory
    from memcommit.recall import recall
    from memcommit.recall.index import persist, vectorfile
    from memcommit.recall.index.tenant import TenantIndex
    from memcommit.recall.pipeline.sources import Source

    imported = time.perf_counter() - start
    start = time.perf_counter()
    snapshot = Path(folder) / "tenant.idx"
    opened = persist.read(snapshot, TENANT, STAMP[0])
    stamp = opened.stamp  # (its token: the vector file written with this snapshot)
    index = TenantIndex.restore(TENANT, opened.sections)
    place = snapshot.parent / vectorfile.name(snapshot.name, EMBEDDER)
    index.dense_file = lambda name, dims: vectorfile.read(place, TENANT, name, dims, stamp)

    def load(ids):
        return [Memory(id=i, tenant=TENANT, content=f"memory {i}", kind="event") for i in ids]

    def no_vectors(embedder, *, tenant=None, ids=None):  # every document has its row already
        raise AssertionError("the vector file holds every row")

    source = Source(index, load, True, QueryVectors(), no_vectors)
    recall(source, qs[0], tenant=TENANT, max_records=10, now=NOW, hybrid=hybrid)
    cold = time.perf_counter() - start
    wall, cpu = [], []
    for q in qs[1:]:
        start, used = time.perf_counter(), time.process_time()
        recall(source, q, tenant=TENANT, max_records=10, now=NOW, hybrid=hybrid)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - used)
    rss = rss_mb()
    found = None
    if hybrid:
        vectors = [QueryVectors().embed([q])[0] for q in qs]
        found = candidate_recall(index.dense[EMBEDDER], vectors)
    return {"import": imported, "cold": cold, "warm": wall, "cpu": cpu, "rss": rss,
            "candidates": found}  # fmt: skip


def candidate_recall(rows, vectors: list[np.ndarray]) -> dict[str, float]:
    """Share of the exact scan's dense top 10 and top 100 that the candidate stage keeps."""
    from memcommit.recall.scoring.fusion import DEPTH

    def top(docs: np.ndarray, cosines: np.ndarray, count: int) -> set[int]:
        return set(docs[np.lexsort((docs, -cosines))][:count].tolist())

    every = np.arange(rows.size)
    shares: dict[str, list[float]] = {"top10": [], "top100": []}
    for vector in vectors:
        picked, cosines = rows.nearest(vector, DEPTH, np.ones(rows.size, dtype=bool))
        exact = rows.cosines(vector)
        for name, count in (("top10", 10), ("top100", DEPTH)):
            kept = top(picked, cosines, count) & top(every, exact, count)
            shares[name].append(len(kept) / count)
    return {name: float(np.mean(values)) for name, values in shares.items()}


def child_numpy(folder: str, qs: list[str]) -> dict:
    """The peer: exact float32 top-10 over the mapped matrix."""
    embed = QueryVectors()
    start = time.perf_counter()
    matrix = np.load(Path(folder) / "peer.npy", mmap_mode="r")

    def top(q: str) -> np.ndarray:
        scores = matrix @ embed.embed([q])[0]
        best = np.argpartition(-scores, 10)[:10]
        return best[np.argsort(-scores[best])]

    top(qs[0])
    cold = time.perf_counter() - start
    warm = []
    for q in qs[1:]:
        start = time.perf_counter()
        top(q)
        warm.append(time.perf_counter() - start)
    return {"cold": cold, "warm": warm, "rss": rss_mb()}


def child(kind: str, folder: Path, qs: list[str]) -> dict:
    spec = folder / f"{kind}-{os.getpid()}.json"
    spec.write_text(json.dumps({"kind": kind, "folder": str(folder), "queries": qs}))
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(spec)],
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        spec.unlink()
    return json.loads(done.stdout.strip().splitlines()[-1])


def _ms(values: list[float], share: float = 0.5) -> float:
    ordered = sorted(values)
    return ordered[int(share * (len(ordered) - 1))] * 1e3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--processes", type=int, default=3, help="fresh processes for cold")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "memcommit-bench")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        spec = json.loads(Path(args.child).read_text())
        folder, qs = spec["folder"], spec["queries"]
        if spec["kind"] == "numpy":
            print(json.dumps(child_numpy(folder, qs)))
        else:
            print(json.dumps(child_memcommit(folder, qs, spec["kind"] == "hybrid")))
        return 0
    compile_memcommit()
    from memcommit.recall.index import vectorfile
    from memcommit.recall.index.persist import FORMAT

    # an older format or a vector file of other blocks is refused: each has its own build
    folder = args.cache / f"semantic-{args.memories}-format{FORMAT}-blocks{vectorfile.BLOCK}"
    build(folder, args.memories)
    qs = queries(corpus(min(args.memories, 20_000)), args.queries)
    runs: dict[str, list[dict]] = {"hybrid": [], "lexical": [], "numpy": []}
    for p in range(args.processes):  # alternate, so all see the same machine
        for kind in runs:
            runs[kind].append(child(kind, folder, qs if not p else qs[p : p + 2]))
    ours, plain, peer = runs["hybrid"][0], runs["lexical"][0], runs["numpy"][0]

    def cold(kind: str) -> float:
        return statistics.median(r["cold"] for r in runs[kind]) * 1e3

    hybrid, lexical, brute = _ms(ours["warm"]), _ms(plain["warm"]), _ms(peer["warm"])
    print(f"\n{args.memories:,} memories with {DIMS}-dim vectors, one tenant, top 10")
    print(f"{'':34}{'cold ms':>10}{'p50 ms':>10}{'p95 ms':>10}{'RSS MB':>10}")
    line = "{:34}{:>10.1f}{:>10.2f}{:>10.2f}{:>10.0f}"
    for name, kind, run in (("memcommit hybrid", "hybrid", ours),
                            ("memcommit lexical", "lexical", plain),
                            ("numpy brute force float32", "numpy", peer)):  # fmt: skip
        print(line.format(name, cold(kind), _ms(run["warm"]), _ms(run["warm"], 0.95), run["rss"]))
    imported = statistics.median(r["import"] for r in runs["hybrid"] + runs["lexical"]) * 1e3
    print(f"(cold leaves out importing memcommit's recall modules: {imported:.0f} ms)")
    print(f"\nhybrid p50 / lexical p50: {hybrid / lexical:.2f}x; "
          f"hybrid p50 / numpy brute force p50: {hybrid / brute:.2f}x")  # fmt: skip
    cpu_hybrid, cpu_lexical = _ms(ours["cpu"]), _ms(plain["cpu"])
    print(f"CPU time p50 (what a loaded machine's wall clock hides): hybrid {cpu_hybrid:.2f} ms,"
          f" lexical {cpu_lexical:.2f} ms, {cpu_hybrid / cpu_lexical:.2f}x")  # fmt: skip
    kept = ours["candidates"]
    print(f"the exact scan's dense top 10 / top 100 kept by the candidate stage: "
          f"{kept['top10']:.3f} / {kept['top100']:.3f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
