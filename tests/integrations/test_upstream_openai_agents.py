"""openai-agents' own session tests (tests/memory/test_session.py), against MemcommitSession.

``SQLiteSession(session_id, db_path, ...)``, through which their tests make every
session, makes a MemcommitSession on the test's backend: the same ``db_path``
reaches the same memory, as it reaches the same SQLite file for theirs.
"""

from __future__ import annotations

import pytest
from deselected import OPENAI_AGENTS_SESSION, VERSIONS
from upstream import adopt, require, suite

agents = require("agents")
MemcommitSession = require("memcommit.integrations.openai_agents").MemcommitSession

PACKAGE = "openai-agents"
theirs = suite(PACKAGE, VERSIONS[PACKAGE], "memory.test_session")
adopt(theirs, globals(), deselect=OPENAI_AGENTS_SESSION)

_opener: list = []


class SQLiteSession(MemcommitSession):
    """What their tests call SQLiteSession: a MemcommitSession on the test's backend."""

    def __init__(
        self, session_id, db_path=":memory:", sessions_table=None, messages_table=None, **kw
    ) -> None:
        super().__init__(session_id, **_opener[-1](db_path), **kw)


@pytest.fixture(autouse=True)
def _point_at_memcommit(open_store, monkeypatch):
    _opener.append(open_store)
    monkeypatch.setattr(theirs, "SQLiteSession", SQLiteSession)
    agents.set_tracing_disabled(True)
    yield
    _opener.pop()
