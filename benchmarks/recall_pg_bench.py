"""PostgreSQL: what a new app host pays for its first recall, without and with a snapshot.

Recall snapshots are per host (``~/.cache/memcommit/recall/``, or
``MEMCOMMIT_INDEX_DIR``): a host's first recall of a tenant either builds the
index from the rows in PostgreSQL (and writes the snapshot), or opens a
snapshot another host made, copied into its cache, and catches up from
``diff``. This times both in fresh processes, each with its own empty index
directory standing for a new host, on the corpus of ``recall_bench.py``
stored through the public API in one PostgreSQL schema (cached: built once).

    .venv/bin/python benchmarks/recall_pg_bench.py --memories 100000

Figures: the first recall of a host with no snapshot (the build: reading every
memory from PostgreSQL, indexing, writing the snapshot), of a host with a
snapshot copied from the first, and of that host again after 1,000 memories
were committed elsewhere (the catch-up); the snapshot's size.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from recall_bench import BATCH, NOW, TENANT, compile_memcommit, corpus, queries

DEFAULT_URL = os.environ.get("MEMCOMMIT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def build(url: str, texts: list[str]) -> None:
    """The tenant's memories through the public API, unless the schema holds them already."""
    import memcommit

    with memcommit.open(url) as store:
        if store.head_seq:
            return
        start = time.perf_counter()
        for first in range(0, len(texts), BATCH):
            with store.commit(message=f"bulk {first}", now=NOW) as tx:
                for text in texts[first : first + BATCH]:
                    tx.add(text, tenant=TENANT)
        print(f"  stored {len(texts):,} memories in {time.perf_counter() - start:.0f} s")


def first_recall(url: str, query: str, directory: Path) -> dict:
    """Open + first recall in a fresh process whose index directory is ``directory``."""
    code = (
        "import json, sys, time\n"
        "from datetime import datetime, timezone\n"
        "start = time.perf_counter()\n"
        "import memcommit\n"
        "from memcommit.recall.index.live import store_index\n"
        "store = memcommit.open(sys.argv[1])\n"
        "store.recall(sys.argv[2], tenant=sys.argv[3], max_records=10,\n"
        "             now=datetime(2026, 11, 1, tzinfo=timezone.utc))\n"
        "took = time.perf_counter() - start\n"
        "print(json.dumps({'seconds': took, 'opened': store_index(store).opened[sys.argv[3]]}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, url, query, TENANT],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "MEMCOMMIT_INDEX_DIR": str(directory)},
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def commit_elsewhere(url: str, texts: list[str]) -> None:
    """1,000 memories committed by another host."""
    import memcommit

    with memcommit.open(url) as store, store.commit(message="elsewhere") as tx:
        for text in texts[:1_000]:
            tx.add(text, tenant=TENANT)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--url", default=DEFAULT_URL, help="a PostgreSQL database URL")
    parser.add_argument("--runs", type=int, default=3, help="new hosts per figure")
    args = parser.parse_args()
    compile_memcommit()
    url = f"{args.url}?schema=recall_bench_{args.memories}"
    texts = corpus(args.memories)
    qs = queries(texts, args.runs)
    print(f"{args.memories:,} memories of one tenant in PostgreSQL ({url})", flush=True)
    build(url, texts)
    work = Path(tempfile.mkdtemp(prefix="recall-pg-bench-"))
    builds, opens, catches, size = [], [], [], 0
    try:
        for run, query in enumerate(qs):
            host = work / f"host-{run}"
            built = first_recall(url, query, host)
            assert built["opened"].startswith("built"), built
            builds.append(built["seconds"])
            (snapshot,) = host.rglob("*.idx")
            size = snapshot.stat().st_size
            shutil.copytree(host, work / f"copy-{run}")
            shutil.copytree(host, work / f"behind-{run}")
            opened = first_recall(url, query, work / f"copy-{run}")
            assert opened["opened"] == "loaded, caught up 0 memories", opened
            opens.append(opened["seconds"])
        commit_elsewhere(url, texts)  # the schema keeps them: it grows by 1,000 a run
        for run, query in enumerate(qs):
            caught = first_recall(url, query, work / f"behind-{run}")
            assert caught["opened"] == "loaded, caught up 1000 memories", caught
            catches.append(caught["seconds"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\nnew host, first recall (open + recall, fresh process), median of {args.runs}:")
    print(f"  no snapshot (builds from PostgreSQL):     {statistics.median(builds):7.2f} s")
    print(f"  snapshot copied from another host:        {statistics.median(opens):7.2f} s")
    print(f"  same, 1,000 memories committed since:     {statistics.median(catches):7.2f} s")
    print(f"  snapshot size: {size / 2**20:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
