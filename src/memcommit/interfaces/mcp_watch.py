"""What the MCP server tells its clients about changes: resource updates and log messages.

A commit of the server's tenant (a tool's own, or the tiers' upkeep after it)
changes ``memcommit://working``, ``memcommit://commits/recent`` and the
``memcommit://memory/{id}`` of every memory it touched. After each tool call
the server announces those URIs: to the connections that subscribed to them
(``resources/subscribe``, the protocol versions with a handshake) and on the
server's subscription bus (``subscriptions/listen``, 2026-07-28 on). It also
logs each commit to the calling client (``notifications/message``, level
``info``, ids only, never content) at or above the level the client chose
(``logging/setLevel``, ``warning`` until it chooses; on 2026-07-28 the level
its request opted in to).

Only commits made through this process's store are seen (`StoreApi.on_commit`);
the watch never sees another tenant's commits, whatever URI a client names.
"""

from __future__ import annotations

import weakref
from collections import deque
from collections.abc import Iterable
from typing import Any, get_args

import anyio
from mcp.server.connection import Connection, allowed_log_levels
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.types import (
    EmptyResult,
    LoggingLevel,
    SetLevelRequestParams,
    SubscribeRequestParams,
    UnsubscribeRequestParams,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from memcommit.model import Commit
from memcommit.store import TenantViewLike

WORKING = "memcommit://working"
RECENT = "memcommit://commits/recent"
MEMORY = "memcommit://memory/{memory_id}"

#: Severity-ascending, as the protocol orders them (RFC 5424).
LEVELS: tuple[LoggingLevel, ...] = get_args(LoggingLevel)
#: The level a client gets log messages from until it sets one.
DEFAULT_LEVEL: LoggingLevel = "warning"

#: At most this many commits between two tool calls are logged (the newest).
LOGGED = 100

_LEVEL = "memcommit.log_level"
_SUBSCRIBED = "memcommit.subscribed"


def changed_uris(commits: Iterable[Commit]) -> list[str]:
    """The resources ``commits`` changed, in a stable order, each once."""
    uris: dict[str, None] = {}
    for commit in commits:
        uris[WORKING] = uris[RECENT] = None
        for change in commit.changes:
            uris[MEMORY.format(memory_id=change.memory_id)] = None
    return list(uris)


def connection_of(ctx: ServerRequestContext[Any, Any]) -> Connection:
    """The client connection a request came on: what outlives the request.

    The SDK makes a session object per request; the connection it wraps is the
    one thing shared by a client's requests, so subscriptions and log levels
    live in its ``state``. The SDK offers no public accessor from a request's
    session to it.
    """
    connection: Connection = ctx.session._connection
    return connection


class Watch:
    """The subscriptions and log levels of one server's clients, and what changed since."""

    def __init__(self, view: TenantViewLike) -> None:
        # Commits since the last announcement: the newest LOGGED are logged, every one's
        # resources announced (a store written through Python between calls stays bounded).
        self._logged: deque[Commit] = deque(maxlen=LOGGED)
        self._changed: dict[str, None] = {}
        self._subscribers: weakref.WeakSet[Connection] = weakref.WeakSet()
        view.on_commit(self._heard)

    def _heard(self, commit: Commit) -> None:
        self._logged.append(commit)
        self._changed.update(dict.fromkeys(changed_uris([commit])))

    # -- the request handlers ------------------------------------------------------

    async def subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: SubscribeRequestParams
    ) -> EmptyResult:
        """``resources/subscribe``: any URI is accepted; one that never changes never fires.

        Accepting every URI keeps an id of another tenant indistinguishable from
        an id that does not exist: neither is refused, neither ever fires.
        """
        connection = connection_of(ctx)
        connection.state.setdefault(_SUBSCRIBED, set()).add(str(params.uri))
        self._subscribers.add(connection)
        return EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: UnsubscribeRequestParams
    ) -> EmptyResult:
        """``resources/unsubscribe``: no more updates of that URI on this connection."""
        connection_of(ctx).state.get(_SUBSCRIBED, set()).discard(str(params.uri))
        return EmptyResult()

    async def set_level(
        self, ctx: ServerRequestContext[Any, Any], params: SetLevelRequestParams
    ) -> EmptyResult:
        """``logging/setLevel``: this connection gets log messages at ``level`` and above."""
        connection_of(ctx).state[_LEVEL] = params.level
        return EmptyResult()

    # -- after a tool call -----------------------------------------------------------

    async def announce(self, context: Context[Any, Any], *also: str) -> None:
        """Tell every subscriber what the commits since the last call changed; log them.

        ``also`` names resources the call changed without a commit (``touch``
        moves memories between tiers by counting uses).
        """
        commits, uris = list(self._logged), list(self._changed)
        self._logged.clear()
        self._changed.clear()
        for commit in commits:
            await self.log(
                context,
                "info",
                {"commit": commit.seq, "author": commit.author, "message": commit.message},
            )
        uris += [uri for uri in also if uri not in uris]
        for uri in uris:
            await context.notify_resource_updated(uri)
            for connection in list(self._subscribers):
                if uri in connection.state.get(_SUBSCRIBED, ()):
                    try:
                        await connection.send_resource_updated(uri)
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        self._subscribers.discard(connection)  # the client went away

    async def log(self, context: Context[Any, Any], level: LoggingLevel, data: Any) -> None:
        """Send ``data`` to the calling client if it asked for ``level`` or lower.

        On 2026-07-28 a client opts in per request (``_meta``) and the SDK holds
        back what it did not ask for; only the handshake-era protocols have
        ``logging/setLevel``, and a default level until it is called.
        """
        request = context.request_context
        if level not in allowed_log_levels(request.protocol_version, request.meta):
            return  # a 2026-07-28 request that did not opt in to this level
        handshake = request.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
        chosen = connection_of(request).state.get(_LEVEL, DEFAULT_LEVEL if handshake else "debug")
        if LEVELS.index(level) >= LEVELS.index(chosen):
            await context.log(level, data, logger_name="memcommit")
