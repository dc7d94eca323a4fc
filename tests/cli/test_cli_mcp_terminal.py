"""``memcommit mcp`` typed at a terminal says what it is, instead of waiting in silence.

The server's stdin is a pseudo-terminal here, as when a person runs it; a client
(pipes, as the SDK starts it) hears nothing of the sort.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path


def first_words(stdin: int, store: Path) -> str:
    """What the server prints on stderr in its first seconds (it is stopped after)."""
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "memcommit"),
            "mcp",
            "--store",
            str(store),
            "--tenant",
            "me",
        ],
        stdin=stdin,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        said = b""
        deadline = time.monotonic() + 60
        while b"\n" not in said and time.monotonic() < deadline:
            ready, _, _ = select.select([server.stderr], [], [], 1)
            if ready:
                chunk = os.read(server.stderr.fileno(), 4096)
                if not chunk:
                    break
                said += chunk
        return said.decode()
    finally:
        server.kill()
        server.wait(timeout=30)


def test_at_a_terminal_the_server_says_what_it_is(tmp_path):
    leader, follower = pty.openpty()
    try:
        said = first_words(follower, tmp_path / "agent.db")
    finally:
        os.close(leader)
        os.close(follower)
    assert said.startswith("memcommit MCP server for tenant 'me' on stdio")
    assert "Ctrl-C stops it" in said


def test_ctrl_c_at_a_terminal_stops_the_server_without_enter(tmp_path):
    """Before, the stdio reader thread held the process until a line was typed."""
    import signal

    leader, follower = pty.openpty()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "memcommit"), "mcp", "--store",
         str(tmp_path / "agent.db"), "--tenant", "me"],
        stdin=follower, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    try:
        said = b""
        deadline = time.monotonic() + 60
        while b"Ctrl-C stops it" not in said and time.monotonic() < deadline:
            ready, _, _ = select.select([server.stderr], [], [], 1)
            if ready:
                said += os.read(server.stderr.fileno(), 4096)
        time.sleep(1.0)  # the server is serving: its reader waits on the terminal
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) == 128 + signal.SIGINT  # no Enter was typed
        assert b"stopped" in said + server.stderr.read()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=30)
        os.close(leader)
        os.close(follower)
