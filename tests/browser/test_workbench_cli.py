"""``memcommit workbench``: reads a store without writing to it, warns before leaving loopback."""

from __future__ import annotations

import contextlib
import hashlib
import json
import socket
import sqlite3
import urllib.request
import uuid
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from workbench_helpers import running

import memcommit
from memcommit.cli import main
from memcommit.cli.workbench_cmds import open_source
from memcommit.errors import BackendError, InvalidInput
from memcommit.workbench import make_server


def make_store_file(path: Path) -> int:
    """A small two-tenant store, closed; the seq of its head."""
    with memcommit.open(str(path)) as store:
        with store.commit(message="seed") as tx:
            tx.add("deploy notes for alpha", tenant="alpha")
            tx.add("deploy notes for beta", tenant="beta")
        with store.commit(message="more") as tx:
            tx.add("rollback notes for alpha", tenant="alpha", kind="procedure")
        return store.head.seq


def fingerprint(path: Path) -> tuple[str, int]:
    """The file's bytes (as a hash) and its modification time."""
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


def test_help_ends_with_an_example() -> None:
    result = CliRunner().invoke(main, ["workbench", "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.output and "--no-open" in result.output


def test_missing_store_file_is_refused_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "nope.db"
    result = CliRunner().invoke(main, ["workbench", "--store", str(missing), "--no-open"])
    assert result.exit_code == 1
    assert "store=" in result.output and "no such store file" in result.output
    assert not missing.exists()


def test_non_loopback_host_warns_and_a_busy_port_is_an_error() -> None:
    with socket.socket() as busy:
        busy.bind(("0.0.0.0", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = CliRunner().invoke(
            main, ["workbench", "--host", "0.0.0.0", "--port", str(port), "--no-open"]
        )
    assert result.exit_code == 1
    assert "warning: binding 0.0.0.0" in result.output
    assert f"port={port}" in result.output


def test_the_page_reads_the_store_without_ever_writing_to_it(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    head = make_store_file(path)
    before = fingerprint(path)
    source = open_source(str(path))
    try:
        for url in running(make_server(source)):
            for endpoint in (
                "api/config",
                "api/recall?tenant=alpha&query=deploy+notes",
                "api/rows?tenant=alpha&query=deploy+notes",
                "api/log?tenant=alpha",
                "api/tiers?tenant=beta",
            ):
                with urllib.request.urlopen(url + endpoint) as response:
                    assert response.status == 200 and json.load(response)
        refused = pytest.raises(BackendError, match="readonly")  # SQLite itself refuses writes
        with refused, source.store.commit(message="sneaky") as tx:
            tx.add("written by the workbench", tenant="alpha")
    finally:
        source.close()
    assert fingerprint(path) == before
    with memcommit.open(str(path)) as store:
        assert store.head.seq == head


def spoiling(path: Path) -> contextlib.closing[sqlite3.Connection]:
    """A connection closed on leaving (a connection left to the collector would checkpoint
    its WAL into the file at some later moment, after the test took its fingerprint)."""
    return contextlib.closing(sqlite3.connect(path, isolation_level=None))


def drop_last_migration(path: Path) -> None:
    with spoiling(path) as conn:
        conn.execute(
            "DELETE FROM schema_migrations"
            " WHERE version = (SELECT max(version) FROM schema_migrations)"
        )


def rollback_journal(path: Path) -> None:
    with spoiling(path) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")


def not_memcommit(path: Path) -> None:
    path.unlink()
    with spoiling(path) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        (drop_last_migration, "needs migrations"),
        (rollback_journal, "journal mode"),
        (not_memcommit, "not a memcommit store"),
    ],
)
def test_a_store_that_would_need_a_write_is_refused_untouched(
    tmp_path: Path, spoil, message
) -> None:
    path = tmp_path / "memories.db"
    make_store_file(path)
    spoil(path)
    before = fingerprint(path)
    result = CliRunner().invoke(
        main, ["workbench", "--store", str(path), "--port", "0", "--no-open"]
    )
    assert result.exit_code == 1
    assert "store=" in result.output and message in result.output
    assert fingerprint(path) == before


def test_a_postgresql_store_is_opened_read_only_and_never_created(postgres_server) -> None:
    schema = f"wb_{uuid.uuid4().hex[:12]}"
    url = f"{postgres_server}?schema={schema}"
    with pytest.raises(InvalidInput, match="holds no memcommit store yet"):
        open_source(url)  # a missing store is refused, not created
    with psycopg.connect(postgres_server) as conn:
        created = conn.execute(
            "SELECT 1 FROM information_schema.schemata WHERE schema_name = %s", (schema,)
        ).fetchone()
    assert created is None
    store = memcommit.open(url)
    try:
        with store.commit(message="seed") as tx:
            tx.add("deploy notes for alpha", tenant="alpha")
        head = store.head_seq
        source = open_source(url)
        with (
            pytest.raises(BackendError, match="read-only"),
            source.store.commit(message="sneaky") as tx,
        ):
            tx.add("must not land", tenant="alpha")
        assert store.head_seq == head
        source.store.close()
    finally:
        store.close()
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
