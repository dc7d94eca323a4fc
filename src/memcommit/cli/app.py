"""The ``memcommit`` command group and what every command shares.

Each command opens the store, calls one library method, and prints either a
rich table for people or ``--json`` for scripts. Every failure a user can cause
(a library error, a missing or unreadable file, a full disk) becomes one line on
stderr and exit code 1; ``--debug`` shows the traceback instead. Library log
records and warnings stay out of the terminal unless ``--verbose`` asks for them.
"""

from __future__ import annotations

import difflib
import functools
import json
import logging
import os
import sys
from collections.abc import Callable
from dataclasses import asdict, is_dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import click

from memcommit.cli.lazy import Entry, LazyGroup
from memcommit.errors import MemcommitError

if TYPE_CHECKING:
    from rich.console import Console

DEFAULT_STORE = "memcommit.db"
DEFAULT_TENANT = "default"
STORE_ENV = "MEMCOMMIT_STORE"
TENANT_ENV = "MEMCOMMIT_TENANT"
EMBEDDER_ENV = "MEMCOMMIT_EMBEDDER"
#: Where ``--embedder`` leaves its value for `memcommit.cli.opening` (click's context meta).
EMBEDDER_META = "memcommit.embedder"

#: The handler `main` installs on the root logger, replaced on every invocation.
_log_handler: logging.Handler | None = None


def console() -> Console:
    """A console for stdout, sized when called (so ``COLUMNS`` and the terminal count)."""
    from rich.console import Console  # here, so that ``memcommit --help`` never imports rich

    return Console(highlight=False)


def setup_logging(verbose: int) -> None:
    """Route log records and warnings to stderr with ``--verbose``, and nowhere without it.

    Without a handler, Python prints warnings of any library (psycopg's pool,
    say) on stderr through its last-resort handler: a handler that drops them
    keeps the CLI's output to what the command says.
    """
    global _log_handler
    root = logging.getLogger()
    if _log_handler is not None:
        root.removeHandler(_log_handler)
    if verbose:
        _log_handler = logging.StreamHandler(sys.stderr)
        _log_handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.setLevel(logging.DEBUG if verbose > 1 else logging.INFO)
    else:
        _log_handler = logging.NullHandler()
    root.addHandler(_log_handler)
    logging.captureWarnings(True)


_STORE = "memcommit.cli.store_cmds"
_WRITE = "memcommit.cli.write_cmds"
_COMPACT = "memcommit.cli.compact_cmds"
_TRANSFER = "memcommit.cli.transfer_cmds"

