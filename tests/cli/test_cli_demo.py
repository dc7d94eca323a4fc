"""`memcommit demo` ends with command lines that show the data it just wrote."""

from __future__ import annotations

import shlex

from click.testing import CliRunner

from memcommit.cli import main


def test_the_closing_commands_show_the_demo_data(tmp_path):
    path = tmp_path / "demo dir" / "memcommit.db"  # a space: the lines must quote the path
    path.parent.mkdir()
    runner = CliRunner()
    demo = runner.invoke(main, ["demo", "--store", str(path)], env={"COLUMNS": "80"})
    assert demo.exit_code == 0, demo.output
    tail = demo.stdout.splitlines()[-4:]
    assert tail[0] == "Explore what the session wrote (tenant acme):"
    lines = [shlex.split(line) for line in tail[1:]]
    assert all(words[0] == "memcommit" for words in lines)
    # wide enough that no cell wraps: a message's words stay on one line whatever the ids
    wide = {"COLUMNS": "200"}
    log, find, recall = (runner.invoke(main, words[1:], env=wide) for words in lines)
    assert log.exit_code == find.exit_code == recall.exit_code == 0
    assert "learn the project" in log.stdout and "7 commits" in log.stdout
    assert "11 memories in tenant 'acme'" in find.stdout
    assert "2 selected" in recall.stdout and "superseded" in recall.stdout
