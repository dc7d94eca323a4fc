"""Bad input: a typed error naming the field, and the store exactly as it was before."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone, tzinfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_helpers import dump

from memcommit.errors import (
    Conflict,
    InvalidInput,
    MemcommitError,
    NotFound,
    Purged,
    StoreClosed,
)
from memcommit.model import KINDS, TIERS

LIMIT = 64  # small content limit so oversized content is cheap to generate

not_text = st.one_of(st.none(), st.integers(), st.floats(), st.binary(), st.lists(st.text()))
blank = st.sampled_from(["", " ", "\t\n"])
bad_importance = st.one_of(
    st.just(math.nan),
    st.floats(max_value=-1e-9),
    st.floats(min_value=1.000001),
    st.just(math.inf),
    st.integers(min_value=2),  # 10**400 too: no float holds it
    st.just(10**400),
    st.booleans(),
    st.text(),
    st.none(),
)
bad_metadata = st.one_of(
    st.integers(),
    st.text(),
    st.lists(st.integers(), min_size=1),
    st.dictionaries(st.integers(), st.integers(), min_size=1),
    st.dictionaries(st.text(), st.sampled_from([math.nan, object(), {1, 2}, b"x"]), min_size=1),
)
bad_time = st.one_of(st.text(), st.integers(), st.datetimes())  # naive datetimes included

BAD_ADD = {
    "content": st.one_of(
        not_text, blank, st.text(min_size=LIMIT + 1, alphabet="xyz"), st.just("a\x00b")
    ),
    "kind": st.one_of(st.text().filter(lambda k: k not in KINDS), st.integers()),
    "scope": st.one_of(blank, st.integers(), st.none()),
    "tenant": st.one_of(blank, st.integers()),
    "session": st.one_of(blank, st.integers()),
    "key": st.one_of(blank, st.integers()),
    "project": st.one_of(blank, st.floats()),
    "importance": bad_importance,
    "tags": st.one_of(st.just(b"bytes"), st.lists(st.integers(), min_size=1), st.just([""])),
    "always": st.one_of(st.integers(), st.text(), st.none()),
    "token_count": st.one_of(
        st.integers(max_value=-1), st.integers(min_value=2**63), st.floats(), st.booleans()
    ),
    "metadata": bad_metadata,
    "valid_from": bad_time,
    "valid_to": bad_time,
    "tier": st.one_of(st.text().filter(lambda t: t not in TIERS), st.none()),
    "id": st.one_of(blank, st.integers()),
}


@pytest.fixture
def seeded(make_store, now):
    store = make_store("bad.db", max_content_bytes=LIMIT)
    with store.commit(now=now) as tx:
        live = tx.add("a live memory")
        gone = tx.add("to be purged")
        tid = tx.begin_trace("a task")
    with store.commit() as tx:
        tx.purge(gone.id)
    return store, live.id, gone.id, tid


def assert_refused(store, call, field, errors=(InvalidInput,)):
    before = dump(store)
    with pytest.raises(errors) as err:
        call()
    assert getattr(err.value, "field", None) == field, err.value
    assert field in str(err.value)
    assert dump(store) == before


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), field=st.sampled_from(sorted(BAD_ADD)))
def test_add_refuses_bad_fields(seeded, data, field):
    store = seeded[0]
    value = data.draw(BAD_ADD[field], label=field)

    def call():
        with store.commit() as tx:
            tx.add(**{"content": "fine", field: value})

    assert_refused(store, call, field)


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), field=st.sampled_from(sorted(set(BAD_ADD) - {"tenant", "id"})))
def test_update_refuses_bad_fields(seeded, data, field):
    store, live = seeded[0], seeded[1]
    value = data.draw(BAD_ADD[field], label=field)

    def call():
        with store.commit() as tx:
            tx.update(live, **{field: value})

    assert_refused(store, call, field)


def test_unknown_ids_purged_memories_and_conflicts(seeded):
    store, live, gone, tid = seeded
    cases = [
        (lambda tx: tx.update("missing", content="x"), "id", NotFound),
        (lambda tx: tx.update(gone, content="x"), "id", Purged),
        (lambda tx: tx.invalidate(gone), "id", Purged),
        (lambda tx: tx.archive(gone), "id", Purged),
        (lambda tx: tx.update(live, content="x", expected_version=7), "expected_version", Conflict),
        (lambda tx: tx.update(live, expected_version="1", content="x"), "expected_version",
         InvalidInput),
        (lambda tx: tx.supersede("missing", live), "old_id", NotFound),
        (lambda tx: tx.step("missing", "x"), "trace_id", NotFound),
        (lambda tx: tx.finish(tid, status="done"), "status", InvalidInput),
        (lambda tx: tx.invalidate(live, at=datetime(2026, 1, 1)), "at", InvalidInput),
        (lambda tx: tx.move(live, "attic"), "tier", InvalidInput),
        (lambda tx: tx.add("x", id=live), "id", InvalidInput),
    ]  # fmt: skip
    for action, field, error in cases:

        def call(action=action):
            with store.commit() as tx:
                action(tx)

        assert_refused(store, call, field, error)


def test_bad_reads_and_commit_arguments(seeded):
    store, live, _, _ = seeded
    cases = [
        (lambda: store.get(42), "id"),
        (lambda: store.find(kinds=["nonsense"]), "kinds"),
        (lambda: store.find(tiers="attic"), "tiers"),
        (lambda: store.find(limit=0), "limit"),
        (lambda: store.find(live="yes"), "live"),
        (lambda: store.find(since="yesterday"), "since"),
        (lambda: store.log(limit=-1), "limit"),
        (lambda: store.get(live, as_of=object()), "as_of"),
        (lambda: store.traces(status="done"), "status"),
        (lambda: store.record_uses("not-a-list-of-ids"), "ids"),
        (lambda: store.state_set("ns", "k", {1: object()}), "value"),
        (lambda: store.commit(author="").__enter__(), "author"),
        (lambda: store.commit(message=3).__enter__(), "message"),
        (lambda: store.commit(now=datetime(2026, 1, 1)).__enter__(), "now"),
        (lambda: store.find(limit=10**30), "limit"),
        (lambda: store.log(limit=10**30), "limit"),
        (lambda: store.traces(limit=2**63), "limit"),
        (lambda: store.state_get("a/b", "k"), "namespace"),
        (lambda: store.tenant("a").state_items("b/c"), "namespace"),
        (lambda: store.tenant("a").state_set("b/c", "k", 1), "namespace"),
    ]
    for call, field in cases:
        assert_refused(store, call, field, (InvalidInput, NotFound))


def test_closed_store_refuses_everything(make_store):
    store = make_store("closed.db")
    with store.commit() as tx:
        m = tx.add("x")
    view = store.tenant("default")
    store.close()
    store.close()  # harmless
    calls = [
        lambda: store.get(m.id),
        lambda: store.find(),
        lambda: store.log(),
        lambda: store.show(1),
        lambda: store.history(m.id),
        lambda: store.diff(0, 1),
        lambda: store.head,
        lambda: store.tenants(),
        lambda: store.traces(),
        lambda: store.check(),
        lambda: store.usage(),
        lambda: store.record_uses([m.id]),
        lambda: store.state_get("a", "b"),
        lambda: store.state_set("a", "b", 1),
        lambda: store.commit().__enter__(),
        lambda: store.defer(lambda: None),
        lambda: store.on_commit(lambda c: None),
        lambda: store.tenant("x"),
        lambda: view.find(),
        lambda: view.get(m.id),
    ]
    for call in calls:
        with pytest.raises(StoreClosed):
            call()
    assert issubclass(StoreClosed, MemcommitError)


def test_open_refuses_bad_targets(tmp_path):
    import memcommit

    for target, field in ((None, "target"), ("", "target"), ("nosuch://x", "target")):
        with pytest.raises(InvalidInput) as err:
            memcommit.open(target)
        assert err.value.field == field
    with pytest.raises(InvalidInput):
        memcommit.open(tmp_path / "x.db", clock="not callable")
    with pytest.raises(InvalidInput):
        memcommit.open(tmp_path / "x.db", synchronous="SOMETIMES")


@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
@given(limit=st.one_of(st.integers(max_value=0), st.integers(min_value=2**63)))
def test_limits_out_of_range_are_refused_by_every_read(seeded, limit):
    store = seeded[0]
    for read in (store.find, store.log, store.traces, store.tenant("default").log):
        assert_refused(store, lambda read=read: read(limit=limit), "limit")


class Broken(tzinfo):
    """A tzinfo whose offset cannot be read."""

    def utcoffset(self, dt):
        raise ValueError("no offset today")


EAST = timezone(timedelta(hours=5))
BAD_MOMENTS = {
    "naive": datetime(2026, 1, 1),
    "before-year-1-in-utc": datetime(1, 1, 1, tzinfo=EAST),
    "after-year-9999-in-utc": datetime.max.replace(tzinfo=timezone(-timedelta(hours=5))),
    "broken-tzinfo": datetime(2026, 1, 1, tzinfo=Broken()),
    "text": "2026-01-01T00:00:00Z",
}


@pytest.mark.parametrize("bad", BAD_MOMENTS.values(), ids=BAD_MOMENTS.keys())
def test_every_time_argument_is_checked_alike(seeded, bad):
    store, live, _, _ = seeded
    view = store.tenant("default")

    def in_commit(action):
        def call():
            with store.commit() as tx:
                action(tx)

        return call

    cases = [
        (lambda: store.commit(now=bad).__enter__(), "now"),
        (in_commit(lambda tx: tx.invalidate(live, at=bad)), "at"),
        (in_commit(lambda tx: tx.add("x", valid_from=bad)), "valid_from"),
        (in_commit(lambda tx: tx.update(live, valid_to=bad)), "valid_to"),
        (lambda: store.get(live, as_of=bad), "as_of"),
        (lambda: view.find(as_of=bad), "as_of"),
        (lambda: store.find(since=bad), "since"),
        (lambda: store.diff(bad), "a"),
    ]
    for call, field in cases:
        if isinstance(bad, str) and field in ("as_of", "a"):
            continue  # a string there is a commit id: NotFound, tested elsewhere
        assert_refused(store, call, field)


def test_a_clock_must_give_aware_times(make_store):
    store = make_store("clock.db", clock=lambda: datetime(2026, 1, 1))
    with pytest.raises(InvalidInput) as err, store.commit() as tx:
        tx.add("x")
    assert err.value.field == "clock()" and store.head is None


def test_open_refuses_unknown_options_naming_them(make_store):
    for option in ({"bogus": 1}, {"busy_timout": 5}):
        with pytest.raises(InvalidInput) as err:
            make_store("options.db", **option)
        assert err.value.field == next(iter(option)) and "not an option" in str(err.value)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    value=st.one_of(
        st.floats().filter(lambda x: not 0 <= x <= 86400),
        st.integers(max_value=-1),
        st.integers(min_value=86401),
        st.booleans(),
        st.text(),
        st.none(),
    )
)
def test_sqlite_busy_timeout_must_be_a_sane_number_of_seconds(tmp_path, value):
    import memcommit

    with pytest.raises(InvalidInput) as err:
        memcommit.open(tmp_path / "busy.db", busy_timeout=value)
    assert err.value.field == "busy_timeout"
    with memcommit.open(tmp_path / "busy.db", busy_timeout=0) as store:
        assert store.find() == []