#: Every command: the module that registers it, imported when the command runs, and the
#: first paragraph of its help, which ``memcommit --help`` shows without that import.
COMMANDS = {
    "add": Entry(_STORE, "Add one memory in a commit of its own (Transaction.add)."),
    "archive": Entry(
        _WRITE, "Move a memory to the archive tier (Transaction.archive); recall leaves it out."
    ),
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
    "embed": Entry(
        "memcommit.cli.embed_cmds",
        "Embed the memories that have no vector yet (Store.embed), with --embedder.",
    ),
    "export": Entry(
        _TRANSFER, "Write the whole store, with its full history, to OUTPUT as JSON Lines."
    ),
    "find": Entry(
        _STORE, "List memories matching filters (Store.find); live ones only unless --all."
    ),
    "forget": Entry(
        _WRITE,
        "Forget a memory: it no longer holds (Transaction.invalidate), or --purge erases it.",
    ),
    "get": Entry(_STORE, "Show one memory (Store.get), optionally as it was at an earlier commit."),
    "history": Entry(_STORE, "Show every version of one memory, oldest first (Store.history)."),
    "import": Entry(
        _TRANSFER, 'Rebuild a store from a JSON Lines export (INPUT, or "-" for stdin).'
    ),
    "index": Entry(
        "memcommit.cli.index_cmds",
        "Bring recall's snapshots current, so a fresh process's first recall opens one.",
    ),
    "init": Entry(_STORE, "Create a store (or bring an existing one's schema up to date)."),
    "invalidate": Entry(
        _WRITE, "Mark a memory as no longer holding (Transaction.invalidate); history keeps it."
    ),
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
    "restore": Entry(_WRITE, "Bring an archived memory back to a tier (Transaction.restore)."),
    "scrub": Entry(
        _WRITE,
        "Remove the copies of purged content the database keeps (Store.scrub); exit 1 if any"
        " remain.",
    ),
    "show": Entry(_STORE, "Show one commit and its changes (Store.show), by seq or id."),
    "supersede": Entry(
        _WRITE, "Replace memory OLD_ID by NEW_ID (Transaction.supersede); OLD_ID stops holding."
    ),
    "tenants": Entry(_STORE, "List the store's tenants, the names --tenant takes (Store.tenants)."),
    "tiers": Entry(
        "memcommit.cli.tiers_cmds",
        "Working memory: what is in short-term, hits and misses, maintenance, simulation.",
    ),
    "token": Entry(
        "memcommit.cli.token_cmds",
        "Bearer tokens for the served MCP server: each opens one tenant's memory.",
    ),
    "trace": Entry(
        "memcommit.cli.trace_cmds",
        "Record a task as a trace: begin it, add its steps, finish it.",
    ),
    "update": Entry(
        _WRITE, "Write a new version of a memory with some fields changed (Transaction.update)."
    ),
    "verify": Entry(
        "memcommit.cli.verify_cmds",
        "Walk the hash chain (Store.verify); exit code 1 if a commit or version does not match.",
    ),
    "witness": Entry(
        "memcommit.cli.verify_cmds",
        "Print the newest commit's witness line (Store.witness), to keep outside the store.",
    ),
    "workbench": Entry(
        "memcommit.cli.workbench_cmds",
        "Open the retrieval workbench: every record recall() selected or left out, and why.",
    ),
}


