"""What derived data kept beside a store reads from it: commit ids by seq, changes by tenant,
and a folder per host.

The folder is the backend's choice and is named by the store's identity (its
first commit's id), never by how the store's address was spelled.
"""

from __future__ import annotations

import hashlib

import pytest

import memcommit
from memcommit.errors import InvalidInput


def test_commit_ids_by_seq(make_store, now) -> None:
    store = make_store()
    assert store.commit_id(1) is None
    for message in ("one", "two"):
        with store.commit(message=message, now=now) as tx:
            tx.add(message, tenant="acme")
    assert [store.commit_id(seq) for seq in (1, 2, 3)] == [c.id for c in store.log()[::-1]] + [None]
    for bad in (-1, "1", 1.0, True):
        with pytest.raises(InvalidInput) as caught:
            store.commit_id(bad)
        assert caught.value.field == "seq"


def test_changes_with_their_tenants_in_commit_order(make_store, now) -> None:
    store = make_store()
    with store.commit(message="one", now=now) as tx:
        tx.add("first", id="a1", tenant="acme")
        tx.add("second", id="b1", tenant="beta")
    with store.commit(message="two", now=now) as tx:
        tx.update("a1", content="first, again")
        tx.purge("b1")
    found = [(t, c.op, c.memory_id) for t, c in store.tenant_changes(0, 2)]
    assert found == [
        ("acme", "add", "a1"),
        ("beta", "add", "b1"),
        ("acme", "update", "a1"),
        ("beta", "purge", "b1"),
    ]
    assert [c for _, c in store.tenant_changes(1, 2)] == store.diff(1, 2)
    assert store.tenant_changes(2, 2) == []
    for field, args in (("after", (-1, 2)), ("upto", (0, "2")), ("after", (True, 2))):
        with pytest.raises(InvalidInput) as caught:
            store.tenant_changes(*args)
        assert caught.value.field == field


def key_of(store) -> str:
    return hashlib.sha256(store.commit_id(1).encode()).hexdigest()[:16]


def test_the_folder_is_chosen_by_the_backend_and_named_by_identity(
    make_store, store_backend, tmp_path, monkeypatch, now
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    store = make_store("s.db")
    assert store.cache_dir("recall") is None  # no commit yet: no identity
    with store.commit(message="first", now=now) as tx:
        tx.add("a memory", tenant="acme")
    if store_backend == "sqlite":
        assert store.cache_dir("recall") == tmp_path / "s.db.recall"
    else:
        assert store.cache_dir("recall") == tmp_path / "cache" / "memcommit" / "recall" / key_of(
            store
        )
    assert store.cache_dir("recall", root=tmp_path / "elsewhere") == (
        tmp_path / "elsewhere" / key_of(store)
    )
    assert make_store("s.db").cache_dir("recall") == store.cache_dir("recall")
    for bad in ("", "../up", "a/b", 3):
        with pytest.raises(InvalidInput) as caught:
            store.cache_dir(bad)
        assert caught.value.field == "name"


def test_an_in_memory_store_keeps_no_folder(tmp_path, now) -> None:
    with memcommit.open(":memory:") as store:
        with store.commit(message="first", now=now) as tx:
            tx.add("a memory", tenant="acme")
        assert store.cache_dir("recall") is None
        assert store.cache_dir("recall", root=tmp_path) is None


def test_two_stores_never_share_an_identity_even_under_a_seeded_random(make_store, now) -> None:
    """A program (or hypothesis) may seed ``random``: commit ids do not come from it."""
    import random

    stores = []
    for name in ("one.db", "two.db"):
        random.seed(0)
        store = make_store(name)
        with store.commit(message="same", now=now) as tx:
            tx.add("the same first memory", id="m0", tenant="acme")
        stores.append(store)
    one, two = stores
    assert one.commit_id(1) != two.commit_id(1)
    assert one.cache_dir("recall", root="/r") != two.cache_dir("recall", root="/r")
