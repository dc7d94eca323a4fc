"""langgraph-checkpoint-sqlite's own store tests, run against MemcommitStore on both backends.

Their ``store`` fixture is replaced by ours, and the names their tests open stores
through (``SqliteStore``, ``create_vector_store``) point at memcommit.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from deselected import LANGGRAPH_SQLITE_STORE, VERSIONS
from upstream import adopt, require, suite

MemcommitStore = require("memcommit.integrations.langgraph").MemcommitStore
require("langgraph.store.sqlite")  # their test module imports the reference store

PACKAGE = "langgraph-checkpoint-sqlite"
theirs = suite(PACKAGE, VERSIONS[PACKAGE], "test_store")
adopt(theirs, globals(), deselect=LANGGRAPH_SQLITE_STORE)

_opener: list = []


def _index(index):
    """SqliteStore names the embedded fields "text_fields"; LangGraph's IndexConfig "fields"."""
    if index is None:
        return None
    index = dict(index)
    index["fields"] = index.pop("text_fields", None) or index.get("fields")
    return index


class SqliteStore:
    """What their tests call SqliteStore: memcommit stores on the test's backend."""

    @staticmethod
    @contextmanager
    def from_conn_string(conn_string, *, index=None, **_):
        yield MemcommitStore(**_opener[-1](conn_string), index=_index(index))


@pytest.fixture(autouse=True)
def _point_at_memcommit(open_store, monkeypatch):
    _opener.append(open_store)
    monkeypatch.setattr(theirs, "SqliteStore", SqliteStore)
    yield
    _opener.pop()


@pytest.fixture
def store(open_store):
    """Their ``store`` fixture, on memcommit."""
    return MemcommitStore(**open_store())