class CommandLine(LazyGroup):
    """The root group: click's own usage errors are one line too, like every other failure.

    Click prints a usage error as the usage, a hint and the error on three lines;
    here it is ``error: ...`` on one line that names the command's --help.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Bare ``memcommit`` is a question, not a mistake: the help, and exit code 0."""
        if not args:
            click.echo(ctx.get_help())
            ctx.exit(0)
        return super().parse_args(ctx, args)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """A mistyped command gets the nearest one ("recal": did you mean 'recall'?)."""
        name = args[0] if args else ""
        if args and self.get_command(ctx, name) is None and not name.startswith("-"):
            near = difflib.get_close_matches(name, self.list_commands(ctx), n=1)
            if near:
                # as click words it for an eager group (a lazy one has no commands to compare)
                raise click.UsageError(f"No such command {name!r}. Did you mean {near[0]!r}?", ctx)
        return super().resolve_command(ctx, args)

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
        except click.ClickException as exc:
            where = getattr(exc, "ctx", None)
            hint = f" (see {where.command_path} --help)" if where is not None else ""
            click.echo(f"error: {exc.format_message().rstrip('.')}{hint}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)  # an Exit's code; a command returns None


@click.group(
    cls=CommandLine, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.option("--debug", is_flag=True, help="Show full tracebacks instead of one-line errors.")
@click.option(
    "--verbose", "-v", count=True, help="Log what the library does on stderr (-vv: debug)."
)
@click.version_option(package_name="memcommit")
@click.pass_context
def main(ctx: click.Context, debug: bool, verbose: int) -> None:
    """memcommit: the memory of an AI agent, with commits, tiers and explainable recall.

    Every command reads --store (default ./memcommit.db, or $MEMCOMMIT_STORE)
    and works in one tenant, --tenant (default "default", or $MEMCOMMIT_TENANT).
    Read commands never create a store; init and writes do.

    Example:

        memcommit demo
    """
    ctx.obj = {"debug": debug}
    setup_logging(verbose)


def store_option(fn: Callable) -> Callable:
    """Add ``--store`` (default ``./memcommit.db`` or ``$MEMCOMMIT_STORE``) and ``--embedder``.

    ``--embedder`` is where the store is opened (`memcommit.cli.opening` reads it),
    so every command that opens a store takes it without a parameter of its own.
    """
    with_store = click.option(
        "--store",
        "store_target",
        default=lambda: os.environ.get(STORE_ENV, DEFAULT_STORE),
        show_default=f"./{DEFAULT_STORE} or ${STORE_ENV}",
        help="Path of a SQLite file, or a postgresql:// URL.",
    )(fn)
    return click.option(
        "--embedder",
        envvar=EMBEDDER_ENV,
        expose_value=False,
        callback=_keep_embedder,
        help="Open the store with an embedder: local, hash, openai:MODEL[@URL],"
        f" sentence-transformers:PATH (or ${EMBEDDER_ENV}); commits embed what they add.",
    )(with_store)


def _keep_embedder(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value:
        ctx.meta[EMBEDDER_META] = value


def tenant_option(fn: Callable) -> Callable:
    """Add ``--tenant``: the same option, with the same default, on every command."""
    return click.option(
        "--tenant",
        default=lambda: os.environ.get(TENANT_ENV, DEFAULT_TENANT),
        show_default=f"{DEFAULT_TENANT} or ${TENANT_ENV}",
        help="The tenant to work in (a hard isolation boundary).",
    )(fn)


def recall_cache_option(fn: Callable) -> Callable:
    """Add ``--recall-cache`` (MB) to long-running servers: ``open(recall_cache_bytes=)``."""
    return click.option(
        "--recall-cache",
        "recall_cache_mb",
        type=click.IntRange(1, 2**40),
        default=64,
        show_default=True,
        help="MB of tenant indexes recall keeps in memory; the least recently used go first.",
    )(fn)


def all_tenants_option(fn: Callable) -> Callable:
    """Add ``--all-tenants`` to maintenance commands that may run over the whole store;
    a ``--tenant`` given with it is a usage error, not silently ignored."""

    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> Any:
        source = click.get_current_context().get_parameter_source("tenant")
        if kwargs.get("all_tenants") and source is click.core.ParameterSource.COMMANDLINE:
            raise click.UsageError("give --tenant or --all-tenants, not both")
        return fn(*args, **kwargs)

    return click.option(
        "--all-tenants", is_flag=True, help="Work over every tenant instead of --tenant."
    )(checked)


def json_option(fn: Callable) -> Callable:
    """Add ``--json`` for machine-readable output."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")(fn)


def wide_option(fn: Callable) -> Callable:
    """Add ``--wide``: full ids and content, more columns."""
    return click.option("--wide", is_flag=True, help="Full ids and content, and more columns.")(fn)


def _one_line(exc: BaseException) -> str:
    """A user-caused failure as one line: what failed, and on which file."""
    if isinstance(exc, OSError):
        reason = exc.strerror or str(exc) or type(exc).__name__
        name = exc.filename if exc.filename is not None else None
        return f"{reason}: {name}" if name is not None else reason
    if isinstance(exc, UnicodeDecodeError):
        return f"not a text file (UTF-8 expected): byte {exc.start} cannot be decoded"
    return " ".join(str(exc).split())


def handle_errors(fn: Callable) -> Callable:
    """Turn user-caused failures into one line on stderr and exit code 1 (unless --debug).

    With ``--json`` the line is JSON too: ``{"error": {"type", "field", "value", "message"}}``.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except BrokenPipeError:  # a reader such as `head` left: click ends quietly
            raise
        except (MemcommitError, OSError, UnicodeDecodeError) as exc:
            ctx = click.get_current_context()
            if (ctx.find_root().obj or {}).get("debug"):
                raise
            if kwargs.get("as_json"):
                value = getattr(exc, "value", None)
                error = {
                    "type": type(exc).__name__,
                    "field": getattr(exc, "field", None),
                    "value": None if value is None else str(value),
                    "message": _one_line(exc),
                }
                click.echo(json.dumps({"error": error}, ensure_ascii=False), err=True)
            else:
                click.echo(f"error: {_one_line(exc)}", err=True)
            sys.exit(1)

    return wrapper


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
