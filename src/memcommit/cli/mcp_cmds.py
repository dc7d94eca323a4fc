"""``memcommit mcp``: serve one tenant's memory to agents over the Model Context Protocol."""

from __future__ import annotations

import os
import signal
import sys

import click

from memcommit.cli.app import (
    handle_errors,
    main,
    recall_cache_option,
    store_option,
    tenant_option,
)

DEFAULT_PORT = 8765


@main.command("mcp")
@store_option
@tenant_option
@click.option("--http", is_flag=True, help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="Port for --http (always on 127.0.0.1); 0 picks a free one.",
)
@recall_cache_option
@handle_errors
def mcp_command(
    store_target: str, tenant: str, http: bool, port: int, recall_cache_mb: int
) -> None:
    """Serve the store to agents as an MCP server (stdio, or HTTP on loopback).

    The server sees --tenant only: its tools cannot choose another.
    Tools: remember, recall, correct, forget, begin_task, add_step,
    finish_task, touch, log. Resources: memcommit://working,
    memcommit://commits/recent, memcommit://memory/{id}. With --http the
    server prints its URL on stderr. Needs the "mcp" extra
    (pip install "memcommit[mcp]").

    Example:

        memcommit mcp --store agent.db --tenant team-a
    """
    try:
        from memcommit.interfaces.mcp import serve
    except ImportError as exc:
        raise click.ClickException(
            f'the MCP server needs the "mcp" extra: pip install "memcommit[mcp]" ({exc})'
        ) from exc
    if not http and sys.stdin.isatty():  # a person, not a client: say what this is
        click.echo(
            f"memcommit MCP server for tenant {tenant!r} on stdio: an MCP client (your agent)"
            " starts it and talks to it over stdin and stdout; Ctrl-C stops it.",
            err=True,
        )
        signal.signal(signal.SIGINT, _stop_at_once)
    serve(
        store_target,
        tenant=tenant,
        http=http,
        port=port,
        recall_cache_bytes=recall_cache_mb * 2**20,
    )


def _stop_at_once(signum: int, frame: object) -> None:
    """Ctrl-C at a terminal ends the server now, not after the next line of input.

    The stdio transport reads stdin in a worker thread that a KeyboardInterrupt
    does not reach until a line arrives. Ending the process is safe: a commit
    either landed or its transaction is rolled back by the database.
    """
    sys.stderr.write("memcommit MCP server stopped\n")
    sys.stderr.flush()
    os._exit(128 + signum)
