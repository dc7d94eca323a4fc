"""``memcommit export`` / ``memcommit import``: a store's full history as JSON Lines."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING

import click

from memcommit.cli.app import handle_errors, json_option, main, store_option
from memcommit.cli.opening import open_store
from memcommit.cli.progress import progress_bar
from memcommit.errors import InvalidInput

if TYPE_CHECKING:
    from memcommit.store.transfer import Summary


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

    The last line is a trailer: the count of lines before it and their SHA-256,
    so `import` refuses a truncated or damaged file. The trailer detects
    accidents, not tampering: whoever edits the file can recompute it, and an
    edited file that is consistent with itself imports.

    Example:

        memcommit export --store agent.db backup.jsonl
    """
    from memcommit.store.transfer import export_file, export_jsonl

    store = open_store(store_target, create=False)
    try:
        with progress_bar("exporting", as_json=as_json or output == "-") as progress:
            if output == "-":
                summary = export_jsonl(store, click.get_text_stream("stdout"), progress=progress)
            else:  # through a temporary file: a failed export leaves no partial file
                summary = export_file(store, output, progress=progress)
    finally:
        store.close()
    _report("exported", summary, as_json=as_json, to_stderr=output == "-")


@main.command("import")
@click.argument("input_path", metavar="INPUT", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--expect", help="A witness line: refuse an export behind it or forked from it.")
@store_option
@json_option
@handle_errors
def import_command(input_path: str, expect: str | None, store_target: str, as_json: bool) -> None:
    """Rebuild a store from a JSON Lines export (INPUT, or "-" for stdin).

    The target store must be empty (a new file): commits keep their ids,
    sequence numbers and times, so the import is the same history, not a copy
    of its latest state. Every commit's hash is recomputed and must be the one
    exported. All of it lands, or (on a bad line) nothing does.

    Example:

        memcommit import --store restored.db --expect "$(cat agent.witness)" backup.jsonl
    """
    with click.open_file(input_path, "r", encoding="utf-8") as source:
        source.read(0)  # a missing or unreadable INPUT fails here, before a store is created
        _import(store_target, source, as_json=as_json, expect=expect)


def _import(store_target: str, source, *, as_json: bool, expect: str | None = None) -> None:
    from memcommit.recall.index.prepare import prepare
    from memcommit.store.transfer import import_jsonl

    store = open_store(store_target, create=True)
    try:
        head = store.head
        if head is not None:
            raise InvalidInput(
                "store", store_target, f"has {head.seq} commits; import only into a new, empty one"
            )
        with progress_bar("importing", as_json=as_json) as progress:
            summary = import_jsonl(store, source, progress=progress, expect=expect)
        with progress_bar("indexing", as_json=as_json) as progress:
            prepare(store, progress)  # the first recall of a fresh process opens a snapshot
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
