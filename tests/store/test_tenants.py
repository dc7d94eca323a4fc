"""Tenant views: every read path stays inside one tenant (property test), writes too."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from store_helpers import TENANTS, operation, play

from memcommit.errors import InvalidInput, NotFound

_names = itertools.count()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(commits=st.lists(st.lists(operation, min_size=1, max_size=6), min_size=1, max_size=5))
def test_no_read_path_returns_another_tenants_memory(make_store, commits):
    store = make_store(f"tenants-{next(_names)}.db")
    made, traces = play(store, commits)
    owner = {mid: store.get(mid).tenant for mid in made}
    for name in TENANTS:
        store.tenant(name).state_set("tiers", "stats", {"owner": name})
    for name in TENANTS:
        view = store.tenant(name)
        assert view.state_get("tiers", "stats") == {"owner": name}
        assert view.state_items("tiers") == {"stats": {"owner": name}}
        mine = {mid for mid, t in owner.items() if t == name}
        head = store.head_seq  # 0 when every commit changed nothing, so none landed
        for as_of in (None, 1, head) if head else (None,):
            for m in view.find(live=False, as_of=as_of):
                assert m.tenant == name
            for t in view.traces(as_of=as_of):
                assert t.tenant == name and t.root.tenant == name
                assert all(s.tenant == name for s in t.steps)
            for c in view.log(as_of=as_of):
                assert all(owner.get(ch.memory_id) == name for ch in c.changes)
        assert {m.id for m in view.find(live=False)} <= mine
        for c in view.log():
            assert view.show(c.seq).changes == c.changes
        assert all(owner[ch.memory_id] == name for ch in view.diff(0, head))
        assert set(view.usage()) <= mine
        assert view.tenants() in ([], [name])
        if view.head is not None:
            assert all(owner[ch.memory_id] == name for ch in view.head.changes)
        for mid, t in owner.items():
            if t == name:
                assert view.get(mid).tenant == name
                assert all(h.tenant == name for h in view.history(mid))
            else:
                with pytest.raises(NotFound):
                    view.get(mid)
                with pytest.raises(NotFound):
                    view.history(mid)
                with pytest.raises(NotFound):
                    view.record_uses([mid])
        for tid in traces:
            if owner[tid] != name:
                with pytest.raises(NotFound):
                    view.trace(tid)


def test_view_writes_stay_in_the_tenant(store):
    a = store.tenant("a")
    with a.commit() as tx:
        m = tx.add("mine")
        tid = tx.begin_trace("task")
    assert m.tenant == "a" and a.trace(tid).tenant == "a"
    with store.commit() as tx:
        other = tx.add("theirs", tenant="b")
    with pytest.raises(InvalidInput), a.commit() as tx:
        tx.add("sneaky", tenant="b")
    for action in (
        lambda tx: tx.update(other.id, content="x"),
        lambda tx: tx.purge(other.id),
        lambda tx: tx.archive(other.id),
        lambda tx: tx.supersede(m.id, other.id),
        lambda tx: tx.step(store.tenant("b").find()[0].id, "x"),
    ):
        with pytest.raises(NotFound), a.commit() as tx:
            action(tx)
    with pytest.raises(InvalidInput):
        a.find(tenant="b")
    assert store.get(other.id).version == 1


def test_view_hooks_and_state_are_per_tenant(store):
    a, b = store.tenant("a"), store.tenant("b")
    seen_a, seen_b = [], []
    a.on_commit(seen_a.append)
    b.on_commit(seen_b.append)
    with store.commit() as tx:
        tx.add("x", tenant="a")
    assert len(seen_a) == 1 and seen_b == []
    a.state_set("tiers", "k", 1)
    assert b.state_get("tiers", "k") is None and a.state_get("tiers", "k") == 1
    assert store.state_get("tiers", "k") is None
    b.state_set("tiers", "j", 2)
    assert a.state_items("tiers") == {"k": 1} and b.state_items("tiers") == {"j": 2}
    assert store.state_items("tiers") == {}


names = st.text(alphabet="ab/:", min_size=1, max_size=4).filter(str.strip)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pairs=st.lists(st.tuples(st.none() | names, names), min_size=1, max_size=6, unique=True))
@example(pairs=[("a/b", "tiers"), ("a", "b/tiers")])  # both were "tenant:a/b/tiers"
@example(pairs=[("a", "tiers"), (None, "tenant:a/tiers")])
def test_no_tenant_reads_or_overwrites_another_tenants_state(make_store, pairs):
    """Each (tenant, namespace) names its own state; None is the whole store's own."""
    store = make_store(f"state-{next(_names)}.db")

    def io(tenant):
        return store if tenant is None else store.tenant(tenant)

    for tenant, namespace in pairs:
        try:
            io(tenant).state_set(namespace, "stats", [tenant, namespace])
        except InvalidInput as err:
            assert err.field == "namespace" and "/" in namespace
    for tenant, namespace in pairs:
        if "/" not in namespace:
            assert io(tenant).state_get(namespace, "stats") == [tenant, namespace]


def test_a_view_exposes_no_public_way_to_the_whole_store(store):
    from memcommit.store import Store
    from memcommit.store.store import backing_store

    with store.commit() as tx:
        tx.add("theirs", tenant="b")
    view = store.tenant("a")
    for name in dir(view):
        if name.startswith("_"):
            continue
        value = getattr(view, name)
        assert not isinstance(value, Store), name
        assert getattr(value, "__self__", view) is view, name  # methods are the view's own
    assert not hasattr(view, "store") and not hasattr(view, "backend")
    assert backing_store(view) is store and backing_store(store) is store


@pytest.mark.parametrize(
    "name", [" alpha", "alpha ", "alpha\t", "al\u200bpha", "alpha\u200e", "al\u00a0pha", "a\nb"]
)
def test_a_tenant_name_that_prints_as_another_is_refused_where_it_is_written(make_store, name):
    store = make_store()
    with store.commit(message="seed") as tx:
        tx.add("kept", tenant="alpha")
    with pytest.raises(InvalidInput) as refused, store.commit(message="x") as tx:
        tx.add("a look-alike", tenant=name)
    assert refused.value.field == "tenant" and refused.value.value == name
    with pytest.raises(InvalidInput) as refused, store.tenant(name).commit(message="x") as tx:
        tx.add("a look-alike")
    assert refused.value.field == "tenant" and refused.value.value == name
    assert store.tenants() == ["alpha"] and len(store.log()) == 1
    assert store.tenant(name).find() == []  # reading any name stays possible


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    written=st.lists(
        st.tuples(st.text(alphabet="aAb\u00e9\U0001f600/", min_size=1, max_size=3), st.booleans()),
        min_size=1,
        max_size=8,
    )
)
def test_the_tenants_listed_are_those_with_a_current_memory_in_code_point_order(
    make_store, written
):
    """Names that are prefixes of each other, differ in case, accents or astral characters;
    a tenant whose only memory was invalidated is still listed (its version is current)."""
    store = make_store(f"listed-{next(_names)}.db")
    for tenant, invalidate in written:
        with store.commit(message="x") as tx:
            added = tx.add("m", tenant=tenant)
            if invalidate:
                tx.invalidate(added.id)
    assert store.tenants() == sorted({tenant for tenant, _ in written})
    assert store.tenants(as_of=store.head.seq) == store.tenants()
