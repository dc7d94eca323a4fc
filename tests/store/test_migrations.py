"""Schema migrations: applied on open, numbered, idempotent."""

from __future__ import annotations

import sqlite3

import pytest

import memcommit
from memcommit.errors import InvalidInput, SchemaTooNew
from memcommit.store.backends.migrations import migrations, require_current, upgrade
from memcommit.store.backends.sqlite import LEDGER, split_statements


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


def test_upgrade_applies_only_what_is_missing(tmp_path):
    conn = sqlite3.connect(tmp_path / "bare.db", isolation_level=None)
    ran: list[str] = []

    def execute(text, params):
        ran.append(text)
        return conn.execute(text, params)

    def again():
        upgrade("sqlite", "bare.db", execute, ledger=LEDGER, mark="?", statements=split_statements)

    again()
    applied = [n for (n,) in conn.execute("SELECT version FROM schema_migrations")]
    assert applied == [n for n, _, _ in migrations("sqlite")]
    ran.clear()
    again()  # nothing left to apply: the ledger is read, nothing else runs
    assert ran == [LEDGER, "SELECT version FROM schema_migrations"]


def test_a_read_only_open_needs_every_migration_and_no_newer_one():
    numbers = [n for n, _, _ in migrations("sqlite")]
    require_current("sqlite", numbers, "s.db")
    with pytest.raises(InvalidInput, match="not a memcommit store"):
        require_current("sqlite", None, "s.db")
    with pytest.raises(InvalidInput, match=rf"needs migrations \[{numbers[-1]}\]"):
        require_current("sqlite", numbers[:-1], "s.db")
    with pytest.raises(SchemaTooNew):
        require_current("sqlite", [*numbers, numbers[-1] + 1], "s.db")
