"""memcommit compact / merge: one library call each, --json for scripts."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from compaction_store import add_trace, later

import memcommit
from memcommit.cli import compact_cmds  # noqa: F401  (registers the commands)
from memcommit.cli.app import main


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / "cli.db")
    store = memcommit.open(path)
    for i in range(3):
        add_trace(store, "Weekly report", at=later(i), status="failed" if i == 2 else "finished")
    add_trace(store, "Still going", status="open", at=later(3))
    store.close()
    return path


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_compact_json(db) -> None:
    out = run("compact", "--store", db, "--json", "--now", later(30).isoformat())
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert len(data["traces"]) == 3 and len(data["summaries"]) == 3
    assert len(data["moved"]) == 9 and data["errors"] == []
    assert data["commits"][0]["changes"] == 3 * (1 + 3 + 1)
    assert data["summaries"][0]["task"] == "Weekly report"


def test_compact_with_filters_and_dry_run(db) -> None:
    args = ["compact", "--store", db, "--keep-failed", "3", "--now", later(30).isoformat()]
    dry = run(*args, "--dry-run", "--json")
    assert dry.exit_code == 0, dry.output
    assert len(json.loads(dry.output)) == 2
    table = run(*args)
    assert table.exit_code == 0, table.output
    assert "2 traces compacted, 6 steps archived, 0 errors" in table.output


def test_merge_json(db) -> None:
    run("compact", "--store", db, "--now", later(30).isoformat())
    out = run("merge", "--store", db, "--json", "--now", later(31).isoformat())
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert len(data["summaries"]) == 1 and len(data["superseded"]) == 3
    assert data["commit"]["changes"] == 4
    human = run("merge", "--store", db)
    assert "0 merged summaries" in human.output


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--older-than", "soon"], "older-than"),
        (["--now", "someday"], "now"),
        (["--now", "2026-13-01T00:00:00"], "now"),
        (["--keep-failed", "-1"], "records"),
    ],
)
def test_bad_options_are_one_clear_line(db, args, field) -> None:
    out = CliRunner().invoke(main, ["compact", "--store", db, *args])
    assert out.exit_code == 1
    assert out.output.startswith(f"error: {field}=")


def test_commands_have_examples() -> None:
    for name in ("compact", "merge"):
        assert "Example:" in main.commands[name].help


def test_a_big_run_shows_a_short_table(tmp_path) -> None:
    path = str(tmp_path / "big.db")
    store = memcommit.open(path)
    for i in range(25):
        add_trace(store, f"task {i}", steps=1, at=later(i))
    store.close()
    out = run("compact", "--store", path, "--now", later(60).isoformat())
    assert "... and 5 more (--json lists them all)" in out.output
    assert "25 traces compacted, 25 steps archived, 0 errors" in out.output


def test_pressure_and_tenant_options(db) -> None:
    now = later(30).isoformat()
    calm = run("compact", "--store", db, "--pressure", "100", "--per", "store", "--now", now)
    assert "0 traces compacted" in calm.output
    other = run("compact", "--store", db, "--tenant", "nobody", "--json", "--now", now)
    assert json.loads(other.output)["traces"] == []
    # 4 traces x 4 records = 16 held; each compaction frees 3 - 1 = 2, oldest first.
    tight = run("compact", "--store", db, "--pressure", "13", "--json", "--now", now)
    assert len(json.loads(tight.output)["traces"]) == 2
