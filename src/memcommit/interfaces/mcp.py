"""The MCP server: one tenant's memory offered to agents as tools, resources and prompts.

Built on the official MCP Python SDK (``MCPServer``). Tools are the methods of
``AgentMemory``; library errors, and arguments a tool does not take, become MCP
tool errors whose message names the field, so a bad call never brings the
server down. Every store call runs in a worker thread, one tenant's calls one at
a time (`mcp_turns`), so a slow call of one tenant never holds the event loop
the other tenants' requests are answered on. After each tool call the server
announces the resources it changed and logs its commits (`mcp_watch`); prompts
and argument completion are in `mcp_prompts`.
"""

from __future__ import annotations

import functools
import inspect
import json
import socket
import sys
from collections.abc import Callable, Collection, Mapping
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.types import SetLevelRequestParams, SubscribeRequestParams, UnsubscribeRequestParams

import memcommit
from memcommit.embedding import Embedder
from memcommit.errors import InvalidInput, MemcommitError, NotFound
from memcommit.interfaces.agent import TOOLS, AgentMemory
from memcommit.interfaces.mcp_prompts import add_prompts
from memcommit.interfaces.mcp_turns import Turns
from memcommit.interfaces.mcp_watch import MEMORY, RECENT, WORKING, Watch
from memcommit.store import DEFAULT_RECALL_CACHE_BYTES, StoreLike

INSTRUCTIONS = """\
This server is your long-term memory (memcommit). Before a task, call `recall` with
what you need; after it, `touch` the ids you actually used. Store what you learn
with `remember`, rules you were given with `correct`, and record multi-step work
with `begin_task` / `add_step` / `finish_task`. Every change is a commit (`log`).
"""

#: How many commits the recent-commits resource lists.
RECENT_COMMITS = 20


def _as_tool(method: Callable[..., dict[str, Any]], turns: Turns) -> Callable[..., Any]:
    """Wrap an AgentMemory method as an async tool, run in its turn (`Turns`), that
    reports library errors to the agent."""

    @functools.wraps(method)
    async def tool(**arguments: Any) -> dict[str, Any]:
        try:
            return await turns.run(functools.partial(method, **arguments))
        except MemcommitError as exc:
            raise ToolError(str(exc)) from exc

    return tool


async def _read(turns: Turns, produce: Callable[[], Any]) -> str:
    """A resource's JSON text, read in its turn; library errors become resource errors
    naming the field."""
    try:
        return json.dumps(await turns.run(produce), indent=2, ensure_ascii=False)
    except NotFound as exc:
        raise ResourceNotFoundError(str(exc)) from exc
    except MemcommitError as exc:
        raise ResourceError(str(exc)) from exc


def unknown_arguments(
    tool: str, given: Mapping[str, Any], known: Collection[str]
) -> InvalidInput | None:
    """The error for arguments ``tool`` does not take, or None when all are known.

    The SDK would drop them silently; an agent that passed ``tenant`` must learn
    that it was not obeyed, not find its memory stored under the server's tenant.
    """
    unknown = sorted(name for name in given or {} if name not in known)
    if not unknown:
        return None
    value = given[unknown[0]] if len(unknown) == 1 else {name: given[name] for name in unknown}
    reason = f"unknown argument of {tool}; it takes {', '.join(sorted(known))}"
    if "tenant" in unknown:
        reason += "; the tenant is set by the server's configuration, never by a tool call"
    return InvalidInput(", ".join(unknown), value, reason)


