"""A compaction never mixes tenants, and a tenant view compacts its own traces only."""

from __future__ import annotations

import pytest
from compaction_store import add_trace, later

from memcommit.compaction import Compactor


@pytest.fixture
def store(make_store):
    """A fresh store on each backend (SQLite file, PostgreSQL schema)."""
    return make_store("mem.db")


def test_summaries_stay_in_their_tenant(store) -> None:
    for tenant in ("acme", "globex", "acme", "globex"):
        add_trace(store, "Same task text", tenant=tenant, lines=[f"secret of {tenant}"])
    compactor = Compactor(store)
    result = compactor.compact(now=later(1))
    assert len(result.summaries) == 4
    for summary in result.summaries:
        other = "globex" if summary.tenant == "acme" else "acme"
        assert f"secret of {summary.tenant}" in summary.content
        assert f"secret of {other}" not in summary.content
        for memory_id in summary.metadata["provenance"]["built_from"]:
            assert store.get(memory_id).tenant == summary.tenant
    merged = compactor.merge(now=later(2)).summaries
    assert sorted(m.tenant for m in merged) == ["acme", "globex"]
    for m in merged:
        other = "globex" if m.tenant == "acme" else "acme"
        assert f"secret of {other}" not in m.content


def test_a_tenant_view_compacts_only_its_tenant(store) -> None:
    mine = add_trace(store, "task", tenant="acme")
    theirs = add_trace(store, "task", tenant="globex")
    result = Compactor(store.tenant("acme")).compact(now=later(1))
    assert result.traces == (mine,)
    assert [s.tier for s in store.trace(theirs).steps] == ["short"] * 3
    assert store.tenant("globex").find(kinds=["summary"]) == []
    assert Compactor(store.tenant("globex")).merge(now=later(2)).commit is None
