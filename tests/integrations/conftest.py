"""Fixtures of the integration tests: stores opened by path on both backends; deselections.

The list of deselected upstream tests is printed by the root conftest, which
pytest-xdist's controller loads (it never loads this one).
"""

from __future__ import annotations

import uuid

import pytest


@pytest.fixture(scope="session")
def shared_postgres(postgres_server):
    """One PostgreSQL store (a schema of its own) per test process, dropped at the end."""
    import psycopg

    import memcommit

    schema = f"test_{uuid.uuid4().hex[:16]}"
    store = memcommit.open(postgres_server, schema=schema)
    yield store
    store.close()
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
def open_store(request, store_backend, tmp_path):
    """``open_store(path)``: {"store", "tenant"} for a fresh memcommit memory on this backend.

    Upstream suites open stores by path (":memory:" or a temporary file). Each
    ":memory:" is a new memory; the same other path reaches the same one again.
    SQLite: a file per path in tmp_path. PostgreSQL: a new tenant per path in one
    store per process (tenants are memcommit's hard isolation, and a tenant costs
    nothing to make, where a schema costs a migration).
    """
    import memcommit

    names: dict[str, str] = {}
    opened: list = []

    def open_(path: str = ":memory:") -> dict:
        fresh = uuid.uuid4().hex
        name = fresh if str(path) == ":memory:" else names.setdefault(str(path), fresh)
        if store_backend == "postgres":
            return {"store": request.getfixturevalue("shared_postgres"), "tenant": name}
        store = memcommit.open(tmp_path / f"{name}.db")
        opened.append(store)
        return {"store": store, "tenant": "default"}

    yield open_
    for store in opened:
        store.close()


@pytest.fixture
def before_commit(monkeypatch):
    """``before_commit(adapter, write)``: ``write()`` runs once, as the adapter's next commit opens.

    A forced interleaving: another writer (a second `Store` on the same target)
    lands its commit after whatever the adapter read before its own commit, so a
    write built on that read is stale. The class's ``_commit`` is wrapped (some
    adapters are pydantic models, which take no new instance attributes) and
    restored before ``write`` runs, so ``write`` may use the same adapter class.
    """

    def arrange(adapter, write) -> None:
        cls = type(adapter)
        opened = cls._commit

        def commit(self, *args, **kwargs):
            if self is adapter:
                monkeypatch.setattr(cls, "_commit", opened)
                write()
            return opened(self, *args, **kwargs)

        monkeypatch.setattr(cls, "_commit", commit)

    return arrange


def pytest_collection_modifyitems(config, items):
    """Deselect the upstream tests named in `deselected` (each has its reason there)."""
    keep, drop = [], []
    for item in items:
        module = getattr(item, "module", None)
        names = getattr(module, "_upstream_deselected", {})
        name = getattr(item, "originalname", item.name)
        if getattr(item, "cls", None) is not None:
            name = f"{item.cls.__name__}.{name}"
        (drop if name in names else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
