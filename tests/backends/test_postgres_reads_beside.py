"""PostgreSQL: a thread's reads never wait for another thread's open commit on the same Store.

A commit held up (waiting for a tenant's lock, a purge rewriting a partition, a
caller's slow Python inside its block) must not stall every other reader in the
process: an MCP server for many tenants, or an agent host, shares one Store.
"""

from __future__ import annotations

import threading

import pytest

import memcommit

pytestmark = pytest.mark.postgres


@pytest.fixture
def store(pg_url):
    with memcommit.open(pg_url()) as opened:
        with opened.commit(message="seed") as tx:
            tx.add("Deploys happen on Tuesdays.", tenant="acme", key="deploy")
            tx.add("The office is in Lyon.", tenant="other")
        yield opened


def _holding(store, entered: threading.Event, release: threading.Event) -> threading.Thread:
    """A thread whose commit in tenant acme stays open (ordered, so it holds the writers'
    lock) until ``release`` is set."""

    def hold() -> None:
        with store.tenant("acme").commit(message="slow") as tx:
            tx.add("Written by the slow commit.")
            store.tenant("acme").find()  # a read inside the block: ordered from here
            entered.set()
            assert release.wait(20)

    thread = threading.Thread(target=hold)
    thread.start()
    assert entered.wait(20)
    return thread


def test_reads_in_another_thread_run_beside_an_open_commit(store):
    entered, release = threading.Event(), threading.Event()
    holder = _holding(store, entered, release)
    seen: dict[str, object] = {}

    def read() -> None:
        other = store.tenant("other")
        seen["other"] = [m.content for m in other.find()]
        seen["acme"] = [m.content for m in store.tenant("acme").find()]
        seen["recall"] = [r.memory.content for r in other.recall("office", now=None).rows]
        seen["log"] = len(store.log())
        seen["tenants"] = store.tenants()

    reader = threading.Thread(target=read)
    reader.start()
    reader.join(10)
    finished_first = not reader.is_alive()
    release.set()
    holder.join(20)
    reader.join(20)
    assert finished_first, "a read waited for another thread's open commit"
    assert seen["other"] == ["The office is in Lyon."] == seen["recall"]
    assert seen["acme"] == ["Deploys happen on Tuesdays."]  # nothing of the open commit
    assert seen["log"] == 1 and seen["tenants"] == ["acme", "other"]
    assert len(store.log()) == 2 and store.verify().ok


def test_memcommit_open_reads_beside_commits_on_postgres_only(store, tmp_path):
    assert store.backend.reads_beside_commits
    with memcommit.open(tmp_path / "s.db") as local:
        assert not local.backend.reads_beside_commits
