"""The CLI documents itself: docs/cli.md comes from --help, and every command has an example."""

from __future__ import annotations

import click
import pytest

from memcommit.cli.docs import DOCS_PATH, commands, reference, root_context

#: Commands that run a server until stopped instead of printing data: no --json for them.
SERVERS = {"mcp", "workbench"}


def all_commands() -> list[tuple[str, click.Command, click.Context]]:
    root = root_context()
    found = [(root.command_path, root.command, root)]
    found += [(ctx.command_path, cmd, ctx) for cmd, ctx in commands(root.command, root)]
    return found


COMMANDS = all_commands()


def test_cli_reference_is_current():
    assert DOCS_PATH.read_text(encoding="utf-8") == reference(), (
        "docs/cli.md is stale: run python -m memcommit.cli.docs"
    )


@pytest.mark.parametrize(("path", "command", "ctx"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_help_ends_with_an_example(path, command, ctx):
    text = command.get_help(ctx)
    assert "Example" in text, f"{path} --help has no example"
    example = text.split("Example", 1)[1]
    assert "memcommit" in example, f"{path}: the example does not show a command line"


@pytest.mark.parametrize(("path", "command", "ctx"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_commands_that_print_data_offer_json(path, command, ctx):
    if isinstance(command, click.Group) or command.name in SERVERS:
        return
    options = {opt for param in command.params for opt in getattr(param, "opts", ())}
    assert "--json" in options, f"{path} prints data but has no --json"


def test_help_flag_works_for_every_command():
    from click.testing import CliRunner

    from memcommit.cli import main

    runner = CliRunner()
    for path, _, _ in COMMANDS:
        args = [*path.split()[1:], "--help"]
        result = runner.invoke(main, args)
        assert result.exit_code == 0, f"{path} --help: {result.output}"
        assert "Usage:" in result.output