class MemoryServer(MCPServer):
    """An MCP server whose tools refuse arguments they do not declare, naming them.

    After a tool call it announces what changed to the subscribers of its ``watch``.
    """

    def __init__(self, *args: Any, watch: Watch, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.parameters: dict[str, frozenset[str]] = {}
        self.watch = watch
        self.turns = Turns()  # the tenant's store calls, one at a time off the loop
        # The SDK registers these only on its low-level server (they are the
        # handshake-era methods; 2026-07-28 clients use subscriptions/listen).
        handlers = self._lowlevel_server
        handlers.add_request_handler("resources/subscribe", SubscribeRequestParams, watch.subscribe)
        handlers.add_request_handler(
            "resources/unsubscribe", UnsubscribeRequestParams, watch.unsubscribe
        )
        handlers.add_request_handler("logging/setLevel", SetLevelRequestParams, watch.set_level)

    def add_memory_tool(self, name: str, method: Callable[..., dict[str, Any]]) -> None:
        """Offer ``method`` as tool ``name``, remembering which arguments it takes."""
        self.parameters[name] = frozenset(inspect.signature(method).parameters)
        self.add_tool(
            _as_tool(method, self.turns),
            name=name,
            description=inspect.cleandoc(method.__doc__ or ""),
        )

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Refuse unknown arguments with a tool error naming them; else call the tool."""
        known = self.parameters.get(name)
        if known is not None:
            error = unknown_arguments(name, arguments, known)
            if error is not None:
                # worded as the SDK words the errors of the arguments it validates
                raise ToolError(f"Error executing tool {name}: {error}") from error
        try:
            return await super().call_tool(name, arguments, context)
        finally:
            if context is not None:  # None: called from Python, not by a client
                # shielded: a call cancelled while its thread went on to commit is announced
                with anyio.CancelScope(shield=True):
                    await self.watch.announce(context, *([WORKING] if name == "touch" else []))


def create_server(store: StoreLike, tenant: str, *, author: str = "mcp") -> MemoryServer:
    """An MCP server over ``store`` that only ever sees ``tenant``."""
    memory = AgentMemory(store, tenant, author=author)
    server = MemoryServer(
        "memcommit",
        instructions=INSTRUCTIONS,
        version=memcommit.__version__,
        log_level="WARNING",
        watch=Watch(memory.view),
    )
    for name in TOOLS:
        server.add_memory_tool(name, getattr(memory, name))

    @server.resource(
        WORKING,
        name="working-memory",
        description=f"Tenant {tenant!r}: the memories in working memory now.",
        mime_type="application/json",
    )
    async def working() -> str:
        return await _read(server.turns, memory.working)

    @server.resource(
        RECENT,
        name="recent-commits",
        description=f"Tenant {tenant!r}: the {RECENT_COMMITS} latest commits, newest first.",
        mime_type="application/json",
    )
    async def recent_commits() -> str:
        return await _read(server.turns, lambda: memory.log(limit=RECENT_COMMITS))

    @server.resource(
        MEMORY,
        name="memory",
        description=f"Tenant {tenant!r}: one memory with all its fields.",
        mime_type="application/json",
    )
    async def one_memory(memory_id: str) -> str:
        return await _read(server.turns, lambda: memory.memory(memory_id))

    add_prompts(server, memory, server.turns)
    return server


#: Where the single-tenant HTTP server listens: this machine only.
LOOPBACK = "127.0.0.1"


def serve(
    target: str,
    *,
    tenant: str,
    http: bool = False,
    port: int = 8765,
    embedder: str | Embedder | None = None,
    recall_cache_bytes: int = DEFAULT_RECALL_CACHE_BYTES,
) -> None:
    """Open the store at ``target`` and serve it over stdio, or streamable HTTP on loopback.

    ``embedder`` (a name such as ``"local"``, or an embedder) opens the store with it:
    what the tools remember is embedded, and recall ranks by meaning too.
    ``recall_cache_bytes``: the budget of recall's tenant indexes (`memcommit.open`).
    """
    store = memcommit.open(target, embedder=embedder, recall_cache_bytes=recall_cache_bytes)
    try:
        server = create_server(store, tenant)
        if http:
            app = server.streamable_http_app(host=LOOPBACK)
            anyio.run(serve_http, app, LOOPBACK, port, f"tenant {tenant!r}")
        else:
            server.run()
    finally:
        store.close()


async def serve_http(app: Any, host: str, port: int, serving: str) -> None:
    """Serve the ASGI ``app`` on ``host``; say where on stderr once it accepts connections.

    Binding here rather than inside uvicorn lets ``port=0`` pick a free port and
    the announced URL name it, and turns "port in use" into a clear error. The
    access log stays off: nothing of a request is written anywhere.
    """
    import uvicorn

    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise InvalidInput("port", port, f"cannot listen on {host}: {exc.strerror}") from exc
    sock.listen(128)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{sock.getsockname()[1]}/mcp"
    print(f"memcommit MCP server for {serving} at {url}", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    await uvicorn.Server(config).serve(sockets=[sock])
