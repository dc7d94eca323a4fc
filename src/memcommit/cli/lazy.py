"""A click group that imports a command's module only when that command is needed.

``memcommit --help`` lists every command from a table of names, modules and
one-line helps, without importing a command module (and rich, numpy, the MCP
SDK or the workbench behind them). Running a command, or asking for its own
``--help``, imports its module, which registers its commands on the group as
usual (``@main.command(...)``). A test holds the table to the modules.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, NamedTuple

import click


class Entry(NamedTuple):
    """Where a command is defined, and the first paragraph of its help."""

    module: str
    short_help: str


class LazyGroup(click.Group):
    """A group whose commands come from ``lazy``: name -> Entry, loaded on first use."""

    def __init__(self, *args: Any, lazy: Mapping[str, Entry], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command, importing the module that registers it the first time."""
        if cmd_name not in self.commands and cmd_name in self.lazy:
            importlib.import_module(self.lazy[cmd_name].module)
        return self.commands.get(cmd_name)

    def summary(self, name: str, limit: int) -> str:
        """A command's line in the group's help: its own if loaded, else the table's."""
        command = self.commands.get(name) or click.Command(name, help=self.lazy[name].short_help)
        return command.get_short_help_str(limit)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The "Commands" section, laid out as click lays it out, from the table."""
        names = [
            name
            for name in self.list_commands(ctx)
            if name in self.lazy or not self.commands[name].hidden
        ]
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, self.summary(name, limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)
