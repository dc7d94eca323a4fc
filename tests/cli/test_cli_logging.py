"""Library log records and warnings stay off a CLI user's terminal unless --verbose asks."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

import memcommit


def memcommit_cli(*args: str) -> subprocess.CompletedProcess:
    """The real command in a process of its own: its stderr is what a user would see."""
    code = "from memcommit.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def refusing_store(postgres_server):
    """A PostgreSQL store whose server warns, then refuses every commit, after it began."""
    import psycopg

    schema = f"test_{uuid.uuid4().hex[:16]}"
    memcommit.open(f"{postgres_server}?schema={schema}").close()
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(
            f"CREATE FUNCTION {schema}.refuse() RETURNS trigger LANGUAGE plpgsql AS"
            " $$ BEGIN RAISE WARNING 'the disk is nearly full';"
            " RAISE EXCEPTION 'the disk quota is exhausted'; END $$"
        )
        conn.execute(
            f"CREATE TRIGGER refuse BEFORE INSERT ON {schema}.commits"
            f" FOR EACH ROW EXECUTE FUNCTION {schema}.refuse()"
        )
    yield f"{postgres_server}?schema={schema}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


def test_a_failed_postgresql_commit_is_one_line(refusing_store):
    result = memcommit_cli("add", "a fact", "--store", refusing_store)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "the disk quota is exhausted" in lines[0]


def test_verbose_shows_the_library_log(refusing_store):
    result = memcommit_cli("--verbose", "add", "a fact", "--store", refusing_store)
    assert result.returncode == 1
    assert "WARNING memcommit.postgres: server WARNING: the disk is nearly full" in result.stderr
    assert result.stderr.splitlines()[-1].startswith("error: ")


def test_python_warnings_go_through_logging(tmp_path):
    script = (
        "import warnings, click\n"
        "from memcommit.cli import main\n"
        "@main.command('warn-once', hidden=True)\n"
        "def warn_once():\n"
        "    warnings.warn('a library warning')\n"
        "    click.echo('done')\n"
        "main()\n"
    )
    quiet = subprocess.run(
        [sys.executable, "-c", script, "warn-once"], capture_output=True, text=True, timeout=60
    )
    assert quiet.returncode == 0 and quiet.stdout == "done\n" and quiet.stderr == ""
    loud = subprocess.run(
        [sys.executable, "-c", script, "-v", "warn-once"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "a library warning" in loud.stderr
