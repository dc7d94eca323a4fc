"""A Google ADK memory service whose memories are memcommit's and whose search is recall.

    import memcommit
    from google.adk.runners import Runner
    from memcommit.integrations.google_adk import MemcommitMemoryService

    memory = MemcommitMemoryService(memcommit.open("memory.db"))
    runner = Runner(agent=agent, app_name="travel", session_service=..., memory_service=memory)

An ADK app is a memcommit tenant (apps never see each other's memories) and a
user is a scope of it. Each session is a trace of the tenant: every event with
text is a step (its content "author: text", what recall reads;
``metadata["adk"]`` the event's id, author, timestamp and content as ADK dumps
them). Re-adding a session brings its trace up to the session's events (new
ones appended, changed ones a new version, dropped ones invalidated);
``add_events_to_memory`` appends a delta; ``add_memory`` writes memories
directly (an entry whose id is already held becomes a new version of it, as
Memory Bank consolidates); ``delete_memory`` invalidates, history keeps it, and
a deleted event is not ingested again. ``search_memory`` is `memcommit.recall`
over the user's scope (``k`` is ``max_records``, ten as in ADK's in-memory
service); each entry carries recall's row in ``custom_metadata["memcommit"]``
and ``recall(...)`` returns the whole explanation. ``recall_options={"scorer":
keyword_overlap}`` ranks as ADK's in-memory service does. Needs
``memcommit[google-adk]``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import memcommit
from memcommit.errors import InvalidInput
from memcommit.integrations import marks, needs, opened, recall_arguments, recall_own
from memcommit.model import Memory
from memcommit.recall import Context, RecallOptions, Row

with needs("google-adk", __name__):  # the framework: a clear error without its extra
    from google.adk.events.event import Event
    from google.adk.memory.base_memory_service import BaseMemoryService, SearchMemoryResponse
    from google.adk.memory.memory_entry import MemoryEntry
    from google.adk.sessions.session import Session
    from google.genai import types
    from pydantic import ValidationError

#: The metadata key of an event or entry, and of recall's row on a result.
MARK = "adk"
EXPLAINED = "memcommit"
#: State namespaces of the tenant: (user, session) -> trace id; (user, event id) deleted.
_SESSIONS = "adk-sessions"
_DELETED = "adk-deleted"
#: The scope a search recalls from, which no recall option may change.
_BOUND = "the user's scope (its user_id)"
#: The shape of the adapter's mark: an event's step (an ``id``) or an entry (``custom_metadata``).
_REQUIRED: marks.Shape = {"text": str, "content": Mapping}
_OPTIONAL: marks.Shape = {"id": str, "author": str, "timestamp": str, "custom_metadata": Mapping}


def content_text(content: types.Content | None) -> str:
    """The text of a content's parts, joined by spaces ("" for none), as ADK searches it."""
    if content is None or not content.parts:
        return ""
    return " ".join(part.text for part in content.parts if part.text)


def _words(text: str) -> set[str]:
    return {word.lower() for word in re.findall(r"\w+", unicodedata.normalize("NFC", text))}


def _latin(char: str) -> bool:
    if char.isascii():
        return char.isalnum() or char == "_"
    return unicodedata.name(char, "").startswith("LATIN")


def keyword_overlap(memory: Memory, query: Any) -> float | None:
    """ADK's in-memory ranking as a recall scorer: how many query words the text holds.

    A word is a ``\\w+`` run, lowercased; a run mixing Latin and other scripts
    also counts its single-script pieces, and a non-ASCII query word matches
    inside the text too (CJK is written without spaces). None for no word.
    """
    stored = memory.metadata.get(MARK)
    if not isinstance(stored, Mapping):
        return None
    text = unicodedata.normalize("NFC", str(stored.get("text", "")))
    held = _words(text)
    for word in [w for w in held if not w.isascii()]:
        held.update("".join(run) for _, run in itertools.groupby(word, _latin))
    lowered = text.lower()
    asked = _words(query.text)
    found = sum(1 for w in asked if w in held or (not w.isascii() and w in lowered))
    return float(found) if found else None


