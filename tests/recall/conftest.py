"""Fixtures of the recall tests: the teaching bank in a real store of each backend."""

from __future__ import annotations

import pytest
from recall_bank import fill_bank

from memcommit.recall import Context, recall


@pytest.fixture
def bank(make_store, now):
    """The teaching bank in a fresh store, on each backend (SQLite file, PostgreSQL schema)."""
    return fill_bank(make_store("bank.db"), now)


@pytest.fixture
def seed(bank, now):
    """``recall`` as the seed's workbench runs it: Team A, TF-IDF, fixed now."""

    def run(query: str, **kw) -> Context:
        kw.setdefault("tenant", "team-a")
        kw.setdefault("scorer", "tfidf")
        kw.setdefault("now", now)
        # the workbench's "Keep latest fact per key" checkbox starts unchecked
        kw.setdefault("latest_per_key", False)
        return recall(bank, query, **kw)

    return run
