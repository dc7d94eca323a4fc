"""One MCP HTTP server for many tenants: each request let in by a bearer token naming one.

Every request to ``/mcp`` must carry ``Authorization: Bearer <token>``; the token
(`memcommit.interfaces.tokens`) is checked against the store on every request,
so a revoked token stops at its next request. Without a valid one the answer is
401 with a ``WWW-Authenticate`` challenge pointing at the protected-resource
metadata (RFC 9728, served at ``/.well-known/oauth-protected-resource``).

A valid token reaches its tenant's own MCP server (`create_server`), made on
the tenant's first request and kept: its own sessions, subscriptions and
working memory. Nothing in a request can name another tenant, so there is no
"forbidden" to tell apart from "absent": another tenant's memory ids, and the
sessions another token opened, answer exactly as ones that never existed. TLS
is the reverse proxy's job (docs/mcp.md).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup, TaskStatus
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

import memcommit
from memcommit.embedding import Embedder
from memcommit.interfaces.mcp import create_server, serve_http
from memcommit.interfaces.tokens import Tokens
from memcommit.store import DEFAULT_RECALL_CACHE_BYTES, StoreLike

METADATA = "/.well-known/oauth-protected-resource"
MCP_PATH = "/mcp"
INVALID = "the token is malformed, unknown or revoked"


class TenantServers:
    """Each tenant's MCP server, started on its first request and running until shutdown."""

    def __init__(self, store: StoreLike) -> None:
        self.store = store
        self._managers: dict[str, StreamableHTTPSessionManager] = {}
        self._lock = anyio.Lock()
        self._group: TaskGroup | None = None

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The servers' lifetime: every tenant's sessions end when it ends."""
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                group.cancel_scope.cancel()

    async def manager(self, tenant: str) -> StreamableHTTPSessionManager:
        """The session manager of ``tenant``'s server, started if this is its first request."""
        async with self._lock:
            if tenant not in self._managers:
                assert self._group is not None, "TenantServers.running() is not entered"
                server = create_server(self.store, tenant)
                # A Host check on loopback names only would refuse the proxy's public name;
                # DNS rebinding cannot forge the bearer token that every request needs.
                no_host_check = TransportSecuritySettings(enable_dns_rebinding_protection=False)
                server.streamable_http_app(transport_security=no_host_check)
                manager = server.session_manager
                await self._group.start(self._run, manager)
                self._managers[tenant] = manager
            return self._managers[tenant]

    @staticmethod
    async def _run(manager: StreamableHTTPSessionManager, *, task_status: TaskStatus[None]) -> None:
        async with manager.run():
            task_status.started()
            await anyio.sleep_forever()


def _challenge(request: Request, *, invalid: bool) -> Response:
    """401 with the RFC 6750 challenge and where the resource metadata is.

    A malformed, unknown and revoked token get the same answer: which one it was
    is nothing a caller without a valid token needs to learn.
    """
    metadata = f"{str(request.base_url).rstrip('/')}{METADATA}{MCP_PATH}"
    challenge = f'Bearer realm="memcommit", resource_metadata="{metadata}"'
    body = {"error": "unauthorized", "error_description": "a bearer token is required"}
    if invalid:
        body = {"error": "invalid_token", "error_description": INVALID}
        challenge += f', error="invalid_token", error_description="{INVALID}"'
    return JSONResponse(body, 401, headers={"WWW-Authenticate": challenge})


class Gate:
    """The ASGI endpoint of ``/mcp``: the token decides the tenant, or the request stops."""

    def __init__(self, tokens: Tokens, servers: TenantServers) -> None:
        self.tokens = tokens
        self.servers = servers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            await _challenge(request, invalid=False)(scope, receive, send)
            return
        # a store read: off the loop every tenant's requests are answered on
        holder = await anyio.to_thread.run_sync(self.tokens.check, token.strip())
        if holder is None:
            await _challenge(request, invalid=True)(scope, receive, send)
            return
        # The SDK binds each session to the credential that opened it (its client_id).
        credential = AccessToken(token=holder.id, client_id=holder.id, scopes=[])
        scope["user"] = AuthenticatedUser(credential)
        manager = await self.servers.manager(holder.tenant)
        await manager.handle_request(scope, receive, send)


async def _metadata(request: Request) -> Response:
    """The protected-resource metadata (RFC 9728): a bearer token in the header, from the operator.

    No ``authorization_servers``: tokens are made out of band (``memcommit token create``),
    not through OAuth.
    """
    base = str(request.base_url).rstrip("/")
    document: dict[str, Any] = {
        "resource": f"{base}{MCP_PATH}",
        "bearer_methods_supported": ["header"],
        "resource_name": "memcommit",
    }
    return Response(json.dumps(document), media_type="application/json")


def served_app(store: StoreLike) -> Starlette:
    """The ASGI application serving every tenant of ``store`` behind its tokens."""
    servers = TenantServers(store)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with servers.running():
            yield

    return Starlette(
        routes=[
            Route(MCP_PATH, Gate(Tokens(store), servers), methods=["GET", "POST", "DELETE"]),
            Route(METADATA, _metadata, methods=["GET"]),
            Route(f"{METADATA}{MCP_PATH}", _metadata, methods=["GET"]),
        ],
        lifespan=lifespan,
    )


def serve_tenants(
    target: str,
    *,
    host: str,
    port: int,
    embedder: str | Embedder | None = None,
    recall_cache_bytes: int = DEFAULT_RECALL_CACHE_BYTES,
) -> None:
    """Open the store at ``target`` and serve every tenant on ``host``, each behind its tokens.

    ``embedder`` and ``recall_cache_bytes`` open the store with them, as `mcp.serve` does
    (the budget matters most here: one process serves every tenant).
    """
    store = memcommit.open(target, embedder=embedder, recall_cache_bytes=recall_cache_bytes)
    try:
        anyio.run(serve_http, served_app(store), host, port, "every tenant, by bearer token")
    finally:
        store.close()
