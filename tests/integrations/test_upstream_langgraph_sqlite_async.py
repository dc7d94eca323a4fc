"""langgraph-checkpoint-sqlite's async store tests, run against AsyncMemcommitStore.

Their ``store`` fixture is replaced by ours, and ``AsyncSqliteStore`` (through
which their other tests open stores) points at memcommit, on both backends.
"""

from __future__ import annotations

from contextlib import asynccontextmanager

import pytest
from deselected import LANGGRAPH_SQLITE_ASYNC_STORE, VERSIONS
from upstream import adopt, require, suite

pytest_asyncio = require("pytest_asyncio")
require("langgraph.store.sqlite")  # their test module imports the reference store
AsyncMemcommitStore = require("memcommit.integrations.langgraph").AsyncMemcommitStore

PACKAGE = "langgraph-checkpoint-sqlite"
theirs = suite(PACKAGE, VERSIONS[PACKAGE], "test_async_store")
adopt(theirs, globals(), deselect=LANGGRAPH_SQLITE_ASYNC_STORE)

_opener: list = []


def _index(index):
    """SqliteStore names the embedded fields "text_fields"; LangGraph's IndexConfig "fields"."""
    if index is None:
        return None
    index = dict(index)
    index["fields"] = index.pop("text_fields", None) or index.get("fields")
    return index


class AsyncSqliteStore:
    """What their tests call AsyncSqliteStore: memcommit stores on the test's backend."""

    @staticmethod
    @asynccontextmanager
    async def from_conn_string(conn_string, *, index=None, **_):
        yield AsyncMemcommitStore(**_opener[-1](conn_string), index=_index(index))


@pytest.fixture(autouse=True)
def _point_at_memcommit(open_store, monkeypatch):
    _opener.append(open_store)
    monkeypatch.setattr(theirs, "AsyncSqliteStore", AsyncSqliteStore)
    yield
    _opener.pop()


@pytest_asyncio.fixture
async def store(open_store):
    """Their ``store`` fixture, on memcommit (made inside the test's event loop)."""
    return AsyncMemcommitStore(**open_store())
