"""A tier commit asked for at a time before the newest commit is dated by that commit's time.

The store refuses an explicit time earlier than its newest commit's. A tier
commit is then dated ``max(now, newest)``: never by the wall clock, which (ahead
of the injected times) made the history depend on when the test ran and had the
caller's next injected time refused. Both backends.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from memcommit.tiers import LRU
from memcommit.tiers.memory import TieredMemory

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
HOUR = timedelta(hours=1)


def add(view, n, now):
    with view.commit(message=f"add {n}", now=now) as tx:
        return [tx.add(f"memory {i}").id for i in range(n)]


@pytest.fixture
def store(make_store):
    return make_store()


def test_maintenance_before_the_newest_commit_is_dated_by_it(store):
    view = store.tenant("acme")
    tiers = TieredMemory(view, capacity=2, eviction=LRU(), auto=False)
    add(view, 5, T0 + 2 * HOUR)
    (commit,) = tiers.maintain(now=T0 + HOUR).commits
    assert commit.time == T0 + 2 * HOUR
    with view.commit(message="the next step of the injected timeline", now=T0 + 3 * HOUR) as tx:
        tx.add("still in order")
    assert [c.time for c in reversed(store.log())] == [T0 + 2 * HOUR, T0 + 2 * HOUR, T0 + 3 * HOUR]


def test_on_a_tenant_view_another_tenants_newer_commit_dates_it(store):
    view = store.tenant("acme")
    tiers = TieredMemory(view, capacity=2, eviction=LRU(), auto=False)
    add(view, 5, T0)
    add(store.tenant("other"), 1, T0 + 2 * HOUR)  # newer than anything the view shows
    (commit,) = tiers.maintain(now=T0 + HOUR).commits
    assert commit.time == T0 + 2 * HOUR


def test_a_page_in_before_the_newest_commit_is_dated_by_it(store):
    view = store.tenant("acme")
    tiers = TieredMemory(view, capacity=2, eviction=LRU(), auto=False)
    with view.commit(message="archived", now=T0 + 2 * HOUR) as tx:
        archived = tx.add("paged back in", tier="archive").id
    result = tiers.touch([archived], now=T0 + HOUR)
    assert result.paged_in == [archived]
    assert store.head.author == "tiers" and store.head.time == T0 + 2 * HOUR


def test_the_same_calls_give_the_same_commit_times(make_store):
    def history(name):
        view = make_store(name).tenant("acme")
        tiers = TieredMemory(view, capacity=2, eviction=LRU(), auto=False)
        add(view, 5, T0 + 2 * HOUR)
        tiers.maintain(now=T0 + HOUR)
        return [(c.author, c.time) for c in view.log()]

    assert history("one.db") == history("two.db")
