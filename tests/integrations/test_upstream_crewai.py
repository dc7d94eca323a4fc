"""crewai's own memory tests (tests/memory of its sdist), against MemcommitStorage.

Their tests make storage two ways: ``LanceDBStorage(path=..., vector_dim=...)``,
CrewAI's reference backend, and ``Memory(storage="<path>")``, which builds one
from the path. Here that class name makes a MemcommitStorage on the test's
backend (a path is a store or tenant, the same path the same one, as
`open_store` says), and CrewAI's own storage seam (`set_memory_storage_factory`)
hands Memory the same for a path. crewai pins mcp<2, openai<3 and
opentelemetry>=1.45.1, which the dev extra cannot hold: these run in the venv
of the ``crewai`` extra (`.ci/run` builds it).
"""

from __future__ import annotations

import pytest
from deselected import CREWAI, VERSIONS
from upstream import adopt, require, suite

MemcommitStorage = require("memcommit.integrations.crewai", apart="crewai").MemcommitStorage
import crewai.memory.storage.factory as storage_factory  # noqa: E402
import crewai.memory.storage.lancedb_storage as lancedb_storage  # noqa: E402

PACKAGE = "crewai"
#: The upstream modules that test the storage seam, and what each leaves out.
MODULES = (
    "memory.test_unified_memory",
    "memory.test_lancedb_update",
    "memory.test_dimension_mismatch",
    "memory.test_lancedb_filter_escaping",
    "memory.test_memory_root_scope",
    "memory.test_storage_factory",
)
theirs = [suite(PACKAGE, VERSIONS[PACKAGE], module) for module in MODULES]
for module in theirs:
    tests = {name for name in vars(module) if name.startswith(("test_", "Test"))}
    assert not tests & set(globals()), f"{module.__name__} repeats a test name"
    adopt(module, globals(), deselect={n: r for n, r in CREWAI.items() if n.split(".")[0] in tests})

_opener: list = []


class LanceDBStorage(MemcommitStorage):
    """What their tests call LanceDBStorage: a MemcommitStorage on the test's backend."""

    def __init__(self, path=None, table_name="memories", vector_dim=None, compact_every=100):
        opened = _opener[-1](f"{path or 'crewai-default'}#{table_name}")
        super().__init__(opened["store"], tenant=opened["tenant"], vector_dim=vector_dim)


def _for_spec(spec: str):
    """CrewAI's storage factory: a path spec is a MemcommitStorage; its named specs too."""
    return LanceDBStorage(path=None if spec in ("lancedb", "qdrant-edge") else spec)


@pytest.fixture(autouse=True)
def _point_at_memcommit(open_store, monkeypatch):
    _opener.append(open_store)
    monkeypatch.setattr(lancedb_storage, "LanceDBStorage", LanceDBStorage)
    for module in theirs:
        if hasattr(module, "LanceDBStorage"):
            monkeypatch.setattr(module, "LanceDBStorage", LanceDBStorage)
    monkeypatch.setattr(storage_factory, "_factory", _for_spec)
    yield
    _opener.pop()
