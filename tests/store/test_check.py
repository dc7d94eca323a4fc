"""check(): a healthy store passes; each broken invariant is reported (SQLite file surgery)."""

from __future__ import annotations

import sqlite3

import pytest

import memcommit
from memcommit.errors import BackendError, InvalidInput, Unavailable


@pytest.fixture
def path(tmp_path):
    target = tmp_path / "check.db"
    with memcommit.open(target) as store:
        with store.commit() as tx:
            a = tx.add("a")
            b = tx.add("b")
            tid = tx.begin_trace("task")
            tx.step(tid, "step")
        with store.commit() as tx:
            tx.supersede(a.id, b.id)
            tx.purge(b.id)
        assert store.check().ok
    return target


def broken(path, *statements):
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = OFF")
    for sql in statements:
        conn.execute(sql)
    conn.close()
    with memcommit.open(path) as store:
        report = store.check()
    assert not report.ok
    return " | ".join(report.problems)


def test_gap_in_the_sequence(path):
    assert "gap" in broken(
        path,
        "INSERT INTO commits (seq, id, parent, time, author, message, changes)"
        " VALUES (5, 'x', NULL, 't', 'a', 'm', '[]')",
    )


def test_dangling_supersede(path):
    problems = broken(
        path, "UPDATE versions SET superseded_by = 'ghost' WHERE superseded_by IS NOT NULL"
    )
    assert "superseded_by" in problems


def test_content_left_in_a_purged_memory(path):
    problems = broken(
        path,
        "UPDATE versions SET content = 'leak' WHERE status != 'purged'"
        " AND id IN (SELECT id FROM versions WHERE status = 'purged')",
    )
    assert "purged" in problems


def test_trace_link_to_nothing(path):
    assert "trace" in broken(path, "DELETE FROM traces")


def test_two_current_versions(path):
    assert "current" in broken(path, "UPDATE versions SET end_seq = NULL")


def test_a_store_in_a_missing_folder_is_bad_input(tmp_path):
    with pytest.raises(InvalidInput) as err:  # the user named it wrongly; nothing is created
        memcommit.open(tmp_path / "no" / "such" / "dir" / "x.db")
    assert err.value.field == "store" and "does not exist" in str(err.value)
    assert not (tmp_path / "no").exists()
    assert issubclass(Unavailable, BackendError)


def test_sqlite_url_form(tmp_path):
    target = f"sqlite://{tmp_path / 'url.db'}"
    with memcommit.open(target) as store, store.commit() as tx:
        tx.add("x")
    with memcommit.open(tmp_path / "url.db") as store:
        assert store.head.seq == 1
