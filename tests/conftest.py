"""Fixtures shared by every test package."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

FIXED_NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def now() -> datetime:
    """A fixed, timezone-aware "now": tests inject time instead of reading the clock."""
    return FIXED_NOW


@pytest.fixture
def make_store(tmp_path):
    """Open fresh stores (SQLite files in tmp_path); call it as ``make_store(name, **options)``.

    Backend suites parametrize this fixture; store tests use it through ``store``.
    """
    import memcommit

    opened = []

    def make(name: str = "store.db", **options):
        store = memcommit.open(tmp_path / name, **options)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()
