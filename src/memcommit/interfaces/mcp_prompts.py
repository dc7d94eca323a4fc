"""The MCP server's prompts, and the completions of their arguments and of resource templates.

Two prompts put the memory into a conversation: ``recall-context`` (the packed
context for a query, as `recall` builds it) and ``review-memory`` (one memory,
to check whether it still holds). Completion (``completion/complete``) offers
what an argument can be in this tenant: memory ids for ``memory_id`` (in the
prompt and in ``memcommit://memory/{memory_id}``), the kinds for ``kind``, the
scopes in use for ``scope``. A reference the server does not serve completes
to nothing, as the protocol's examples do for an argument with no suggestions.
"""

from __future__ import annotations

import functools
import json
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts.base import Message, UserMessage
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    Completion,
    CompletionArgument,
    CompletionContext,
    EmbeddedResource,
    PromptReference,
    ResourceTemplateReference,
    TextResourceContents,
)
from pydantic import Field

from memcommit.errors import MemcommitError
from memcommit.interfaces.agent import AgentMemory
from memcommit.interfaces.mcp_turns import Turns
from memcommit.interfaces.mcp_watch import MEMORY
from memcommit.model import KINDS

#: The most values one completion returns (the protocol's limit).
MOST = 100
PROMPTS = ("recall-context", "review-memory")


class Completer:
    """What each completable argument can be, read from one tenant's memory."""

    def __init__(self, memory: AgentMemory, turns: Turns) -> None:
        self.view = memory.view
        self.turns = turns
        self._scopes: tuple[int, list[str]] = (-1, [])

    def memory_ids(self, prefix: str) -> Completion:
        """The ids of this tenant's memories (any status) that start with ``prefix``."""
        after = None
        if prefix:  # the greatest text below every id that starts with prefix
            after = prefix[:-1] + chr(max(ord(prefix[-1]) - 1, 0)) + "\U0010ffff"
        found = self.view.find(live=False, after=after, limit=MOST + 1)
        ids = [m.id for m in found if m.id.startswith(prefix)]
        return Completion(values=ids[:MOST], has_more=len(ids) > MOST)

    def scopes(self, prefix: str) -> Completion:
        """The scopes of this tenant's live memories, read again only after a new commit."""
        head = self.view.head_seq
        if self._scopes[0] != head:
            self._scopes = (head, sorted({m.scope for m in self.view.find()}))
        return _matching(self._scopes[1], prefix)

    async def complete(
        self,
        ref: PromptReference | ResourceTemplateReference,
        argument: CompletionArgument,
        context: CompletionContext | None,
    ) -> Completion:
        """The ``completion/complete`` handler."""
        served = (
            ref.name in PROMPTS
            if isinstance(ref, PromptReference)
            else ref.uri == MEMORY and argument.name == "memory_id"
        )
        if not served:
            return Completion(values=[])
        if argument.name == "memory_id":
            return await self.turns.run(functools.partial(self.memory_ids, argument.value))
        if argument.name == "kind":
            return _matching(list(KINDS), argument.value)
        if argument.name == "scope":
            return await self.turns.run(functools.partial(self.scopes, argument.value))
        return Completion(values=[])


def _matching(values: list[str], prefix: str) -> Completion:
    chosen = [value for value in values if value.startswith(prefix)]
    return Completion(values=chosen[:MOST], total=len(chosen), has_more=len(chosen) > MOST)


def _refused(exc: MemcommitError) -> MCPError:
    """A prompt's library error as the protocol's invalid-params error, naming the field."""
    return MCPError(code=INVALID_PARAMS, message=str(exc))


def add_prompts(server: MCPServer, memory: AgentMemory, turns: Turns) -> None:
    """Offer the prompts over ``memory``, and completion of their arguments; every store
    read runs in its turn (`Turns`)."""
    completer = Completer(memory, turns)
    server.completion()(completer.complete)  # type: ignore[no-untyped-call]

    @server.prompt(
        name="recall-context",
        description="What your memory holds about a query, packed within a word budget, to"
        " start a task with (corrections always included).",
    )
    async def recall_context(
        query: Annotated[str, Field(description="What you are about to work on.")],
        scope: Annotated[str | None, Field(description="Only memories of this scope.")] = None,
        kind: Annotated[str | None, Field(description="Only memories of this kind.")] = None,
    ) -> list[Message]:
        try:
            recalled = await turns.run(
                functools.partial(
                    memory.recall,
                    query,
                    scopes=[scope] if scope else None,
                    kinds=[kind] if kind else None,
                )
            )
        except MemcommitError as exc:
            raise _refused(exc) from exc
        context = recalled["context"] or "(nothing in memory matches this yet)"
        return [UserMessage(f"What my memory holds about {query!r}:\n\n{context}")]

    @server.prompt(
        name="review-memory",
        description="One memory with all its fields, to check whether it still holds;"
        " then `forget` it or `remember` what replaced it.",
    )
    async def review_memory(
        memory_id: Annotated[str, Field(description="The memory's id.")],
    ) -> list[Message]:
        try:
            fields: dict[str, Any] = await turns.run(functools.partial(memory.memory, memory_id))
        except MemcommitError as exc:
            raise _refused(exc) from exc
        resource = TextResourceContents(
            uri=MEMORY.format(memory_id=memory_id),
            mime_type="application/json",
            text=json.dumps(fields, indent=2, ensure_ascii=False),
        )
        return [
            UserMessage(EmbeddedResource(type="resource", resource=resource)),
            UserMessage(
                "Does this memory still hold? If not, call `forget` with its id, or"
                " `remember` what is true now (with the same key, if it has one)."
            ),
        ]
