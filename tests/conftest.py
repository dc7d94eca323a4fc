"""Fixtures shared by every test package."""

from __future__ import annotations

import functools
import importlib.util
import os
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests check invariants, never speed: no deadline on these small, shared machines.
settings.register_profile("memcommit", deadline=None)
settings.load_profile("memcommit")

FIXED_NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def recall_snapshots(tmp_path_factory, monkeypatch):
    """Recall's index snapshots go under this test's own directory, never the user's cache.

    Every tenant keeps a snapshot, however small (`live.SNAPSHOT_MIN` is 1 here),
    so the tests of snapshots, their checks and their erasure run on the small
    stores tests make; tests/recall/test_recall_cache.py holds the real threshold.
    """
    directory = tmp_path_factory.mktemp("recall-snapshots")
    monkeypatch.setenv("MEMCOMMIT_INDEX_DIR", str(directory))
    live = importlib.import_module("memcommit.recall.index.live")
    monkeypatch.setattr(live, "SNAPSHOT_MIN", 1)
    return directory


@pytest.fixture(autouse=True)
def few_partitions(monkeypatch):
    """PostgreSQL stores the tests create get 4 partitions, not 64: creating 128 tables
    costs seconds a store, and the suite makes hundreds (the partition tests ask for 64)."""
    schema = importlib.import_module("memcommit.store.backends.postgres_schema")
    monkeypatch.setattr(schema, "PARTITIONS", 4)


@pytest.fixture
def now() -> datetime:
    """A fixed, timezone-aware "now": tests inject time instead of reading the clock."""
    return FIXED_NOW


POSTGRES_URL = os.environ.get(
    "MEMCOMMIT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
)


@functools.cache
def _postgres_down() -> str | None:
    """Why the test PostgreSQL server cannot be used, or None when it can (asked once)."""
    try:
        import psycopg

        psycopg.connect(POSTGRES_URL, connect_timeout=3).close()
    except Exception as exc:  # a missing driver or a refused connection: both mean "skip"
        return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc) else ''}"
    return None


def postgres_url() -> str:
    """The test server's URL; skips (fails under MEMCOMMIT_REQUIRE_POSTGRES=1) if unreachable."""
    reason = _postgres_down()
    if reason is not None:
        message = f"PostgreSQL at {POSTGRES_URL} is not usable ({reason})"
        if os.environ.get("MEMCOMMIT_REQUIRE_POSTGRES") == "1":
            pytest.fail(message + " and MEMCOMMIT_REQUIRE_POSTGRES=1")
        pytest.skip(message + "; set MEMCOMMIT_TEST_POSTGRES to run these")
    return POSTGRES_URL


def drop_schemas(schemas) -> None:
    """Drop test schemas (and everything in them) from the test server."""
    import psycopg

    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        for schema in schemas:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture(scope="session")
def postgres_server() -> str:
    """The test PostgreSQL server's URL, for PostgreSQL-only tests (skips if unreachable)."""
    return postgres_url()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_backend(request) -> str:
    """Which backend a store test runs on: every store test runs on both."""
    if request.param == "postgres":
        postgres_url()
    return request.param


@pytest.fixture
def make_store(tmp_path, store_backend):
    """Open fresh stores on the test's backend; call it as ``make_store(name, **options)``.

    SQLite: files in tmp_path. PostgreSQL: one new schema per name, dropped after
    the test. The same name opens the same store again.
    """
    import memcommit

    opened = []
    schemas: dict[str, str] = {}

    def make(name: str = "store.db", **options):
        if store_backend == "sqlite":
            target = tmp_path / name
        else:
            schema = schemas.setdefault(name, f"test_{uuid.uuid4().hex[:16]}")
            target, options = POSTGRES_URL, {"schema": schema, **options}
        store = memcommit.open(target, **options)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()
    if schemas:
        drop_schemas(schemas.values())


@pytest.fixture
def store_target(tmp_path, store_backend):
    """``(target, options)`` of a fresh store on the test's backend, for another process to open.

    SQLite: a file in tmp_path. PostgreSQL: a new schema, dropped after the test.
    """
    if store_backend == "sqlite":
        yield str(tmp_path / "store.db"), {}
        return
    schema = f"test_{uuid.uuid4().hex[:16]}"
    yield POSTGRES_URL, {"schema": schema}
    drop_schemas([schema])


def pytest_terminal_summary(terminalreporter):
    """Print every upstream test left out of the framework suites, with its reason."""
    path = Path(__file__).parent / "integrations" / "deselected.py"
    spec = importlib.util.spec_from_file_location("upstream_deselected", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    terminalreporter.section("upstream tests deselected (tests/integrations/deselected.py)")
    for suite, names in module.ALL.items():
        for name, reason in names.items():
            terminalreporter.write_line(f"{suite}::{name}: {reason}")
