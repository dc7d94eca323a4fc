"""``memcommit --help`` lists every command without importing any command's module.

The root group imports a command's module when that command runs; its table of
names, modules and one-line helps must say what the modules say.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys

import click
from click.testing import CliRunner

import memcommit.cli
from memcommit.cli.app import COMMANDS, main

HEAVY = ("numpy", "rich", "psycopg", "mcp", "tiktoken", "pydantic")

HELP_IN_A_FRESH_PROCESS = """
import json, sys
from memcommit.cli import main

try:
    main(["--help"], prog_name="memcommit", terminal_width=80)
except SystemExit as exit:
    code = exit.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def fresh_help() -> tuple[str, dict]:
    done = subprocess.run(
        [sys.executable, "-c", HELP_IN_A_FRESH_PROCESS],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.stdout, json.loads(done.stderr.strip().splitlines()[-1])


def load_every_command_module() -> list[str]:
    """Import every module of the CLI package, so each registers its commands; their names."""
    names = [
        f"memcommit.cli.{info.name}"
        for info in pkgutil.iter_modules(memcommit.cli.__path__)
        if info.name != "__main__"
    ]
    for name in names:
        importlib.import_module(name)
    return names


def test_help_imports_no_command_module_and_no_heavy_dependency():
    _, out = fresh_help()
    assert out["code"] == 0
    modules = out["modules"]
    heavy = [n for n in HEAVY if any(m == n or m.startswith(n + ".") for m in modules)]
    assert heavy == []
    assert not {entry.module for entry in COMMANDS.values()} & set(modules)


def test_help_lists_every_command_as_the_loaded_commands_describe_themselves():
    lazy_text, _ = fresh_help()
    load_every_command_module()
    result = CliRunner().invoke(main, ["--help"], prog_name="memcommit", terminal_width=80)
    assert result.exit_code == 0
    assert lazy_text == result.output
    for name in COMMANDS:
        assert f"\n  {name} " in lazy_text


def test_the_table_names_every_command_its_module_and_its_help():
    load_every_command_module()
    assert sorted(main.commands) == sorted(COMMANDS)
    for name, entry in COMMANDS.items():
        command = main.commands[name]
        assert command.callback.__module__ == entry.module, name
        listed = click.Command(name, help=entry.short_help)
        assert listed.get_short_help_str(10_000) == command.get_short_help_str(10_000), name


def test_a_command_runs_from_a_fresh_process(tmp_path):
    """The first use of a command imports its module, registers it and runs it."""
    store = tmp_path / "fresh.db"
    done = subprocess.run(
        [sys.executable, "-m", "memcommit", "init", "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert store.exists()
    unknown = subprocess.run(
        [sys.executable, "-m", "memcommit", "nosuch"], capture_output=True, text=True, timeout=120
    )
    assert unknown.returncode == 2
    assert "No such command 'nosuch'" in unknown.stderr