class MemcommitMemoryService(BaseMemoryService):
    """ADK's memory service over memcommit: an app is a tenant, a user a scope of it.

    ``store`` is a `memcommit.Store`, or a path or ``postgresql://`` URL to open
    (with ``options``; then `close` closes it). ``k`` caps a search's entries
    (None: no cap); ``recall_options`` go to every search (``budget``, ``pools``,
    ``scorer``, ``recency_weight``, ...; not ``scopes``: the user is the scope,
    and InvalidInput says so); ``explain=False`` leaves entries' custom
    metadata as written.
    """

    def __init__(
        self,
        store: memcommit.Store | str | Path = "memcommit.db",
        *,
        k: int | None = 10,
        explain: bool = True,
        options: Mapping[str, Any] | None = None,
        recall_options: Mapping[str, Any] | None = None,
        author: str = "adk",
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 0):
            raise InvalidInput("k", k, "must be an int >= 0 or None")
        self._recall_options = recall_arguments(recall_options or {}, bound=_BOUND)
        self._store, self._target = opened(store, options)
        self.k, self.explain, self.author, self.clock = k, explain, author, clock

    # -- BaseMemoryService ----------------------------------------------------------

    async def add_session_to_memory(self, session: Session) -> None:
        """Bring the session's trace up to its events, in one commit (nothing new: none)."""
        if not isinstance(session, Session):
            raise InvalidInput("session", session, "must be a google.adk Session")
        view, user = self._place(session.app_name, session.user_id)
        await asyncio.to_thread(self._ingest, view, user, session.id, session.events, True)

    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Append the events not yet held (nor deleted) to the session's trace, in one commit."""
        view, user = self._place(app_name, user_id)
        checked = _events(events)
        if session_id is not None and (not isinstance(session_id, str) or not session_id):
            raise InvalidInput("session_id", session_id, "must be non-empty text or None")
        _metadata(custom_metadata)
        await asyncio.to_thread(self._ingest, view, user, session_id, checked, False)

    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Write the entries as memories of the user, in one commit; a held id gets a new version.

        ``custom_metadata`` is kept with each entry's own (the entry's keys win).
        """
        view, user = self._place(app_name, user_id)
        entries = _entries(memories)
        shared = _metadata(custom_metadata)
        await asyncio.to_thread(self._write_entries, view, user, entries, shared)

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        """The user's memories recall selects for ``query``, in recall's order."""
        ctx = await asyncio.to_thread(self.recall, app_name=app_name, user_id=user_id, query=query)
        entries = (self._entry(row, ctx) for row in _rows(ctx))
        return SearchMemoryResponse(memories=[entry for entry in entries if entry is not None])

    async def delete_memory(
        self, *, app_name: str, user_id: str, memory_id: str | None = None
    ) -> None:
        """Invalidate the user's memory ``memory_id`` (an entry's id); None or "" does nothing."""
        view, user = self._place(app_name, user_id)
        if memory_id is None or memory_id == "":
            return
        if not isinstance(memory_id, str):
            raise InvalidInput("memory_id", memory_id, "must be text (a MemoryEntry.id) or None")
        await asyncio.to_thread(self._delete, view, user, memory_id)

    # -- what memcommit adds --------------------------------------------------------

    def recall(self, *, app_name: str, user_id: str, query: str, **kwargs: Any) -> Context:
        """The `memcommit.recall` Context behind `search_memory`: every row, why each was left out.

        ``kwargs`` are recall arguments for this call (``max_records`` overrides ``k``;
        ``scopes`` is refused, as in ``recall_options``). Memories of the user's
        scope this service did not write are no entries: recall's cap is raised
        past them (`recall_own`), so a search finds ``k`` entries when the user has them.
        """
        view, user = self._place(app_name, user_id)
        if not isinstance(query, str):
            raise InvalidInput("query", query, "must be text")
        fields: dict[str, Any] = {
            "scopes": [user],
            "max_records": self.k,
            "now": self._now(),
            **self._recall_options,
            **recall_arguments(kwargs, bound=_BOUND),
        }
        return recall_own(
            view, query, RecallOptions(**fields), lambda m: _stored_entry(m) is not None
        )

    def view(self, app_name: str) -> memcommit.TenantView:
        """The tenant of an app: its memories, traces, history and log."""
        return self._place(app_name, "-")[0]

    def close(self) -> None:
        """Close the store if this service opened it (a store you passed stays open)."""
        if self._target is not None:
            self._store.close()

    # -- the work -------------------------------------------------------------------

    def _now(self) -> datetime | None:
        return None if self.clock is None else self.clock()

    def _place(self, app_name: Any, user_id: Any) -> tuple[memcommit.TenantView, str]:
        for name, value in (("app_name", app_name), ("user_id", user_id)):
            if not isinstance(value, str) or not value.strip():
                raise InvalidInput(name, value, "must be non-empty text")
        return self._store.tenant(app_name), user_id

    def _commit(self, view: memcommit.TenantView, message: str) -> Any:
        return view.commit(message=message, author=self.author, now=self._now())

    def _ingest(
        self,
        view: memcommit.TenantView,
        user: str,
        session_id: str | None,
        events: Sequence[Event],
        whole: bool,
    ) -> None:
        """Write events into the session's trace: all of it (``whole``) or a delta."""
        session_key = json.dumps([user, session_id])
        what = "session" if whole else "events of session"
        with self._commit(view, f"adk: {what} {session_id} of {user}") as tx:
            trace_id = view.state_get(_SESSIONS, session_key)
            held = {} if trace_id is None else _held_steps(view, trace_id)
            wanted = [
                (event, text)
                for event in events
                if (text := content_text(event.content))
                and view.state_get(_DELETED, json.dumps([user, event.id])) is None
            ]
            fresh = [(e, t) for e, t in wanted if e.id not in held]
            if whole:
                keep = {e.id: (e, t) for e, t in wanted}
                for event_id, step in held.items():
                    if event_id not in keep:
                        tx.invalidate(step.id)
                    elif step.metadata[MARK] != _stored(*keep[event_id]):
                        event, text = keep[event_id]
                        metadata = {MARK: _stored(event, text)}
                        tx.update(step.id, content=_said(event, text), metadata=metadata)
            if not fresh:
                return
            if trace_id is None:
                trace_id = tx.begin_trace(
                    f"adk session {session_id}", scope=user, session=session_id
                )
                tx.archive(trace_id)  # the root names the session; recall spends no slot on it
                view.state_set(_SESSIONS, session_key, trace_id)  # in this commit: atomic with it
            for event, text in fresh:
                tx.step(trace_id, _said(event, text), metadata={MARK: _stored(event, text)})

    def _write_entries(
        self,
        view: memcommit.TenantView,
        user: str,
        entries: list[tuple[MemoryEntry, str]],
        shared: dict[str, Any],
    ) -> None:
        with self._commit(view, f"adk: {len(entries)} memories of {user}") as tx:
            held = {m.metadata[MARK].get("id"): m for m in _held(view, user) if m.trace_id is None}
            for entry, text in entries:
                stored = {
                    "id": entry.id,
                    "text": text,
                    "author": entry.author,
                    "timestamp": entry.timestamp,
                    "content": entry.content.model_dump(mode="json", exclude_none=True),
                    "custom_metadata": {**shared, **entry.custom_metadata},
                }
                found = held.get(entry.id) if entry.id else None
                if found is None:
                    tx.add(text, kind="fact", scope=user, metadata={MARK: stored})
                else:
                    tx.update(found.id, content=text, metadata={MARK: stored})

    def _delete(self, view: memcommit.TenantView, user: str, memory_id: str) -> None:
        with self._commit(view, f"adk: delete {memory_id} of {user}") as tx:
            chosen = [
                m
                for m in _held(view, user)
                if m.id == memory_id or m.metadata[MARK].get("id") == memory_id
            ]
            for memory in chosen:
                tx.invalidate(memory.id)
            if any(m.trace_id is not None for m in chosen):  # an event: never ingested again
                view.state_set(_DELETED, json.dumps([user, memory_id]), True)

    def _entry(self, row: Row, ctx: Context) -> MemoryEntry | None:
        """The entry a selected row is, or None for a memory this service did not write."""
        memory = row.memory
        found = _stored_entry(memory)
        if found is None:
            return None
        stored, content = found
        extra = dict(stored.get("custom_metadata") or {})
        if self.explain:
            extra[EXPLAINED] = {
                "id": memory.id,
                "score": row.score,
                "pool": row.pool,
                "cost": row.cost,
                "unit": ctx.unit,
                "scorer": ctx.scorer,
            }
        return MemoryEntry(
            id=stored.get("id") or memory.id,
            content=content,
            author=stored.get("author"),
            timestamp=stored.get("timestamp"),
            custom_metadata=extra,
        )


