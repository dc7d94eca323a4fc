"""A scrub a purge still owes is never forgotten: recorded in the purge's own commit, retried by
the next purge, by a process's first commit and by ``memcommit scrub``, and named until done."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import uuid

import pytest
from click.testing import CliRunner
from faults_helpers import files_of, holding

import memcommit
from memcommit.cli import main

KILLED_BEFORE_THE_SCRUB = """
import os, sys
import memcommit
from memcommit.store.core import Core

Core._scrub_owed = lambda self, purged: os._exit(0)  # the purge landed; the process dies
store = memcommit.open(sys.argv[1])
with store.commit(message="purge", author="t") as tx:
    tx.purge(sys.argv[2])
"""


@pytest.fixture
def secret() -> str:
    return f"card number is 4111 {uuid.uuid4().hex} {uuid.uuid4().hex}"


def remember(store, secret: str) -> str:
    with store.commit(message="remember", author="t") as tx:
        memory_id = tx.add(secret, tenant="acme").id
        tx.add("A neighbour row that stays.", tenant="acme")
    return memory_id


def test_a_process_killed_before_its_scrub_leaves_it_owed_and_the_next_one_does_it(
    own_store, secret
):
    store, url = own_store
    target = url or store.backend.target
    memory_id = remember(store, secret)
    script = [sys.executable, "-c", textwrap.dedent(KILLED_BEFORE_THE_SCRUB)]
    done = subprocess.run([*script, target, memory_id], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert store.get(memory_id).status == "purged"
    assert store.scrub_pending() == ["acme"]
    assert store.tenant("acme").scrub_pending() == ["acme"]
    assert store.tenant("globex").scrub_pending() == []  # a view sees only its own tenant
    assert holding(files_of(store, url), secret[20:60])  # the copies the scrub was to remove
    with memcommit.open(target) as later:  # the next process: its first commit, any tenant
        with later.commit(message="other work", author="t") as tx:
            tx.add("Nothing to do with the purge.", tenant="globex")
        assert later.scrub_pending() == []
    assert holding(files_of(store, url), secret[20:60]) == []


@pytest.mark.postgres
def test_a_scrub_a_reader_held_back_is_named_until_memcommit_scrub_does_it(
    own_postgres_store, secret
):
    """(SQLite's reader case, which waits out a busy timeout: test_faults_erasure.py,
    test_a_scrub_held_back_by_a_reader_lets_every_writer_through.)"""
    import psycopg

    store, url = own_postgres_store
    memory_id = remember(store, secret)
    with psycopg.connect(url) as reader:  # a snapshot from before the purge keeps the rows alive
        reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        reader.execute("SELECT count(*) FROM pg_class").fetchone()  # (a snapshot, no lock)
        forget = ["forget", memory_id, "--purge", "--yes", "--store", url, "--tenant", "acme"]
        purged = CliRunner().invoke(main, forget)
        assert purged.exit_code == 0, purged.output
        assert "memcommit scrub --tenant acme" in purged.stderr
        assert store.scrub_pending() == ["acme"]
        held = CliRunner().invoke(main, ["scrub", "--store", url, "--json"])  # + what is owed
        assert held.exit_code == 1
        assert json.loads(held.stdout) == {"clean": False, "pending": ["acme"]}
        reader.rollback()
    done = CliRunner().invoke(main, ["scrub", "--store", url, "--tenant", "acme"])
    assert done.exit_code == 0, done.output
    assert "no copy of purged content is left" in done.output
    assert store.scrub_pending() == []
    assert holding(files_of(store, url), secret[20:60]) == []


def test_a_purge_landing_while_a_scrub_runs_stays_owed(make_store, monkeypatch):
    """A scrub settles only the counts it read before it began."""
    from memcommit.store import scrub_owed

    store = make_store()
    ids = []
    with store.commit(message="remember", author="t") as tx:
        ids = [tx.add(f"note {n}", tenant="acme").id for n in range(2)]
    backend = store.backend
    real = backend.scrub

    def scrub_while_another_purge_lands(tenants=None):
        backend.begin()
        scrub_owed.record(backend, ["acme"])  # another process's purge, landed meanwhile
        backend.commit()
        return real(tenants)

    monkeypatch.setattr(backend, "scrub", scrub_while_another_purge_lands)
    with store.commit(message="purge", author="t") as tx:
        tx.purge(ids[0])
    assert store.scrub_pending() == ["acme"]  # the purge that landed meanwhile is still owed
    monkeypatch.undo()
    assert store.scrub() is True and store.scrub_pending() == []
