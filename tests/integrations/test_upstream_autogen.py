"""autogen-core's own memory tests (tests/test_memory.py of its sdist), against MemcommitMemory.

Their tests make every memory through ``ListMemory(...)``, AutoGen's chronological
list; here that name makes a MemcommitMemory on the test's backend with
``chronological=True`` and no cap: recall counts every memory as relevant, so it
returns them all, oldest first, as ListMemory does.
"""

from __future__ import annotations

import pytest
from deselected import AUTOGEN_MEMORY, VERSIONS
from upstream import adopt, require, suite

MemcommitMemory = require("memcommit.integrations.autogen").MemcommitMemory

PACKAGE = "autogen-core"
theirs = suite(PACKAGE, VERSIONS[PACKAGE], "test_memory")
adopt(theirs, globals(), deselect=AUTOGEN_MEMORY)

_opener: list = []


class ListMemory(MemcommitMemory):
    """What their tests call ListMemory: every memory, oldest first, on the test's backend."""

    def __init__(self, name=None, memory_contents=None) -> None:
        assert memory_contents is None  # only the deselected config tests pass contents
        opened = _opener[-1]()
        super().__init__(
            opened["store"],
            tenant=opened["tenant"],
            name=name or "default_list_memory",
            k=None,
            chronological=True,
        )


@pytest.fixture(autouse=True)
def _point_at_memcommit(open_store, monkeypatch):
    _opener.append(open_store)
    monkeypatch.setattr(theirs, "ListMemory", ListMemory)
    yield
    _opener.pop()
