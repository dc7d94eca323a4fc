"""``memcommit mcp``: serve memory to agents over the Model Context Protocol.

One tenant over stdio or loopback HTTP, or (``--tokens``) every tenant over
HTTP where the operator says, each request let in by a bearer token.
"""

from __future__ import annotations

import os
import signal
import sys

import click
from click.core import ParameterSource

from memcommit.cli.app import (
    handle_errors,
    main,
    recall_cache_option,
    store_option,
    tenant_option,
)
from memcommit.cli.opening import embedder_asked

DEFAULT_PORT = 8765
LOOPBACK = "127.0.0.1"


@main.command("mcp")
@store_option
@tenant_option
@click.option("--http", is_flag=True, help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")
@click.option(
    "--tokens",
    is_flag=True,
    help="Serve every tenant over HTTP, each request let in by a bearer token"
    " (memcommit token create); --tenant does not apply.",
)
@click.option(
    "--host",
    default=LOOPBACK,
    show_default=True,
    help="Address to listen on; other than 127.0.0.1 only with --tokens.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="Port for --http or --tokens; 0 picks a free one.",
)
@recall_cache_option
@click.pass_context
@handle_errors
def mcp_command(
    ctx: click.Context, store_target: str, tenant: str, http: bool, tokens: bool, host: str,
    port: int, recall_cache_mb: int,
) -> None:  # fmt: skip
    """Serve the store to agents as an MCP server (stdio, or HTTP on loopback).

    The server sees --tenant only: its tools cannot choose another.
    Tools: remember, recall, correct, forget, begin_task, add_step,
    finish_task, touch, log. Resources: memcommit://working,
    memcommit://commits/recent, memcommit://memory/{id}. Prompts:
    recall-context, review-memory. With --http the server prints its URL on
    stderr. With --tokens one server serves every tenant on --host/--port:
    each request needs "Authorization: Bearer <token>", and the token's
    tenant is the only one it reaches (TLS: put a reverse proxy in front, see
    docs/mcp.md). With --embedder, what it remembers is embedded and recall
    ranks by meaning too. Needs the "mcp" extra (pip install "memcommit[mcp]").

    Example:

        memcommit mcp --store agent.db --tenant team-a --embedder local
    """
    if tokens and ctx.get_parameter_source("tenant") is not ParameterSource.DEFAULT:
        raise click.BadParameter(
            "does not apply with --tokens: each token names its tenant", param_hint="--tenant"
        )
    if host != LOOPBACK and not tokens:
        raise click.BadParameter(
            f"{host!r}: only 127.0.0.1 without --tokens (one tenant, no authentication)",
            param_hint="--host",
        )
    try:
        from memcommit.interfaces.mcp import serve
        from memcommit.interfaces.mcp_served import serve_tenants
    except ImportError as exc:
        raise click.ClickException(
            f'the MCP server needs the "mcp" extra: pip install "memcommit[mcp]" ({exc})'
        ) from exc
    if tokens:
        serve_tenants(
            store_target,
            host=host,
            port=port,
            embedder=embedder_asked(),
            recall_cache_bytes=recall_cache_mb * 2**20,
        )
        return
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
        embedder=embedder_asked(),
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
