"""The ``memcommit`` command group and what every command shares.

Each command opens the store, calls one library method, and prints either a
rich table for people or ``--json`` for scripts. Library errors become one
clear line and a non-zero exit code; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from dataclasses import asdict, is_dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import click

from memcommit.cli.lazy import Entry, LazyGroup
from memcommit.errors import InvalidInput, MemcommitError

if TYPE_CHECKING:
    from rich.console import Console

DEFAULT_STORE = "memcommit.db"

_STORE = "memcommit.cli.store_cmds"
_COMPACT = "memcommit.cli.compact_cmds"
_TRANSFER = "memcommit.cli.transfer_cmds"

#: Every command: the module that registers it, imported when the command runs, and the
#: first paragraph of its help, which ``memcommit --help`` shows without that import.
COMMANDS = {
    "add": Entry(_STORE, "Add one memory in a commit of its own (Transaction.add)."),
    "check": Entry(
        _STORE, "Verify the store's invariants (Store.check); exit code 1 if any is broken."
    ),
    "compact": Entry(
        _COMPACT, "Compact finished traces into long-term summaries (Compactor.compact)."
    ),
    "demo": Entry(
        "memcommit.cli.demo",
        "Show on an agent's memory what memcommit fixes, with fixed data and time.",
    ),
    "diff": Entry(
        _STORE, "List the changes after commit A up to commit B (Store.diff); seqs, ids or times."
    ),
    "export": Entry(
        _TRANSFER, "Write the whole store, with its full history, to OUTPUT as JSON Lines."
    ),
    "find": Entry(
        _STORE, "List memories matching filters (Store.find); live ones only unless --all."
    ),
    "get": Entry(_STORE, "Show one memory (Store.get), optionally as it was at an earlier commit."),
    "history": Entry(_STORE, "Show every version of one memory, oldest first (Store.history)."),
    "import": Entry(
        _TRANSFER, 'Rebuild a store from a JSON Lines export (INPUT, or "-" for stdin).'
    ),
    "init": Entry(_STORE, "Create a store (or bring an existing one's schema up to date)."),
    "log": Entry(_STORE, "List commits, newest first (Store.log)."),
    "mcp": Entry(
        "memcommit.cli.mcp_cmds",
        "Serve the store to agents as an MCP server (stdio, or HTTP on loopback).",
    ),
    "merge": Entry(
        _COMPACT,
        "Fold summaries of the same task into one evolving summary (Compactor.merge).",
    ),
    "migrate": Entry(
        "memcommit.cli.migrate_cmds",
        "Copy the store SRC into the new, empty store DST, with its full history.",
    ),
    "recall": Entry(
        "memcommit.cli.recall_cmds", "Pack a bounded context for QUERY from one tenant's memories."
    ),
    "show": Entry(_STORE, "Show one commit and its changes (Store.show), by seq or id."),
    "tiers": Entry(
        "memcommit.cli.tiers_cmds",
        "Working memory: what is in short-term, hits and misses, maintenance, simulation.",
    ),
    "workbench": Entry(
        "memcommit.cli.workbench_cmds",
        "Open the retrieval workbench: every record recall() selected or left out, and why.",
    ),
}


def __getattr__(name: str) -> Any:
    """``console``: the rich console for stdout, made (importing rich) when first used."""
    if name != "console":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from rich.console import Console

    made: Console = Console()
    globals()["console"] = made
    return made


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show full tracebacks instead of one-line errors.")
@click.version_option(package_name="memcommit")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """memcommit: the memory of an AI agent, with commits, tiers and explainable recall.

    Example:

        memcommit demo
    """
    ctx.obj = {"debug": debug}


def store_option(fn: Callable) -> Callable:
    """Add ``--store`` (default ``./memcommit.db`` or ``$MEMCOMMIT_STORE``)."""
    return click.option(
        "--store",
        "store_target",
        default=lambda: os.environ.get("MEMCOMMIT_STORE", DEFAULT_STORE),
        show_default="./memcommit.db or $MEMCOMMIT_STORE",
        help="Path of a SQLite file, or a postgresql:// URL.",
    )(fn)


def json_option(fn: Callable) -> Callable:
    """Add ``--json`` for machine-readable output."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")(fn)


def handle_errors(fn: Callable) -> Callable:
    """Turn library errors into one line on stderr and exit code 1 (unless --debug)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except MemcommitError as exc:
            ctx = click.get_current_context()
            if (ctx.find_root().obj or {}).get("debug"):
                raise
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)

    return wrapper


def parse_now(text: str | None) -> datetime | None:
    """``--now``: an ISO 8601 time with an offset, or None for the store's clock."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise InvalidInput("now", text, "must be an ISO 8601 time with an offset, e.g. ...Z")
    return moment


def to_jsonable(value: Any) -> Any:
    """Dataclasses, datetimes, tuples and mappings as plain JSON values."""
    if is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(asdict(value))
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    if hasattr(value, "items") and callable(value.items):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    return value


def print_json(value: Any) -> None:
    """Print ``value`` as indented JSON on stdout."""
    click.echo(json.dumps(to_jsonable(value), indent=2, ensure_ascii=False))
