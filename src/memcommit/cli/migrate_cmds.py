"""``memcommit migrate SRC DST``: copy a store to another backend with its full history."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from memcommit.cli.app import console, handle_errors, json_option, main, print_json

_PHASES = {"copy": "copying commits", "verify": "verifying memories"}


@contextlib.contextmanager
def _progress(*, quiet: bool) -> Iterator[object]:
    """A rich progress bar per phase on stderr, as a ``progress(phase, done, total)`` callback."""
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        disable=quiet,
    )
    tasks: dict[str, int] = {}

    def update(phase: str, done: int, total: int) -> None:
        if phase not in tasks:
            tasks[phase] = bar.add_task(_PHASES.get(phase, phase), total=total)
        bar.update(tasks[phase], completed=done, total=total)

    with bar:
        yield update


@main.command("migrate")
@click.argument("source", metavar="SRC")
@click.argument("target", metavar="DST")
@json_option
@handle_errors
def migrate_command(source: str, target: str, as_json: bool) -> None:
    """Copy the store SRC into the new, empty store DST, with its full history.

    SRC and DST are SQLite paths or postgresql:// URLs (``?schema=`` picks the
    schema). Every commit keeps its id, sequence number and time; versions,
    traces, tiers, use counts and state come along. The copy is then compared
    with its source row for row and checked with check(); any difference is
    an error.

    Example:

        memcommit migrate agent.db "postgresql://localhost/memory?schema=agents"
    """
    from memcommit.store.migrate import migrate

    with _progress(quiet=as_json) as progress:
        report = migrate(source, target, progress=progress)
    if as_json:
        print_json(report)
        return
    console.print(
        f"migrated {report.commits} commits, {report.versions} versions, {report.memories}"
        f" memories, {report.traces} traces, {report.usages} use counts, {report.states}"
        f" state entries; verified (head {report.head})"
    )
