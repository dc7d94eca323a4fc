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
from typing import Any

import click
from rich.console import Console

from memcommit.errors import InvalidInput, MemcommitError

console = Console()
DEFAULT_STORE = "memcommit.db"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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
