"""Drive the real MCP server with the SDK's own client: in process, over stdio, over HTTP."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

#: The command line, run exactly as a user would (``python -m memcommit``).
MEMCOMMIT = (sys.executable, "-m", "memcommit")


def clean_env() -> dict[str, str]:
    """This environment without MEMCOMMIT_* settings, so only the arguments count."""
    return {k: v for k, v in os.environ.items() if not k.startswith("MEMCOMMIT_")}


def stdio_params(store: Path, tenant: str) -> StdioServerParameters:
    """Run ``python -m memcommit mcp`` as the client's subprocess."""
    return StdioServerParameters(
        command=MEMCOMMIT[0],
        args=[*MEMCOMMIT[1:], "mcp", "--store", str(store), "--tenant", tenant],
        env=clean_env(),
    )


@contextlib.contextmanager
def http_server(store: Path, tenant: str) -> Iterator[str]:
    """Start ``memcommit mcp --http --port 0`` (a free loopback port); yield the URL it prints."""
    with serving(store, "--http", "--tenant", tenant) as (url, _):
        yield url


@contextlib.contextmanager
def serving(store: Path, *options: str) -> Iterator[tuple[str, list[str]]]:
    """Start ``memcommit mcp <options> --port 0``; yield its URL and, live, its stderr lines.

    The list fills until the server ends (a thread reads stderr), so a test can
    check afterwards everything the server ever wrote.
    """
    process = subprocess.Popen(
        [*MEMCOMMIT, "mcp", *options, "--port", "0", "--store", str(store)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
    )
    line = process.stderr.readline()
    written = [line]
    reader = threading.Thread(target=lambda: written.extend(process.stderr), daemon=True)
    reader.start()
    try:
        match = re.search(r"http://127\.0\.0\.1:\d+/mcp", line)
        if match is None:
            raise RuntimeError(f"server did not start: {line}")
        yield match.group(0), written
    finally:
        process.terminate()
        process.wait(timeout=10)
        reader.join(timeout=10)  # stderr ends with the process
        process.stderr.close()


@contextlib.asynccontextmanager
async def bearer(url: str, token: str, **options: Any) -> AsyncIterator[Client]:
    """A client of the served server (``mcp --tokens``) sending ``Authorization: Bearer token``."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http,
        Client(streamable_http_client(url, http_client=http), cache=None, **options) as client,
    ):
        yield client


@contextlib.asynccontextmanager
async def connect(server: Any) -> AsyncIterator[Client]:
    """A connected client (no response cache: every read must reach the server)."""
    async with Client(server, cache=None) as client:
        yield client


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call a tool that must succeed; its structured result."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, f"{tool} failed: {error_text(result)}"
    return result.structured_content


async def fail(client: Client, tool: str, **arguments: Any) -> str:
    """Call a tool that must fail with a tool error; its message."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool}({arguments}) should have failed: {result.structured_content}"
    return error_text(result)


def error_text(result: Any) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


async def read_json(client: Client, uri: str) -> Any:
    """Read a JSON resource."""
    result = await client.read_resource(uri)
    return json.loads(result.contents[0].text)


def run_async(fn: Any, *args: Any) -> Any:
    """``anyio.run`` on a thread of its own.

    A browser test's Playwright keeps an event loop running on the worker's main
    thread for the whole session; starting another loop there would fail.
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, fn, *args).result()
