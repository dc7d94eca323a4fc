"""Bulk paths: traces listed by status, mark and page; many memories read and moved at once."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcommit.errors import Conflict, InvalidInput, NotFound, Purged, StoreClosed
from memcommit.store import Store


def _traces(store, n, *, tenant="default", steps=2):
    ids = []
    with store.commit() as tx:
        for i in range(n):
            tid = tx.begin_trace(f"task {i}", tenant=tenant)
            for s in range(steps):
                tx.step(tid, f"step {s} of {i}")
            ids.append(tid)
    return ids


def _mark(store, tid, key="done_by"):
    root = store.trace(tid).root
    with store.commit() as tx:
        tx.update(tid, metadata={**root.metadata, key: "x"})


def test_unmarked_leaves_out_traces_whose_root_has_the_key(store):
    a, b, c = _traces(store, 3)
    _mark(store, b)
    with store.commit() as tx:  # a key of another name, and the key nested deeper, do not count
        tx.update(c, metadata={"other": 1, "inner": {"done_by": "y"}})
    assert [t.id for t in store.traces(unmarked="done_by")] == [a, c]
    assert [t.id for t in store.traces(unmarked="other")] == [a, b]
    assert [t.id for t in store.traces()] == [a, b, c]


def test_unmarked_and_status_answer_as_of(store):
    a, b = _traces(store, 2)
    before = store.head
    _mark(store, a)
    with store.commit() as tx:
        tx.finish(b, status="failed")
    assert [t.id for t in store.traces(unmarked="done_by")] == [b]
    assert [t.id for t in store.traces(unmarked="done_by", as_of=before)] == [a, b]
    assert [t.id for t in store.traces(status="failed")] == [b]
    assert [t.id for t in store.traces(status="open", as_of=before)] == [a, b]
    assert store.traces(status="failed", as_of=before) == []
    assert [t.id for t in store.traces(status="open")] == [a]


def test_paging_walks_every_trace_once_in_order(store):
    ids = _traces(store, 7, steps=1)
    ids += _traces(store, 3, steps=0)
    pages, after = [], None
    while True:
        page = store.traces(after=after, limit=3)
        pages.append([t.id for t in page])
        if len(page) < 3:
            break
        after = page[-1].id
    assert [len(p) for p in pages] == [3, 3, 3, 1]
    assert [i for p in pages for i in p] == ids
    assert [t.id for t in store.traces()] == ids
    assert all(len(t.steps) == (1 if t.id in ids[:7] else 0) for t in store.traces(limit=10))


def test_paged_listing_has_the_same_members_as_single_reads(store):
    ids = _traces(store, 5, steps=3)
    with store.commit() as tx:
        tx.step(ids[1], "one more")
        tx.finish(ids[2])
    listed = store.traces(limit=5)
    assert listed == [store.trace(i) for i in ids]
    assert [len(t.steps) for t in listed] == [3, 4, 3, 3, 3]


def test_paging_stays_in_a_tenant_and_rejects_unknown_after(store):
    mine = _traces(store, 2, tenant="a")
    theirs = _traces(store, 2, tenant="b")
    view = store.tenant("a")
    assert [t.id for t in view.traces(after=mine[0])] == [mine[1]]
    with pytest.raises(NotFound) as err:
        view.traces(after=theirs[0])  # another tenant's trace is as good as unknown
    assert err.value.field == "after"
    with pytest.raises(NotFound):
        store.traces(after="no-such-trace")
    with pytest.raises(InvalidInput):
        store.traces(limit=-1)
    with pytest.raises(InvalidInput):
        store.traces(unmarked="")


def test_read_reads_many_and_names_the_first_unknown(store):
    with store.commit() as tx:
        a = tx.add("a")
        b = tx.add("b", tenant="other")
    with store.commit() as tx:
        got = tx.read([b.id, a.id, a.id])
        assert [m.id for m in got] == [b.id, a.id, a.id]
        assert got[0] == b
    with pytest.raises(NotFound) as err, store.commit() as tx:
        tx.read([a.id, "missing"])
    assert err.value.value == "missing"
    with pytest.raises(NotFound), store.tenant("default").commit() as tx:
        tx.read([a.id, b.id])  # a view does not see another tenant's memory
    for bad in (["x"], 3, None, ""):
        with pytest.raises(InvalidInput) as err, store.commit() as tx:
            tx.read([a.id, bad])
        assert err.value.field == "id"


def test_read_reuses_a_current_memory_and_rereads_a_stale_one(store):
    with store.commit() as tx:
        m = tx.add("first words")
    with store.commit() as tx:
        newer = tx.update(m.id, content="second words")
    with store.commit() as tx:
        (fresh,) = tx.read([m])  # m is version 1: the current version 2 is read instead
        assert fresh == newer
        moved = tx.archive_many([m])
    assert moved[0].content == "second words" and moved[0].version == 3
    assert store.get(m.id).tier == "archive"
    current = store.get(m.id)
    with store.commit() as tx:
        assert tx.read([current])[0] == current


def test_read_sees_changes_pending_in_the_commit(store):
    with store.commit() as tx:
        m = tx.add("x")
        tx.update(m.id, importance=0.9)
        assert tx.read([m.id])[0].importance == 0.9


def test_archive_many_and_move_many_are_like_one_by_one(make_store, now):
    bulk, single = make_store("bulk.db"), make_store("single.db")
    ids = {}
    for store in (bulk, single):
        with store.commit(now=now) as tx:
            made = [
                tx.add(f"m{i}", id=f"m{i}", tier="mid" if i == 2 else "short") for i in range(4)
            ]
        ids[store] = [m.id for m in made]
    with bulk.commit(now=now) as tx:
        tx.archive_many(["m0", "m1", "m2"])
        tx.move_many(["m3", "m1"], "long")
    with single.commit(now=now) as tx:
        for i in ("m0", "m1", "m2"):
            tx.archive(i)
        for i in ("m3", "m1"):
            tx.move(i, "long")
    assert bulk.head.changes == single.head.changes
    for i in ids[bulk]:
        assert bulk.history(i) == single.history(i)
    assert bulk.check().ok


def test_bulk_moves_refuse_what_single_moves_refuse(store):
    with store.commit() as tx:
        a = tx.add("a")
        gone = tx.add("to be purged")
    with store.commit() as tx:
        tx.purge(gone.id)
    before = store.head
    with pytest.raises(Purged), store.commit() as tx:
        tx.archive_many([a.id, gone.id])
    with pytest.raises(InvalidInput), store.commit() as tx:
        tx.move_many([a.id], "attic")
    with pytest.raises(Conflict), store.commit() as tx:
        tx.archive_many([a.id])
        tx.update(a.id, expected_version=1, content="late")
    assert store.head == before and store.get(a.id).tier == "short"


def test_store_backend_is_the_documented_escape_hatch(store):
    assert store.backend is store._core.backend
    assert not hasattr(store.tenant("x"), "backend")
    store.close()
    with pytest.raises(StoreClosed, match="closed"):
        store.backend  # noqa: B018
    assert isinstance(store, Store)


_examples = iter(range(1_000_000))


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    marks=st.lists(st.booleans(), min_size=0, max_size=12),
    limit=st.integers(min_value=1, max_value=5),
)
def test_paging_unmarked_equals_filtering_everything(make_store, clock, marks, limit):
    store = make_store(f"paging-{next(_examples)}.db", clock=clock)
    ids = _traces(store, len(marks), steps=1) if marks else []
    with store.commit() as tx:
        for tid, marked in zip(ids, marks, strict=True):
            if marked:
                tx.update(tid, metadata={"done_by": "x"})
    expected = [t.id for t in store.traces() if "done_by" not in t.root.metadata]
    got, after = [], None
    while True:
        page = store.traces(unmarked="done_by", after=after, limit=limit)
        got += [t.id for t in page]
        if len(page) < limit:
            break
        after = page[-1].id
    assert got == expected
    store.close()


def test_two_stores_on_one_database_keep_one_gap_free_chain(make_store, clock):
    first = make_store("shared.db", clock=clock)
    second = make_store("shared.db", clock=clock)
    for i in range(6):  # each store's cached tip must notice the other's commits
        with (first if i % 3 else second).commit(message=str(i)) as tx:
            tx.add(f"m{i}")
    log = list(reversed(first.log()))
    assert [c.seq for c in log] == list(range(1, 7))
    assert [c.parent for c in log[1:]] == [c.id for c in log[:-1]]
    assert second.head == first.head and first.check().ok
