"""Schema migrations: applied on open, numbered, idempotent."""

from __future__ import annotations

import sqlite3

import memcommit
from memcommit.store.backends.migrations import migrations


def test_opening_twice_applies_nothing_new(tmp_path):
    path = tmp_path / "m.db"
    with memcommit.open(path) as store, store.commit() as tx:
        m = tx.add("survives reopening")
    schema_before = sqlite3.connect(path).execute("SELECT sql FROM sqlite_master").fetchall()
    with memcommit.open(path) as again:
        assert again.backend.applied_migrations() == [n for n, _, _ in migrations("sqlite")]
        assert again.get(m.id).content == "survives reopening"
        assert again.check().ok
    schema_after = sqlite3.connect(path).execute("SELECT sql FROM sqlite_master").fetchall()
    assert schema_before == schema_after


def test_two_stores_open_the_same_new_file(tmp_path):
    path = tmp_path / "both.db"
    first = memcommit.open(path)
    second = memcommit.open(path)
    with first.commit() as tx:
        tx.add("from the first")
    assert len(second.find()) == 1
    first.close()
    second.close()


def test_migrations_are_numbered_from_one_without_gaps():
    numbers = [n for n, _, _ in migrations("sqlite")]
    assert numbers == list(range(1, len(numbers) + 1))
