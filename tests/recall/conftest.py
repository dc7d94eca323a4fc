"""Fixtures of the recall tests: the teaching bank in a real SQLite file."""

from __future__ import annotations

import pytest
from recall_bank import build_bank

from memcommit.recall import Context, recall


@pytest.fixture
def bank(tmp_path, now):
    """The teaching bank in a fresh SQLite file."""
    store = build_bank(str(tmp_path / "bank.db"), now)
    yield store
    store.close()


@pytest.fixture
def seed(bank, now):
    """``recall`` as the seed's workbench runs it: Team A, TF-IDF, fixed now."""

    def run(query: str, **kw) -> Context:
        kw.setdefault("tenant", "team-a")
        kw.setdefault("scorer", "tfidf")
        kw.setdefault("now", now)
        return recall(bank, query, **kw)

    return run
