"""Progress bars show to a person at a terminal, never in --json output or through a pipe."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

import memcommit
from memcommit.cli import main

pty = pytest.importorskip("pty", reason="pseudo-terminals need a POSIX system")


def at_a_terminal(*args: str) -> str:
    """What a person sees running ``memcommit ARGS`` in a terminal (stdout and stderr)."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-c", "from memcommit.cli import main; main()", *args],
        stdin=follower, stdout=follower, stderr=follower,
        env={**os.environ, "TERM": "xterm", "COLUMNS": "100"},
    )  # fmt: skip
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the process closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    assert process.wait(timeout=60) == 0, seen
    os.close(leader)
    return seen.decode(errors="replace")


@pytest.fixture
def db(tmp_path) -> str:
    path = str(tmp_path / "agent.db")
    with memcommit.open(path) as store:
        for n in range(3):
            with store.commit(message=f"commit {n}") as tx:
                tx.add(f"fact number {n}")
    return path


SIMULATE = ["tiers", "simulate", "--synthetic", "zipf", "--requests", "20000", "--capacity", "50"]


def test_a_terminal_sees_the_bars(db, tmp_path):
    assert "replaying 20,000 requests" in at_a_terminal(*SIMULATE, "--policy", "lru")
    assert "exporting" in at_a_terminal("export", str(tmp_path / "out.jsonl"), "--store", db)


def test_json_at_a_terminal_has_no_bar(db, tmp_path):
    seen = at_a_terminal(*SIMULATE, "--policy", "lru", "--json")
    assert "replaying" not in seen and "\x1b[" not in seen
    assert json.loads(seen)[0]["policy"] == "LRU"


def test_a_pipe_gets_no_bar(db, tmp_path):
    result = CliRunner().invoke(main, ["export", str(tmp_path / "out.jsonl"), "--store", db])
    assert result.exit_code == 0 and result.stderr == ""
    result = CliRunner().invoke(main, [*SIMULATE, "--policy", "fifo"])
    assert result.exit_code == 0 and result.stderr == "" and "FIFO" in result.stdout
