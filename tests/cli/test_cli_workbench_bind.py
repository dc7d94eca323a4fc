"""``memcommit workbench --host/--port``: a bad address is one line naming the option at fault."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from memcommit.cli import main


@pytest.mark.parametrize("port", ["70000", "-1", "65536"])
def test_a_port_out_of_range_is_a_usage_error_not_a_traceback(port: str) -> None:
    result = CliRunner().invoke(main, ["workbench", "--port", port, "--no-open"])
    assert result.exit_code == 2, result.output
    assert f"{port} is not in the range 0<=x<=65535" in result.output
    assert "Traceback" not in result.output and not isinstance(result.exception, OverflowError)


@pytest.mark.parametrize(
    ("host", "reason"),
    [
        ("999.1.1.1", "cannot resolve it"),  # no such address
        ("192.0.2.1", "is not an address of this machine"),  # TEST-NET-1: never local
    ],
)
def test_a_host_that_cannot_be_bound_is_named(host: str, reason: str) -> None:
    result = CliRunner().invoke(main, ["workbench", "--host", host, "--port", "0", "--no-open"])
    assert result.exit_code == 1, result.output
    assert f"error: host='{host}': {reason}" in result.output
    assert "port=" not in result.output
