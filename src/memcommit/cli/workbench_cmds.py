"""``memcommit workbench``: serve the retrieval workbench page on this machine."""

from __future__ import annotations

import errno
import socket
import webbrowser

import click

import memcommit
from memcommit.cli.app import EMBEDDER_ENV, handle_errors, main
from memcommit.errors import InvalidInput
from memcommit.workbench.server import LOCAL_HOSTS, WorkbenchServer, make_server
from memcommit.workbench.source import BankSource, StoreSource, WorkbenchSource

#: The page's port: one beside the MCP server's HTTP port, so both can run at once.
DEFAULT_PORT = 8766


def open_source(target: str | None, embedder: str | None = None) -> WorkbenchSource:
    """The teaching bank without a target; otherwise the store, which must already exist.

    Stores are opened read-only (SQLite ``mode=ro``; PostgreSQL read-only
    transactions) and refused when reading would need a write first (a missing
    file or schema, pending migrations, not a memcommit store); with ``embedder``
    (a name, as ``--embedder`` takes) recall there ranks by meaning too.
    """
    if target is None:
        return BankSource()
    built_in = target.startswith(("sqlite://", "postgresql://", "postgres://"))
    if target == ":memory:" or ("://" in target and not built_in):
        return StoreSource(memcommit.open(target, embedder=embedder))
    return StoreSource(memcommit.open(target, read_only=True, embedder=embedder))


@main.command("workbench")
@click.option(
    "--store",
    "store_target",
    default=None,
    help=(
        "SQLite file or postgresql:// URL to inspect, opened read-only (refused if it"
        " needs a migration). Default: the teaching bank."
    ),
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind. Anything but loopback exposes your memories to the network.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="Port to bind; 0 picks a free one (memcommit mcp --http takes 8765).",
)
@click.option("--no-open", is_flag=True, help="Do not open a browser window.")
@click.option(
    "--embedder",
    envvar=EMBEDDER_ENV,
    help="Open --store with an embedder (local, hash, ...), so recall ranks by meaning too.",
)
@handle_errors
def workbench(
    store_target: str | None, host: str, port: int, no_open: bool, embedder: str | None
) -> None:
    """Open the retrieval workbench: every record recall() selected or left out, and why.

    Without --store it shows the teaching bank (ten synthetic records). With
    --store it reads a real store and never writes to it (recall keeps its derived
    index snapshots in the store's cache folder, as every reader does).

    Example:

        memcommit workbench --store memcommit.db --no-open
    """
    if host not in LOCAL_HOSTS:
        click.echo(
            f"warning: binding {host}: anyone who can reach this address can read the memories",
            err=True,
        )
    source = open_source(store_target, embedder)
    try:
        server = bind(source, host, port)
    except BaseException:
        source.close()
        raise
    click.echo(f"memcommit workbench on {server.url} (Ctrl-C stops it)")
    if not no_open:
        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("stopped")
    finally:
        server.server_close()
        source.close()


def bind(source: WorkbenchSource, host: str, port: int) -> WorkbenchServer:
    """The server on ``host:port``; an InvalidInput naming the option at fault if it cannot bind.

    An address that does not resolve, or is not this machine's, is the host's
    fault; a port in use or reserved is the port's.
    """
    try:
        return make_server(source, host, port)
    except socket.gaierror as exc:
        raise InvalidInput("host", host, f"cannot resolve it ({exc.strerror})") from None
    except OSError as exc:
        if exc.errno == errno.EADDRNOTAVAIL:
            raise InvalidInput("host", host, "is not an address of this machine") from None
        raise InvalidInput("port", port, f"cannot bind {host}:{port} ({exc.strerror})") from None
