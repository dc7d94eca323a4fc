"""What the hash chain costs: commits with hashing beside the same commits without, and verify.

    python benchmarks/chain_bench.py                       # both backends, the issue's sizes
    python benchmarks/chain_bench.py --versions 1000000    # verify() over a million versions
    python benchmarks/chain_bench.py --backends sqlite --singles 50 --versions 20000  # a quick look

"Without hashing" runs the very same write path with the hashing taken out:
the version encoder's canonical texts and two SHA-256 (body and digest), the
commit's hasher and the salts are swapped for constants, so the rows keep their
shape and columns and only the hashing is missing. The runs alternate, so machine load hits both
alike; figures are medians of ``--runs``. Targets (issue 27): a single-memory
commit with hashing at most 1.15x the cost without, a 10,000-memory commit at
most 1.2x, and verify() over 1M versions within 30 s.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import memcommit
from memcommit.store.backends import seals, sql

POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"
ZERO = "0" * 64


class _NoSha:
    def __init__(self, data: bytes) -> None:
        pass

    def hexdigest(self) -> str:
        return ZERO


class _NoHashing(seals.Encoders):
    """The encoders with no canonical text built and no SHA-256 run (`sql.Rows` inlines both)."""

    def __init__(self, columns: Any, *, times_are_text: bool) -> None:
        super().__init__(columns, times_are_text=times_are_text)
        self.body = self.head = self.typed_head = '""'
        self.namespace = {**seals.Encoders.namespace, "sha": _NoSha}
        self.body_hash = lambda *values: ZERO
        self.version_digest = lambda *values: ZERO


class _NoSealer:
    def __init__(self, header: bytes) -> None:
        self.hash = ZERO

    def add(self, digest: str) -> None:
        pass


@contextmanager
def hashing(on: bool) -> Iterator[None]:
    """The write path as it is (``on``), or with every hash swapped for a constant."""
    if on:
        yield
        return
    from memcommit.store.backends.postgres import PostgresBackend
    from memcommit.store.backends.sqlite import SQLiteBackend

    saved = (SQLiteBackend.rows, PostgresBackend.rows, seals.Sealer, seals.salts)
    encoders, seals.Encoders = seals.Encoders, _NoHashing  # type: ignore[misc]
    try:
        SQLiteBackend.rows = sql.Rows(SQLiteBackend.dialect)
        PostgresBackend.rows = sql.Rows(PostgresBackend.dialect)
    finally:
        seals.Encoders = encoders  # type: ignore[misc]
    seals.Sealer = _NoSealer  # type: ignore[assignment,misc]
    seals.salts = lambda n: ["0" * 32] * n
    try:
        yield
    finally:
        SQLiteBackend.rows, PostgresBackend.rows, seals.Sealer, seals.salts = saved


class Target:
    """Fresh stores of one backend (SQLite files in a folder, or PostgreSQL schemas)."""

    def __init__(self, name: str, folder: Path) -> None:
        self.name, self.folder, self.schemas = name, folder, []

    def open(self) -> Any:
        if self.name == "sqlite":
            return memcommit.open(self.folder / f"{uuid.uuid4().hex}.db")
        schema = f"bench_{uuid.uuid4().hex[:12]}"
        self.schemas.append(schema)
        return memcommit.open(POSTGRES, schema=schema)

    def drop(self) -> None:
        if self.schemas:
            import psycopg

            with psycopg.connect(POSTGRES, autocommit=True) as conn:
                for schema in self.schemas:
                    conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def text(i: int) -> str:
    return f"memory {i}: the agent noted that item {i % 977} relates to topic {i % 31}"


def singles(target: Target, n: int) -> float:
    """Median seconds of one commit adding one memory, over ``n`` commits."""
    took = []
    with target.open() as store:
        for i in range(n):
            started = time.perf_counter()
            with store.commit(message="one") as tx:
                tx.add(text(i), tags=["bench"], metadata={"i": i})
            took.append(time.perf_counter() - started)
    return statistics.median(took)


def bulk(target: Target, n: int) -> float:
    """Seconds of one commit adding ``n`` memories."""
    with target.open() as store:
        started = time.perf_counter()
        with store.commit(message="bulk") as tx:
            for i in range(n):
                tx.add(text(i), tags=["bench"])
        return time.perf_counter() - started


def paired(runs: int, work: Callable[[], float]) -> tuple[float, float]:
    """Median of ``work`` with hashing and without, alternating the two."""
    on, off = [], []
    for _ in range(runs):
        with hashing(True):
            on.append(work())
        with hashing(False):
            off.append(work())
    return statistics.median(on), statistics.median(off)


def verify_rate(target: Target, versions: int) -> tuple[float, int]:
    """(seconds, versions) of a full verify() over a store of ``versions`` versions."""
    with target.open() as store:
        step = 10_000
        for start in range(0, versions, step):
            with store.commit(message="fill") as tx:
                for i in range(start, min(versions, start + step)):
                    tx.add(text(i))
        started = time.perf_counter()
        report = store.verify()
        took = time.perf_counter() - started
        assert report.ok, report.problems
        return took, report.versions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--singles", type=int, default=200, help="commits per single-commit run")
    parser.add_argument("--bulk", type=int, default=10_000, help="memories of the bulk commit")
    parser.add_argument("--versions", type=int, default=100_000, help="versions verify() walks")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for name in args.backends.split(","):
            target = Target(name, Path(folder))
            try:
                on, off = paired(args.runs, lambda: singles(target, args.singles))  # noqa: B023
                print(
                    f"{name}: single commit {on * 1e3:.3f} ms with hashing,"
                    f" {off * 1e3:.3f} ms without: {on / off:.3f}x (target <= 1.15x)"
                )
                on, off = paired(args.runs, lambda: bulk(target, args.bulk))  # noqa: B023
                print(
                    f"{name}: {args.bulk:,}-memory commit {on:.3f} s with hashing,"
                    f" {off:.3f} s without: {on / off:.3f}x (target <= 1.2x)"
                )
                took, walked = verify_rate(target, args.versions)
                print(
                    f"{name}: verify() over {walked:,} versions in {took:.2f} s:"
                    f" {walked / took:,.0f} versions/s"
                    f" (1M at this rate: {1e6 / (walked / took):.1f} s; target <= 30 s)"
                )
            finally:
                target.drop()


if __name__ == "__main__":
    main()
