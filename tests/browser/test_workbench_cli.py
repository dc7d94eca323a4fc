"""``memcommit workbench``: refuses to create a store, warns before leaving loopback."""

from __future__ import annotations

import socket
from pathlib import Path

from click.testing import CliRunner

from memcommit.cli import main


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
