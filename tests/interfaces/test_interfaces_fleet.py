"""examples/fleet.py runs as shipped on PostgreSQL, and the store it leaves holds up on its own."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

import memcommit

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fleet.py"


def _fleet(server: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLE), "--postgres", server, "--agents", "3", "--turns", "15",
         *extra],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.mark.postgres
def test_the_fleet_lands_every_commit_once_and_drops_its_schema(postgres_server):
    done = _fleet(postgres_server)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "90 commits in" in done.stdout
    assert "verify: 90 commits and 90 versions re-derived, ok" in done.stdout
    assert "no recall crossed tenants" in done.stdout
    schema = re.search(r"dropped: schema (\w+)", done.stdout).group(1)
    with psycopg.connect(postgres_server) as conn:
        left = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,))
        assert left.fetchone() is None, f"{schema} was not dropped"


@pytest.mark.postgres
def test_the_store_a_fleet_leaves_holds_up_read_by_another_process(postgres_server):
    done = _fleet(postgres_server, "--keep")
    assert done.returncode == 0, done.stdout + done.stderr
    schema, url = re.search(r"kept: schema (\w+): (\S+)", done.stdout).groups()
    try:
        with memcommit.open(url) as store:
            assert store.tenants() == ["team", "user-0", "user-1", "user-2"]
            assert [c.seq for c in reversed(store.log())] == list(range(1, 91))
            for number in range(3):
                view = store.tenant(f"user-{number}")
                assert {m.key for m in view.find()} == {f"service-{t}" for t in range(15)}
                found = view.recall("which service do I own", max_records=5)
                assert found.selected and {m.tenant for m in found} == {f"user-{number}"}
            notes = store.tenant("team").find()
            assert sorted(m.content for m in notes) == sorted(
                f"agent {a} finished turn {t} for user-{a}" for a in range(3) for t in range(15)
            )
            assert store.verify().ok and store.check().ok
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.mark.parametrize("option", ["--agents", "--turns"])
def test_a_fleet_of_nothing_is_refused_by_name(option):
    done = _fleet("postgresql://postgres@127.0.0.1:1/none", option, "0")
    assert done.returncode == 2
    assert f"argument {option}: must be 1 or more, not 0" in done.stderr


def test_no_server_is_one_line_and_exit_2():
    """A server that takes no connection: one line naming the URL, no traceback, no schema."""
    done = _fleet("postgresql://postgres@127.0.0.1:1/none?connect_timeout=3")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("no PostgreSQL to run on: postgresql: cannot open")
    assert "Traceback" not in done.stderr and done.stdout == ""
