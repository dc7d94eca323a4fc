"""Generate the CLI reference (docs/cli.md) from the commands' own --help texts.

The reference is never edited by hand: a test compares the checked-in file with
``reference()``, so the docs cannot drift from the code.

    python -m memcommit.cli.docs            # rewrite docs/cli.md
    python -m memcommit.cli.docs --check    # exit 1 if docs/cli.md is stale
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import click

#: Width the help texts are wrapped at, fixed so the output does not depend on the terminal.
WIDTH = 88
DOCS_PATH = Path(__file__).resolve().parents[3] / "docs" / "cli.md"

HEADER = """\
# memcommit command line reference

Generated from the commands' `--help` texts by `python -m memcommit.cli.docs`;
do not edit by hand (a test fails when this file and the code disagree).
"""


def commands(
    group: click.Group, ctx: click.Context
) -> Iterator[tuple[click.Command, click.Context]]:
    """Every command under ``group`` (groups too), depth first, sorted by name."""
    for name in sorted(group.list_commands(ctx)):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        sub = click.Context(command, info_name=name, parent=ctx, max_content_width=WIDTH)
        yield command, sub
        if isinstance(command, click.Group):
            yield from commands(command, sub)


def root_context() -> click.Context:
    """A context for the ``memcommit`` group with a fixed width."""
    from memcommit.cli import main

    return click.Context(
        main,
        info_name="memcommit",
        max_content_width=WIDTH,
        terminal_width=WIDTH,
        **main.context_settings,
    )


def reference() -> str:
    """The whole CLI reference as Markdown."""
    root = root_context()
    parts = [HEADER, _section(root.command_path, root.command.get_help(root))]
    for command, ctx in commands(root.command, root):  # type: ignore[arg-type]
        parts.append(_section(ctx.command_path, command.get_help(ctx)))
    return "\n".join(parts)


def _section(path: str, help_text: str) -> str:
    level = "#" * min(2 + path.count(" "), 4)
    return f"{level} `{path}`\n\n```text\n{help_text.rstrip()}\n```\n"


def main(argv: list[str] | None = None) -> int:
    """Write docs/cli.md, or with --check report whether it is current."""
    args = sys.argv[1:] if argv is None else argv
    text = reference()
    if "--check" in args:
        current = DOCS_PATH.read_text(encoding="utf-8") if DOCS_PATH.exists() else ""
        if current != text:
            print(f"{DOCS_PATH} is stale: run python -m memcommit.cli.docs", file=sys.stderr)
            return 1
        return 0
    DOCS_PATH.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
