"""langgraph-checkpoint's own store tests, with its ``InMemoryStore`` pointing at memcommit.

Every ``InMemoryStore(...)`` their tests make is a MemcommitStore over a fresh
memcommit store on the test's backend (their async batching wrapper included).
"""

from __future__ import annotations

import pytest
from deselected import LANGGRAPH_STORE, VERSIONS
from upstream import adopt, require, suite

require("pytest_mock")
MemcommitStore = require("memcommit.integrations.langgraph").MemcommitStore

PACKAGE = "langgraph-checkpoint"
theirs = suite(PACKAGE, VERSIONS[PACKAGE], "test_store")
adopt(theirs, globals(), deselect=LANGGRAPH_STORE)

_opener: list = []


class InMemoryStore(MemcommitStore):
    """What their tests call InMemoryStore: a MemcommitStore on the test's backend."""

    def __init__(self, *, index=None, ttl=None) -> None:
        super().__init__(**_opener[-1](), index=index, ttl=ttl)


@pytest.fixture(autouse=True)
def _point_at_memcommit(open_store, monkeypatch):
    _opener.append(open_store)
    monkeypatch.setattr(theirs, "InMemoryStore", InMemoryStore)
    yield
    _opener.pop()