def _mark(memory: Memory) -> Mapping[str, Any] | None:
    """``memory``'s ADK fields if it has the shape this service writes, else None.

    Any memory of a user's scope may carry metadata named "adk" (one written
    through MCP or the API, say): only the adapter's shape makes it an event or
    an entry, so any other is left out of searches, writes and deletes, and
    never breaks them.
    """
    return marks.mark_of(memory, MARK, key=None, required=_REQUIRED, optional=_OPTIONAL)


def _stored_entry(memory: Memory) -> tuple[Mapping[str, Any], types.Content] | None:
    """``memory``'s ADK fields and Content if a search can return it as an entry, else None."""
    stored = _mark(memory)
    if stored is None:
        return None
    try:
        return stored, types.Content.model_validate(stored["content"])
    except ValidationError:  # "adk" metadata of the mark's shape, but no ADK Content
        return None


def _held(view: memcommit.TenantView, user: str) -> list[Memory]:
    """The user's events and entries that hold (memories the service did not write left out)."""
    return [m for m in view.find(scopes=[user]) if _mark(m) is not None]


def _held_steps(view: memcommit.TenantView, trace_id: str) -> dict[str, Memory]:
    """The trace's event steps that hold, by ADK event id."""
    held = {}
    for step in view.find(trace=trace_id):
        mark = _mark(step) if step.step else None
        if mark is not None and mark.get("id") is not None:
            held[mark["id"]] = step
    return held


