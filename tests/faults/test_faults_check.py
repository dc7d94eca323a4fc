"""check() reads every row and finds a change without its version (defect 6)."""

from __future__ import annotations

import sqlite3

import pytest

import memcommit
from memcommit.errors import InvalidInput


@pytest.fixture
def flipped(tmp_path, now):
    """A closed SQLite store where one byte of a scope's text was flipped in the last page."""
    path = tmp_path / "damaged.db"
    with memcommit.open(path) as store:
        with store.commit(message="m", author="t", now=now) as tx:
            for n in range(40):
                tx.add(f"memory number {n}", tenant="acme", scope="zzscopezz")
        assert store.check().ok
    data = bytearray(path.read_bytes())
    page = 4096
    last = len(data) - page
    at = data.index(b"zzscopezz", last)
    data[at + 2] = 0xFF  # no longer UTF-8
    path.write_bytes(bytes(data))
    return path


def test_a_flipped_byte_in_the_last_page_is_found(flipped):
    with memcommit.open(flipped) as store:
        report = store.check()
        assert not report.ok
        assert any("cannot be read" in problem for problem in report.problems)
        assert not store.check(full=True).ok


def test_full_must_be_a_bool(make_store):
    with pytest.raises(InvalidInput) as caught:
        make_store().check(full="yes")
    assert caught.value.field == "full"


def test_a_change_without_its_version_is_found(make_store, store_backend, request, now):
    store = make_store()
    with store.commit(message="m", author="t", now=now) as tx:
        kept = tx.add("kept", tenant="acme")
        lost = tx.add("lost", tenant="acme")
    assert store.check(full=True).ok
    sql = f"DELETE FROM versions WHERE id = '{lost.id}'"  # what a cut backup restores
    if store_backend == "sqlite":
        with sqlite3.connect(store.backend.target) as conn:
            conn.execute(sql)
    else:
        import psycopg

        url = request.getfixturevalue("postgres_server")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'SET search_path TO "{store.backend.schema}"')
            conn.execute(sql)
    report = store.check()
    assert not report.ok
    assert any("not stored" in problem and lost.id in problem for problem in report.problems)
    assert kept.id not in " ".join(report.problems)
