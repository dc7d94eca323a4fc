"""An OpenAI Agents SDK ``Session`` whose conversation is a memcommit trace.

    import memcommit
    from agents import Agent, Runner
    from memcommit.integrations.openai_agents import MemcommitSession, recall_instructions

    store = memcommit.open("memory.db")
    session = MemcommitSession("chat-42", store, tenant="acme")
    agent = Agent(name="helper", instructions=recall_instructions(store.tenant("acme"), ...))
    await Runner.run(agent, "hello", session=session)
    session.finish(); session.compact()          # a finished session becomes a summary

Each session is one trace of the tenant (its root names the session); each item
is a step whose metadata holds the item as the SDK gave it, and whose content is
its text, so recall finds what was said. ``pop_item`` and ``clear_session``
invalidate steps: they leave the conversation but stay in history. Which trace
belongs to which session is kept in the tenant's state, so another process
(or a restart) continues the same conversation. Needs ``memcommit[openai-agents]``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import memcommit
from memcommit.compaction import CompactionResult, Compactor
from memcommit.errors import InvalidInput, StoreClosed
from memcommit.integrations import needs
from memcommit.model import Memory, Trace
from memcommit.recall import RecallOptions

with needs("openai-agents", __name__):  # the framework: a clear error without its extra
    from agents.memory import SessionABC, SessionSettings
    from agents.memory.session_settings import coerce_session_settings, resolve_session_limit

#: The metadata key of a step's item, and the state namespace of session -> trace.
MARK = "openai_agents"
_SESSIONS = "openai-agents-sessions"


def item_text(item: Mapping[str, Any]) -> str:
    """What an item says, as recall should read it: "role: text", or its JSON."""
    content = item.get("content")
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, Mapping)]
        content = " ".join(p for p in parts if isinstance(p, str))
    role = item.get("role") or item.get("type") or "item"
    if isinstance(content, str) and content.strip():
        return f"{role}: {content}"
    return json.dumps(item, sort_keys=True, ensure_ascii=False, default=str)


class _ThisTrace:
    """A compaction policy choosing one trace, when it is done."""

    def __init__(self, trace_id: str) -> None:
        self.trace_id = trace_id

    def select(self, traces: Sequence[Trace], now: datetime, held: Any) -> list[Trace]:
        return [t for t in traces if t.id == self.trace_id and t.status != "open"]


class MemcommitSession(SessionABC):
    """Conversation history kept as a memcommit trace (SQLite or PostgreSQL).

    ``store`` is a `memcommit.Store`, or a path or ``postgresql://`` URL to open
    (then the session owns it and `close` closes it). ``session_settings.limit``
    is the default for `get_items`. ``scope`` and ``kind`` are those of the steps.
    """

    def __init__(
        self,
        session_id: str,
        store: memcommit.Store | str | Path = ":memory:",
        *,
        tenant: str = "default",
        scope: str = "conversation",
        kind: str = "event",
        author: str = "openai-agents",
        session_settings: SessionSettings | dict[str, Any] | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        if not isinstance(session_id, str) or not session_id.strip():
            raise InvalidInput("session_id", session_id, "must be non-empty text")
        self._owned = not isinstance(store, memcommit.Store)
        self._store = memcommit.open(store) if self._owned else store
        self.session_id = session_id
        self.session_settings = (
            coerce_session_settings(session_settings)
            if session_settings is not None
            else SessionSettings()
        )
        self.view = self._store.tenant(tenant)
        self.scope, self.kind, self.author, self.clock = scope, kind, author, clock
        self._closed = False

    # -- the Session protocol ------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The conversation in order; with ``limit``, its latest ``limit`` items."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise InvalidInput("limit", limit, "must be an int or None")
        wanted = resolve_session_limit(limit, self.session_settings)
        items = [s.metadata[MARK] for s in await asyncio.to_thread(self._steps)]
        if wanted is None or wanted < 0:
            return items
        return items[-wanted:] if wanted else []

    async def add_items(self, items: list[dict[str, Any]]) -> None:
        """Append the items as the trace's next steps, in one commit."""
        self._check_open()
        if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
            raise InvalidInput("items", items, "must be a list of items (mappings)")
        items = list(items)
        for item in items:
            if not isinstance(item, Mapping):
                raise InvalidInput("items", item, "each item must be a mapping (a JSON object)")
        if items:
            await asyncio.to_thread(self._add, items)

    async def pop_item(self) -> dict[str, Any] | None:
        """Remove the latest item from the conversation (it stays in history) and return it."""
        return await asyncio.to_thread(self._pop)

    async def clear_session(self) -> None:
        """Remove every item from the conversation (all stay in history), in one commit."""
        await asyncio.to_thread(self._clear)

    # -- what memcommit adds -------------------------------------------------------

    @property
    def trace_id(self) -> str | None:
        """The trace holding this session (None before its first item)."""
        return self.view.state_get(_SESSIONS, self.session_id)

    def trace(self, *, as_of: Any = None) -> Trace | None:
        """The session's trace: every step ever added, with its status (as of a commit)."""
        trace_id = self.trace_id
        return None if trace_id is None else self.view.trace(trace_id, as_of=as_of)

    def finish(self, status: str = "finished") -> None:
        """End the session ("finished" or "failed"); it takes no more items."""
        trace_id = self.trace_id
        if trace_id is None:
            raise InvalidInput("session_id", self.session_id, "has no items to finish")
        with self._commit(f"openai-agents: {status} {self.session_id}") as tx:
            tx.finish(trace_id, status)

    def compact(self, **options: Any) -> CompactionResult:
        """Compact this finished session into a summary (see `memcommit.Compactor`)."""
        trace_id = self.trace_id
        if trace_id is None:
            raise InvalidInput("session_id", self.session_id, "has no items to compact")
        return Compactor(self.view, _ThisTrace(trace_id), author=self.author, **options).compact(
            now=None if self.clock is None else self.clock()
        )

    def close(self) -> None:
        """End this session object: later calls raise StoreClosed.

        The store is closed too if this session opened it; a store you passed
        stays open (other sessions may share it).
        """
        self._closed = True
        if self._owned:
            self._store.close()

    # -- the work ------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosed(f"session {self.session_id!r} is closed")

    def _commit(self, message: str) -> Any:
        self._check_open()
        now = None if self.clock is None else self.clock()
        return self.view.commit(message=message, author=self.author, now=now)

    def _steps(self) -> list[Memory]:
        self._check_open()
        trace_id = self.trace_id
        if trace_id is None:
            return []
        steps = self.view.find(trace=trace_id, live=False)
        return [m for m in steps if m.step and m.status == "active" and MARK in m.metadata]

    def _add(self, items: list[dict[str, Any]]) -> None:
        with self._commit(f"openai-agents: {len(items)} item(s) in {self.session_id}") as tx:
            trace_id = self.trace_id
            if trace_id is None:
                trace_id = tx.begin_trace(
                    f"session {self.session_id}", scope=self.scope, session=self.session_id
                )
                self.view.state_set(_SESSIONS, self.session_id, trace_id)
            for item in items:
                tx.step(trace_id, item_text(item), kind=self.kind, metadata={MARK: dict(item)})

    def _pop(self) -> dict[str, Any] | None:
        # a block that changes nothing lands no commit: an empty session pops without a trace
        with self._commit(f"openai-agents: pop from {self.session_id}") as tx:
            steps = self._steps()
            if not steps:
                return None
            tx.invalidate(steps[-1].id)
            return steps[-1].metadata[MARK]

    def _clear(self) -> None:
        with self._commit(f"openai-agents: clear {self.session_id}") as tx:
            for step in self._steps():
                tx.invalidate(step.id)


def recall_instructions(
    view: memcommit.TenantView,
    base: str,
    *,
    query: str | Callable[[Any], str] | None = None,
    options: RecallOptions | None = None,
    **recall_options: Any,
) -> Callable[[Any, Any], str]:
    """Agent ``instructions`` that append what recall packs for the conversation to ``base``.

    Pass the result as ``Agent(instructions=...)``: the SDK calls it before each
    model call with the run context and the agent. ``query`` is the recall query
    (text, or a function of the run context; default: the context's ``query``
    attribute or the base text); ``options`` (a `RecallOptions`) and
    ``recall_options`` (its fields by name: budget, pools, kinds, scopes, ...)
    say how to recall, checked here, once. The packed context is prompt-ready,
    corrections first.
    """
    chosen = (options or RecallOptions()).replace(**recall_options)

    def instructions(run_context: Any, agent: Any) -> str:
        if callable(query):
            text = query(run_context)
        elif query is not None:
            text = query
        else:
            text = getattr(getattr(run_context, "context", None), "query", None) or base
        packed = view.recall(text, chosen).render()
        return f"{base}\n\nWhat you remember:\n{packed}" if packed else base

    return instructions