def _said(event: Event, text: str) -> str:
    return f"{event.author}: {text}" if event.author else text


def _stored(event: Event, text: str) -> dict[str, Any]:
    """An event as a step keeps it: what a search returns of it, and the text it matches."""
    return {
        "id": event.id,
        "text": text,
        "author": event.author,
        "timestamp": datetime.fromtimestamp(event.timestamp).isoformat(),  # as ADK formats it
        "content": event.content.model_dump(mode="json", exclude_none=True),
    }


def _rows(ctx: Context) -> list[Row]:
    return ctx.explanation.page(0, len(ctx.selected), outcome="selected")


def _events(events: Any) -> list[Event]:
    if isinstance(events, (str, bytes, Mapping, Event)) or not isinstance(events, Sequence):
        raise InvalidInput("events", events, "must be a list of google.adk Event")
    for event in events:
        if not isinstance(event, Event):
            raise InvalidInput("events", event, "each event must be a google.adk Event")
    return list(events)


def _entries(memories: Any) -> list[tuple[MemoryEntry, str]]:
    if isinstance(memories, (str, bytes, Mapping, MemoryEntry)) or not isinstance(
        memories, Sequence
    ):
        raise InvalidInput("memories", memories, "must be a list of MemoryEntry")
    out = []
    for entry in memories:
        if not isinstance(entry, MemoryEntry):
            raise InvalidInput("memories", entry, "each memory must be a MemoryEntry")
        text = content_text(entry.content)
        if not text.strip():
            raise InvalidInput("memories", entry, "a memory's content must hold text")
        out.append((entry, text))
    return out


def _metadata(custom_metadata: Any) -> dict[str, Any]:
    if custom_metadata is None:
        return {}
    if not isinstance(custom_metadata, Mapping):
        raise InvalidInput("custom_metadata", custom_metadata, "must be a mapping or None")
    try:
        json.dumps(dict(custom_metadata))
    except (TypeError, ValueError) as exc:
        raise InvalidInput("custom_metadata", custom_metadata, f"must be JSON: {exc}") from exc
    return dict(custom_metadata)


__all__ = ["MemcommitMemoryService", "content_text", "keyword_overlap"]
