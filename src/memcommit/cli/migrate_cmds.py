"""``memcommit migrate SRC DST``: copy a store to another backend with its full history."""

from __future__ import annotations

import click

from memcommit.cli.app import console, handle_errors, json_option, main, print_json
from memcommit.cli.opening import open_store, require_file
from memcommit.cli.progress import phase_bars, progress_bar
from memcommit.store.backends import scheme_of

_PHASES = {"copy": "copying commits", "verify": "verifying memories"}


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
    from memcommit.recall.index.prepare import prepare
    from memcommit.store.migrate import migrate

    require_file(source, field="source")
    reading = {"read_only": True} if scheme_of(source) == "postgresql" else None
    with phase_bars(_PHASES, as_json=as_json) as progress:
        report = migrate(source, target, progress=progress, source_options=reading)
    with open_store(target) as copied, progress_bar("indexing", as_json=as_json) as indexing:
        prepare(copied, indexing)  # the first recall of a fresh process opens a snapshot
    if as_json:
        print_json(report)
        return
    console().print(
        f"migrated {report.commits} commits, {report.versions} versions, {report.memories}"
        f" memories, {report.traces} traces, {report.usages} use counts, {report.states}"
        f" state entries, {report.vectors} vectors; verified (head {report.head})"
    )
