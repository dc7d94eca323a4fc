"""Recall's live index follows the store's own history, even when it goes back, and lets go."""

from __future__ import annotations

import gc
import sqlite3
import weakref

import memcommit
from memcommit.recall.index.live import store_index


def contents(store, query: str) -> list[str]:
    return [m.content for m in store.tenant("a").recall(query, max_records=3).selected]


def copy_file(source, target) -> None:
    """SQLite's online backup of ``source`` into ``target`` (a restore, seen from a reader)."""
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)


def test_a_commit_it_saw_that_the_store_lost_leaves_no_trace_in_answers_or_snapshots(
    tmp_path,
):
    """A commit can be seen and then lost (PostgreSQL's asynchronous commit and a server
    crash, a failover, a restore); the next commit takes its seq. The index must not keep
    the lost version, skip the new commit, or stamp a snapshot with the new commit's id."""
    path, backup = tmp_path / "m.db", tmp_path / "backup.db"
    writer = memcommit.open(path)
    with writer.commit(message="seed") as tx:
        for i in range(300):
            tx.add(f"filler note number {i} about gardening", tenant="a")
        tea = tx.add("the user drinks tea every morning", tenant="a")
    copy_file(path, backup)
    reader = memcommit.open(path)  # a recall service that stays up
    assert contents(reader, "tea") == [tea.content]
    with writer.commit(message="to be lost") as tx:
        tx.update(tea.id, content="the user drinks coffee every morning")
    assert contents(reader, "coffee") == ["the user drinks coffee every morning"]
    copy_file(backup, path)  # commit 2 is gone
    with writer.commit(message="another commit 2") as tx:
        tx.add("an unrelated quokka note", tenant="a")
    expected = {"coffee": [], "tea": [tea.content], "quokka": ["an unrelated quokka note"]}
    assert {q: contents(reader, q) for q in expected} == expected
    assert store_index(reader).save("a") is not None
    with memcommit.open(path) as fresh:  # opens the reader's snapshot
        assert {q: contents(fresh, q) for q in expected} == expected
        assert store_index(fresh).opened["a"] == "loaded, caught up 0 memories"
    reader.close()
    writer.close()


def test_a_closed_store_that_recalled_is_let_go(tmp_path):
    """Its live index (every tenant's, and its mapped snapshots) goes with it: a process
    that opens and closes stores does not keep them."""
    path = tmp_path / "m.db"
    with memcommit.open(path) as store, store.commit(message="seed") as tx:
        for i in range(300):
            tx.add(f"note {i} about topic {i % 7}", tenant="a")
    gone = []
    for _ in range(3):
        store = memcommit.open(path)
        assert contents(store, "topic")
        gone.append(weakref.ref(store))
        store.close()
        del store
    gc.collect()
    assert [ref() for ref in gone] == [None, None, None]
