"""The store commands, run through click's CliRunner on a real SQLite file."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from memcommit.cli import main

COMMANDS = ("init", "add", "get", "find", "log", "show", "history", "diff", "check")


@pytest.fixture
def run(tmp_path):
    runner = CliRunner()
    path = str(tmp_path / "cli.db")

    def invoke(*args: str, ok: bool = True):
        result = runner.invoke(main, [*args, "--store", path])
        if ok:
            assert result.exit_code == 0, result.output
        return result

    invoke("init")
    return invoke


def as_json(result):
    return json.loads(result.output)


def test_add_get_find_history(run):
    added = as_json(run("add", "the user likes tea", "--key", "drink", "--tag", "pref", "--json"))
    mid = added["memory"]["id"]
    assert added["commit"]["seq"] == 1
    got = as_json(run("get", mid, "--json"))
    assert got["content"] == "the user likes tea" and got["tags"] == ["pref"]
    found = as_json(run("find", "--kind", "fact", "--json"))
    assert [m["id"] for m in found] == [mid]
    assert as_json(run("find", "--tenant", "other", "--json")) == []
    assert [v["version"] for v in as_json(run("history", mid, "--json"))] == [1]
    assert mid[-7:] in run("find").output and mid in run("find", "--wide").output
    assert "the user likes tea" in run("get", mid).output


def test_log_show_diff_as_of(run):
    first = as_json(run("add", "one", "-m", "first", "--json"))["memory"]["id"]
    run("add", "two", "-m", "second")
    log = as_json(run("log", "--json"))
    assert [c["message"] for c in log] == ["second", "first"]
    assert as_json(run("log", "--as-of", "1", "--json"))[0]["message"] == "first"
    shown = as_json(run("show", log[1]["id"], "--json"))
    assert shown["changes"][0]["memory_id"] == first
    assert [c["op"] for c in as_json(run("diff", "0", "2", "--json"))] == ["add", "add"]
    assert len(as_json(run("find", "--as-of", "1", "--json"))) == 1
    assert "second" in run("log").output and "add" in run("show", "2").output


def test_check_and_errors(run):
    assert as_json(run("check", "--json")) == {"ok": True, "problems": []}
    assert "ok" in run("check").output
    missing = run("get", "nope", ok=False)
    assert missing.exit_code == 1 and "id='nope': not found" in missing.output
    bad = run("add", "x", "--importance", "2", ok=False)
    assert bad.exit_code == 1 and "importance" in bad.output


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_an_example(command):
    result = CliRunner().invoke(main, [command, "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.output and "--json" in result.output
    assert "--store" in result.output
