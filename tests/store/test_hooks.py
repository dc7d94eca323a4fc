"""Hooks: defer runs after a landed commit only; on_commit sees every landed commit."""

from __future__ import annotations

import pytest

from memcommit.errors import HookError, InvalidInput


def test_defer_runs_after_landing(store):
    seen = []
    with store.commit() as tx:
        m = tx.add("x")
        store.defer(lambda: seen.append(("deferred", store.get(m.id).id)))
        assert seen == []
    assert seen == [("deferred", m.id)]


def test_defer_never_runs_after_rollback(store):
    seen = []
    with pytest.raises(RuntimeError), store.commit() as tx:
        tx.add("x")
        store.defer(lambda: seen.append(1))
        raise RuntimeError
    assert seen == []


def test_defer_outside_a_commit_runs_at_once(store):
    seen = []
    store.defer(lambda: seen.append(1))
    assert seen == [1]


def test_on_commit_and_unsubscribe(store):
    seen = []
    unsubscribe = store.on_commit(seen.append)
    with store.commit(message="a") as tx:
        tx.add("x")
    with pytest.raises(RuntimeError), store.commit(message="b") as tx:
        tx.add("y")
        raise RuntimeError
    assert [c.message for c in seen] == ["a"]
    assert seen[0] == tx.result or seen[0].seq == 1
    unsubscribe()
    with store.commit(message="c") as tx:
        tx.add("z")
    assert len(seen) == 1


def test_a_deferred_hook_may_commit(store):
    def maintain():
        with store.commit(message="maintenance") as tx:
            tx.add("from the hook")

    with store.commit(message="work") as tx:
        tx.add("x")
        store.defer(maintain)
    assert [c.message for c in store.log()] == ["maintenance", "work"]


def test_hook_errors_surface_after_every_hook_ran_as_a_hook_error(store):
    seen = []

    def bad(_commit):
        raise ValueError("hook failed")

    store.on_commit(bad)
    with pytest.raises(HookError) as err, store.commit() as tx:
        tx.add("x")
        store.defer(lambda: seen.append(1))
        store.defer(lambda: 1 / 0)
    assert seen == [1]
    assert tx.result is not None and store.head == tx.result == err.value.commit
    assert isinstance(err.value.__cause__, ValueError)
    assert [type(e) for e in err.value.errors] == [ValueError, ZeroDivisionError]
    assert "landed" in str(err.value) and not isinstance(err.value, ValueError)


def test_a_caller_that_catches_a_hook_error_does_not_retry_a_landed_commit(store):
    store.on_commit(lambda _commit: 1 / 0)
    for _attempt in range(3):
        try:
            with store.commit(message="once") as tx:
                tx.add("x", tenant="A")
            break
        except HookError as err:
            assert err.commit.seq == tx.result.seq
            break
        except ZeroDivisionError:  # what escaped before: looked like a failed commit
            continue
    assert len(store.find(tenant="A")) == 1 and [c.message for c in store.log()] == ["once"]


def test_hooks_must_be_callable(store):
    with pytest.raises(InvalidInput):
        store.defer("not callable")
    with pytest.raises(InvalidInput):
        store.on_commit(None)
