"""``open(target, read_only=True)``: an existing store that reads and refuses every write."""

from __future__ import annotations

import sqlite3

import pytest

import memcommit
from memcommit.errors import BackendError, InvalidInput


def test_a_read_only_store_reads_and_refuses_writes(make_store, now) -> None:
    writer = make_store("ro.db")
    with writer.commit(message="seed", now=now) as tx:
        kept = tx.add("deploys happen on weekdays", tenant="acme")
    reader = make_store("ro.db", read_only=True)
    assert reader.tenant("acme").get(kept.id).content == "deploys happen on weekdays"
    with pytest.raises(BackendError, match="open read-only"), reader.commit(message="sneaky") as tx:
        tx.add("written through a read-only store", tenant="acme")
    assert writer.head.seq == 1 and writer.check().ok


def test_read_only_must_be_a_flag(make_store) -> None:
    make_store("flag.db")
    with pytest.raises(InvalidInput, match="read_only"):
        make_store("flag.db", read_only="yes")


def other_sqlite_file(path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    conn.close()


@pytest.mark.parametrize(
    ("spoil", "message"),
    [(lambda path: None, "no such store file"), (other_sqlite_file, "not a memcommit store")],
)
def test_a_sqlite_file_that_needs_a_write_is_refused_untouched(tmp_path, spoil, message) -> None:
    path = tmp_path / "spoiled.db"
    spoil(path)
    before = path.read_bytes() if path.exists() else None
    with pytest.raises(InvalidInput, match=message):
        memcommit.open(path, read_only=True)
    assert (path.read_bytes() if path.exists() else None) == before
