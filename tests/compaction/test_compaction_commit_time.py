"""compact and merge asked for at a time before the newest commit are dated by that commit's time.

They date their commits as the tiers do (``memcommit.commit_time``):
``max(now, newest)``, never the wall clock, so the history is the same whenever
it runs and the caller's next injected time is still accepted. Both backends.
"""

from __future__ import annotations

import pytest
from compaction_store import add_trace, later

from memcommit.compaction import Compactor


@pytest.fixture
def store(make_store):
    """A fresh store on each backend (SQLite file, PostgreSQL schema)."""
    return make_store("mem.db")


def test_compact_before_the_newest_commit_is_dated_by_it(store) -> None:
    trace_id = add_trace(store, "Rotate the keys", at=later(10))
    result = Compactor(store).compact(now=later(5))
    assert result.traces == (trace_id,)
    assert result.commit.time == later(10)
    with store.commit(message="next", now=later(11)) as tx:  # the injected timeline goes on
        tx.add("after the compaction")


def test_merge_before_the_newest_commit_is_dated_by_it(store) -> None:
    for i in range(2):
        add_trace(store, "Nightly backup", at=later(i))
    compactor = Compactor(store)
    compactor.compact(now=later(5))
    add_trace(store, "Something else", at=later(30))
    result = compactor.merge(now=later(6))
    assert len(result.superseded) == 2
    assert result.commit.time == later(30)


def test_on_a_tenant_view_another_tenants_newer_commit_dates_it(store) -> None:
    view = store.tenant("acme")
    add_trace(view, "Ship the release", at=later(1), tenant="acme")
    with store.tenant("other").commit(message="newer", now=later(20)) as tx:
        tx.add("another tenant's memory")
    assert Compactor(view).compact(now=later(5)).commit.time == later(20)
