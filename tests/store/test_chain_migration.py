"""Migration 0003: a store written before the chain has its history hashed once, on open."""

from __future__ import annotations

import json

import pytest
from chain_helpers import edit, rows

from memcommit.errors import InvalidInput
from memcommit.store.backends.migrations import CHAIN_MIGRATION, migrations


def unchained(store):
    """Take ``store`` back to the schema before the chain, its rows as they were (then close it)."""
    edit(
        store,
        "ALTER TABLE commits DROP COLUMN hash",
        "ALTER TABLE versions DROP COLUMN salt",
        "ALTER TABLE versions DROP COLUMN digest",
        "ALTER TABLE versions DROP COLUMN erased",
        ("DELETE FROM schema_migrations WHERE version = ?", CHAIN_MIGRATION),
        "DELETE FROM state WHERE namespace = 'memcommit' AND name = 'chain'",
    )


def test_the_chain_is_the_last_migration():
    names = {number: name for number, name, _ in migrations("sqlite")}
    assert names[CHAIN_MIGRATION] == "chain"
    assert {n: m for n, m, _ in migrations("postgres")}[CHAIN_MIGRATION] == "chain"


def test_an_old_history_is_hashed_once_and_says_so(make_store, clock):
    store = make_store(clock=clock)
    with store.commit() as tx:
        a = tx.add("kept", tags=["x"])
        b = tx.add("to be erased")
    with store.commit() as tx:
        tx.update(a.id, content="kept, updated")
        tx.purge(b.id)
    with store.commit() as tx:
        tx.add("third")
    before = {m.id: store.history(m.id) for m in store.find(live=False)}
    unchained(store)
    store.close()

    told = []
    store = make_store(clock=clock, progress=lambda done, total: told.append((done, total)))
    assert told and told[-1] == (8, 8)  # 5 versions, then 3 commits
    assert {m.id: store.history(m.id) for m in store.find(live=False)} == before
    report = store.verify()
    assert report.ok and report.sealed_upto == 3 and (report.commits, report.versions) == (3, 5)
    assert store.check().ok
    (state,) = rows(
        store, "SELECT value FROM state WHERE namespace = 'memcommit' AND name = 'chain'"
    )
    assert json.loads(state[0]) == {"format": 1, "sealed_upto": 3}

    with store.commit() as tx:  # new commits chain on from the hashed history
        tx.add("fourth")
    assert store.verify().ok and store.verify().sealed_upto == 3
    edit(store, ("UPDATE versions SET content = 'forged' WHERE id = ? AND version = 1", a.id))
    assert store.verify().first.memory_id == a.id


def test_reopening_hashes_nothing_again(make_store, clock):
    store = make_store(clock=clock)
    with store.commit() as tx:
        tx.add("one")
    hashes = rows(store, "SELECT seq, hash FROM commits")
    store.close()
    told = []
    again = make_store(clock=clock, progress=lambda done, total: told.append(done))
    assert told == [] and rows(again, "SELECT seq, hash FROM commits") == hashes
    assert again.verify().sealed_upto == 0


def test_a_progress_that_cannot_be_called_is_refused(make_store):
    with pytest.raises(InvalidInput) as err:
        make_store(progress="loud")
    assert err.value.field == "progress"
