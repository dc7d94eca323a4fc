"""The README's command-line lines run as they are written (with the id the add printed)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from click.testing import CliRunner

from memcommit.cli import main

README = Path(__file__).resolve().parents[2] / "README.md"
SHOWN_ID = "…4be01f3"


def readme_cli_lines() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("The same operations are on the command line", 1)[1]
    block = re.search(r"```sh\n(.+?)\n```", section, flags=re.S)
    assert block is not None
    return block[1].splitlines()


def test_the_readme_cli_lines_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default store is ./memcommit.db
    monkeypatch.delenv("MEMCOMMIT_STORE", raising=False)
    monkeypatch.delenv("MEMCOMMIT_TENANT", raising=False)
    runner = CliRunner()
    short = None
    for line in readme_cli_lines():
        words = shlex.split(line, comments=True)
        assert words[0] == "memcommit"
        if short is not None:
            words = [short if word == SHOWN_ID else word for word in words]
        result = runner.invoke(main, words[1:], input="y\n")
        assert result.exit_code == 0, f"{line}\n{result.output}"
        if words[1] == "add":
            short = "…" + result.stdout.split()[1][-7:]
        if words[1] == "find":  # the table's short id may be longer: it holds a letter
            assert short.removeprefix("…") in result.stdout
    assert (tmp_path / "memcommit.db").exists()
