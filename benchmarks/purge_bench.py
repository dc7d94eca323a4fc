"""How long a purge in one tenant stalls a writer in another, before and after, on both backends.

    python benchmarks/purge_bench.py --before /work/main/src        # 1M memories, 1,000 tenants
    python benchmarks/purge_bench.py --memories 100000 --tenants 100 --runs 1   # a quick look
    python benchmarks/purge_bench.py --backend postgres --purged-writer          # + its own writer

A store of ``--memories`` memories over ``--tenants`` tenants is built once through
the public API (one bulk commit per tenant) and kept under ``--cache`` (SQLite: a
file, copied afresh for every run; PostgreSQL: a schema in the test database,
named by its size). Each run starts a writer process committing one memory at a
time in another tenant, and ``--readers`` processes reading that tenant (the load
that holds a SQLite checkpoint back), then purges one memory of the first tenant
through that tenant's ``commit()`` (the purge's scrub included); ``--purged-writer``
adds a writer in the purged tenant, whose commits wait for its partition's
rewrite (they must not hold the other writer back). It prints:

- the writer's longest commit among those that overlapped the purge (its stall),
- the writer's median commit over the whole run,
- the purge's own time.

The peer is today's code: ``--before SRC`` runs the same measurement with
``PYTHONPATH=SRC`` in the same run, on the same data (PostgreSQL: the store built
by that code, at its layout; the code under test gets a copy of it, upgraded by
opening it, and the upgrade's time is printed). Figures are medians of ``--runs``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
DEFAULT_PG = os.environ.get("MEMCOMMIT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
WORDS = [
    *("river", "budget", "meeting", "invoice", "garden", "printer", "ticket", "travel"),
    *("doctor", "laptop", "recipe", "concert", "flight", "hotel", "contract", "deadline"),
    *("server", "backup", "account", "report"),
]


def text(i: int) -> str:
    """A deterministic memory of about 100 bytes, unique by ``i``."""
    picks = " ".join(WORDS[(i * k) % len(WORDS)] for k in (3, 7, 11, 13, 17))
    return f"note {i}: the user mentioned {picks} while planning item {i % 977}"


def tenant_name(i: int) -> str:
    return f"tenant-{i:05d}"


def target(backend: str, args: argparse.Namespace, side: str) -> str:
    """Where the measured store lives for ``side`` ('base' is the built one)."""
    if backend == "sqlite":
        name = "built" if side == "base" else f"work-{side}"
        return str(Path(args.cache) / f"purge-{args.memories}-{args.tenants}-{name}.db")
    schema = f"purge_bench_{args.memories}_{args.tenants}_{side}"
    return f"{args.pg}?schema={schema}"


# -- building the store ----------------------------------------------------------------


def build(url: str, memories: int, tenants: int) -> None:
    """Write the store through the public API, one bulk commit per tenant; resumes."""
    import memcommit

    per = memories // tenants
    with memcommit.open(url) as store:
        done = len(store.tenants())
        for t in range(done, tenants):
            with store.commit(message=f"load {tenant_name(t)}", author="bench") as tx:
                for i in range(t * per, (t + 1) * per):
                    tx.add(text(i), tenant=tenant_name(t))
            if t % 50 == 0:
                print(f"  built {t + 1}/{tenants} tenants", file=sys.stderr, flush=True)


def ensure_built(backend: str, args: argparse.Namespace) -> None:
    """Build the base store with the oldest code measured (its layout is today's)."""
    src = args.before or str(HERE.parents[1] / "src")
    url = target(backend, args, "base")
    if backend == "sqlite" and Path(url).exists() and not Path(url + ".partial").exists():
        return
    if backend == "sqlite":
        Path(url + ".partial").touch()
    started = time.perf_counter()
    child(src, ["_build", url, str(args.memories), str(args.tenants)])
    if backend == "sqlite":
        Path(url + ".partial").unlink()
    print(f"built {url} in {time.perf_counter() - started:.0f} s", file=sys.stderr)


def clone_schema(url: str, base: str, copy: str) -> None:
    """A copy of PostgreSQL schema ``base`` as ``copy`` (tables, rows, indexes, keys), its
    partitioned tables partitioned alike (``LIKE`` alone would make them plain tables)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (copy,)).fetchone():
            return
        tables = [  # plain and partitioned tables, not the partitions (made with their parent)
            name
            for (name,) in conn.execute(
                "SELECT c.relname FROM pg_class c WHERE c.relnamespace = %s::regnamespace"
                " AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY c.relname",
                (base,),
            )
        ]
        keys_of = dict(
            conn.execute(
                "SELECT c.relname, pg_get_partkeydef(c.oid) FROM pg_class c"
                " WHERE c.relnamespace = %s::regnamespace AND c.relkind = 'p'",
                (base,),
            ).fetchall()
        )
        parts = conn.execute(
            "SELECT p.relname, c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i"
            " JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent"
            " WHERE p.relnamespace = %s::regnamespace AND c.relkind IN ('r', 'p')"
            " ORDER BY c.relname",
            (base,),
        ).fetchall()
        keys = conn.execute(
            "SELECT c.relname, pg_get_constraintdef(k.oid) FROM pg_constraint k"
            " JOIN pg_class c ON c.oid = k.conrelid"
            " WHERE k.connamespace = %s::regnamespace AND k.contype = 'f'",
            (base,),
        ).fetchall()
        with conn.transaction():
            conn.execute(f'CREATE SCHEMA "{copy}"')
            for name in tables:
                like = f'(LIKE "{base}"."{name}" INCLUDING ALL)'
                key = f" PARTITION BY {keys_of[name]}" if name in keys_of else ""
                conn.execute(f'CREATE TABLE "{copy}"."{name}" {like}{key}')
            for parent, child, bound in parts:
                conn.execute(
                    f'CREATE TABLE "{copy}"."{child}" PARTITION OF "{copy}"."{parent}" {bound}'
                )
            for name in tables:
                conn.execute(f'INSERT INTO "{copy}"."{name}" SELECT * FROM "{base}"."{name}"')
            conn.execute(f'SET LOCAL search_path TO "{copy}"')
            for name, definition in keys:
                conn.execute(f'ALTER TABLE "{name}" ADD {definition}')


def prepare(backend: str, args: argparse.Namespace, side: str, src: str) -> tuple[str, float]:
    """The store ``side`` measures, and the seconds its first open took (the upgrade, if any)."""
    base, url = target(backend, args, "base"), target(backend, args, side)
    if backend == "sqlite":
        for suffix in ("", "-wal", "-shm"):
            Path(url + suffix).unlink(missing_ok=True)
        shutil.copyfile(base, url)
    elif side == "before":
        return base, 0.0
    else:
        clone_schema(args.pg, base.split("schema=")[1], url.split("schema=")[1])
    return url, json.loads(child(src, ["_open", url]))["seconds"]


# -- one measurement -------------------------------------------------------------------


def writer(url: str, tenant: str, writes: str) -> None:
    """Commit through ``tenant``'s view until stdin closes; print every (start, seconds).

    ``writes`` is "add" (each commit adds a memory: inserts only) or "edit" (each
    commit also edits the memory the one before added: a read and a close by id
    and tenant).
    """
    import threading

    import memcommit

    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    samples = []
    with memcommit.open(url) as store:
        view = store.tenant(tenant)
        i, last = 0, None
        while not stop.is_set():
            started = time.monotonic()
            with view.commit(message="write", author="writer") as tx:
                if last is not None and writes == "edit":
                    tx.update(last, content=f"writer note {i - 1}, edited")
                last = tx.add(f"writer note {i} {time.time()}").id
            samples.append((started, time.monotonic() - started))
            i += 1
            if i == 20:
                print("ready", flush=True)
    print(json.dumps(samples), flush=True)


def reader(url: str, tenant: str, writes: str) -> None:
    """Read ``tenant`` in a loop until stdin closes (short read transactions, as recall has)."""
    import threading

    import memcommit

    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    with memcommit.open(url) as store:
        print("ready", flush=True)
        while not stop.is_set():
            store.find(tenant=tenant, limit=200)
    print("[]", flush=True)


def measure(
    url: str, tenant: int, readers: int, settle: float, writes: str, purged_writer: bool
) -> dict[str, Any]:
    """Start the writer and readers on ``tenant`` (and a writer in tenant 0 with
    ``purged_writer``), purge one memory of tenant 0, report the first writer's stall."""
    import memcommit
    import memcommit.recall  # the purge hook's first use must not time an import

    env = dict(os.environ)
    roles = [("_writer", tenant)] + [("_reader", tenant)] * readers
    if purged_writer:  # the purged tenant's own agent goes on writing: it waits for the scrub
        roles.append(("_writer", 0))
    workers = [
        subprocess.Popen(
            [sys.executable, str(HERE), role, url, tenant_name(which), writes],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for role, which in roles
    ]
    for worker in workers:
        assert worker.stdout is not None
        assert worker.stdout.readline().strip() == "ready"
    with memcommit.open(url) as store:
        victim = store.find(tenant=tenant_name(0), limit=1)[0].id
        time.sleep(settle)
        started = time.monotonic()
        with store.tenant(tenant_name(0)).commit(message="purge", author="bench") as tx:
            tx.purge(victim)  # by its tenant, as a service serving tenants would
        ended = time.monotonic()
        time.sleep(settle)
    outputs = [worker.communicate("")[0] for worker in workers]
    samples = json.loads(outputs[0].strip().splitlines()[-1])
    overlapping = [s for start, s in samples if start < ended and start + s > started]
    return {
        "stall_ms": 1000 * max(overlapping, default=0.0),
        "median_ms": 1000 * statistics.median(s for _, s in samples),
        "purge_ms": 1000 * (ended - started),
        "commits": len(samples),
    }


def child(src: str, argv: list[str]) -> str:
    """Run this script's ``argv`` with ``PYTHONPATH=src``; its stdout."""
    env = {**os.environ, "PYTHONPATH": src}
    done = subprocess.run(
        [sys.executable, str(HERE), *argv], env=env, stdout=subprocess.PIPE, text=True, check=True
    )
    return done.stdout


def opened(url: str) -> None:
    """Open ``url`` read-write (applying the migrations it lacks) and print how long it took."""
    import memcommit

    started = time.perf_counter()
    memcommit.open(url).close()
    print(json.dumps({"seconds": time.perf_counter() - started}))


# -- the report ------------------------------------------------------------------------


def run_side(backend: str, args: argparse.Namespace, side: str, src: str) -> dict[str, Any]:
    runs = []
    upgrade = 0.0
    for _ in range(args.runs):
        url, seconds = prepare(backend, args, side, src)
        upgrade = max(upgrade, seconds)
        argv = ["_measure", url, str(args.writer_tenant), str(args.readers), str(args.settle)]
        argv += [args.writes, "purged-writer" if args.purged_writer else "-"]
        runs.append(json.loads(child(src, argv).strip().splitlines()[-1]))
    out = {k: statistics.median(r[k] for r in runs) for k in ("stall_ms", "median_ms", "purge_ms")}
    out["stalls"] = [round(r["stall_ms"]) for r in runs]
    out["upgrade_s"] = upgrade
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--tenants", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--readers", type=int, default=1)
    parser.add_argument("--writes", choices=("add", "edit"), default="add", help="see writer()")
    parser.add_argument(
        "--writer-tenant",
        type=int,
        default=1,
        help="which tenant the writer and readers use (the purge is in tenant 0)",
    )
    parser.add_argument(
        "--purged-writer",
        action="store_true",
        help="also a writer in the purged tenant (it waits for the rewrite of its partition)",
    )
    parser.add_argument("--settle", type=float, default=1.0, help="seconds before and after")
    parser.add_argument("--before", help="src folder of the code to compare with (today's main)")
    parser.add_argument("--pg", default=DEFAULT_PG)
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "memcommit-bench"))
    args = parser.parse_args()
    Path(args.cache).mkdir(parents=True, exist_ok=True)
    mine = str(HERE.parents[1] / "src")
    sides = ([("before", args.before)] if args.before else []) + [("after", mine)]
    backends = ("sqlite", "postgres") if args.backend == "both" else (args.backend,)
    print(
        f"purge of one memory, {args.memories:,} memories over {args.tenants:,} tenants,"
        f" a writer ({args.writes}) and {args.readers} reader(s)"
        f" in {tenant_name(args.writer_tenant)}"
        + (f", a writer in {tenant_name(0)}" if args.purged_writer else "")
        + f"; medians of {args.runs}"
    )
    print(f"{'backend':10} {'code':7} {'stall ms':>9} {'median ms':>10} {'purge ms':>9}  stalls")
    for backend in backends:
        ensure_built(backend, args)
        results = {side: run_side(backend, args, side, src) for side, src in sides}
        for side, r in results.items():
            extra = f"  (first open {r['upgrade_s']:.1f} s)" if r["upgrade_s"] else ""
            print(
                f"{backend:10} {side:7} {r['stall_ms']:9.1f} {r['median_ms']:10.2f}"
                f" {r['purge_ms']:9.0f}  {r['stalls']}{extra}"
            )
        if "before" in results:
            b, a = results["before"], results["after"]
            print(f"{backend:10} stall after/before {a['stall_ms'] / max(b['stall_ms'], 1e-9):.3f}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1].startswith("_"):
        role, rest = sys.argv[1], sys.argv[2:]
        if role == "_build":
            build(rest[0], int(rest[1]), int(rest[2]))
        elif role == "_writer":
            writer(*rest)
        elif role == "_reader":
            reader(*rest)
        elif role == "_open":
            opened(rest[0])
        elif role == "_measure":
            url, tenant, readers, settle, writes = rest[:5]
            purged = rest[5:] == ["purged-writer"]
            result = measure(url, int(tenant), int(readers), float(settle), writes, purged)
            print(json.dumps(result))
    else:
        main()
