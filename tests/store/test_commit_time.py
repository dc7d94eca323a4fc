"""Commit times never go backwards, so reads as of a time answer as the store stood then."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_helpers import dump

from memcommit.errors import InvalidInput

HOUR = timedelta(hours=1)
_names = itertools.count()


def test_an_explicit_now_before_the_newest_commit_is_refused(store, now):
    with store.commit(now=now + HOUR) as tx:
        first = tx.add("first", tenant="A")
    before = dump(store)
    with pytest.raises(InvalidInput) as err, store.commit(now=now) as tx:
        tx.add("second", tenant="A")
        tx.update(first.id, content="first v2")
    assert err.value.field == "now" and "earlier" in str(err.value)
    assert dump(store) == before
    with store.commit(now=now + HOUR) as tx:  # the same time is fine
        tx.add("same time", tenant="A")
    assert [c.time for c in store.log()] == [now + HOUR, now + HOUR]


def test_a_clock_that_steps_back_never_moves_commits_back(make_store, now):
    readings = iter([now + HOUR, now, now - HOUR, now + 2 * HOUR])
    store = make_store("clock.db", clock=lambda: next(readings))
    for _ in range(4):
        with store.commit() as tx:
            tx.add("x")
    assert [c.time for c in reversed(store.log())] == [now + HOUR] * 3 + [now + 2 * HOUR]


def test_another_writers_newer_commit_bounds_this_stores_times(make_store, now):
    late = make_store("shared.db", clock=lambda: now + HOUR)
    early = make_store("shared.db", clock=lambda: now)
    with early.commit() as tx:
        tx.add("early")
    with late.commit() as tx:
        tx.add("late")
    with early.commit() as tx:  # this store last saw its own commit; the newest is late's
        tx.add("early again")
    assert early.head.time == now + HOUR
    with pytest.raises(InvalidInput), early.commit(now=now) as tx:
        tx.add("refused")


def test_times_in_other_zones_are_compared_as_instants(store, now):
    east = timezone(timedelta(hours=5))
    with store.commit(now=now.astimezone(east)) as tx:
        tx.add("x")
    assert tx.result.time == now and tx.result.time.utcoffset() == timedelta(0)
    with pytest.raises(InvalidInput), store.commit(now=(now - HOUR).astimezone(east)):
        pass


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(offsets=st.lists(st.integers(-3, 3), min_size=1, max_size=8))
def test_as_of_a_time_sees_exactly_the_commits_up_to_it(make_store, offsets):
    store = make_store(f"times-{next(_names)}.db")
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    landed: list[tuple[datetime, str]] = []
    for i, offset in enumerate(offsets):
        at = start + offset * HOUR
        try:
            with store.commit(now=at) as tx:
                landed.append((at, tx.add(f"note {i}").id))
        except InvalidInput as err:
            assert err.field == "now" and at < landed[-1][0]
    times = [t for t, _ in landed]
    assert times == sorted(times)
    for probe in range(-4, 5):
        moment = start + probe * HOUR
        expected = {mid for t, mid in landed if t <= moment}
        assert {m.id for m in store.find(as_of=moment)} == expected
