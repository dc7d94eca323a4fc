"""``memcommit export`` / ``memcommit import``: a store's full history as JSON Lines."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import asdict
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from memcommit.cli.app import handle_errors, json_option, main, store_option

if TYPE_CHECKING:
    from memcommit.store.transfer import Summary


@contextlib.contextmanager
def progress_bar(label: str, *, quiet: bool) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on stderr, as a ``progress(done, total)`` callback."""
    bar = Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
        disable=quiet,
    )
    task = bar.add_task(label, total=None)

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    with bar:
        yield update


@main.command("export")
@click.argument("output", type=click.Path(dir_okay=False, allow_dash=True))
@store_option
@json_option
@handle_errors
def export_command(output: str, store_target: str, as_json: bool) -> None:
    """Write the whole store, with its full history, to OUTPUT as JSON Lines.

    Every commit, every version of every memory, traces, use counts and the
    tiers' state: `memcommit import` rebuilds the same store from it. OUTPUT
    "-" writes to stdout (the summary, --json or not, then goes to stderr).

    Example:

        memcommit export --store agent.db backup.jsonl
    """
    import memcommit
    from memcommit.store.transfer import export_file, export_jsonl

    store = memcommit.open(store_target)
    try:
        with progress_bar("exporting", quiet=as_json) as progress:
            if output == "-":
                summary = export_jsonl(store, click.get_text_stream("stdout"), progress=progress)
            else:  # through a temporary file: a failed export leaves no partial file
                summary = export_file(store, output, progress=progress)
    finally:
        store.close()
    _report("exported", summary, as_json=as_json, to_stderr=output == "-")


@main.command("import")
@click.argument("input_path", metavar="INPUT", type=click.Path(dir_okay=False, allow_dash=True))
@store_option
@json_option
@handle_errors
def import_command(input_path: str, store_target: str, as_json: bool) -> None:
    """Rebuild a store from a JSON Lines export (INPUT, or "-" for stdin).

    The target store must be empty (a new file): commits keep their ids,
    sequence numbers and times, so the import is the same history, not a copy
    of its latest state. All of it lands, or (on a bad line) nothing does.

    Example:

        memcommit import --store restored.db backup.jsonl
    """
    import memcommit
    from memcommit.store.transfer import import_jsonl

    store = memcommit.open(store_target)
    try:
        with (
            click.open_file(input_path, "r", encoding="utf-8") as source,
            progress_bar("importing", quiet=as_json) as progress,
        ):
            summary = import_jsonl(store, source, progress=progress)
    finally:
        store.close()
    _report("imported", summary, as_json=as_json, to_stderr=False)


def _report(verb: str, summary: Summary, *, as_json: bool, to_stderr: bool) -> None:
    """The counts, as JSON or a line; on stderr when stdout carries the export itself."""
    if as_json:
        text = json.dumps(asdict(summary), indent=2)
    else:
        text = f"{verb} " + ", ".join(f"{n} {name}" for name, n in asdict(summary).items())
    click.echo(text, err=to_stderr)
