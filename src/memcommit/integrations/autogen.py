"""An AutoGen ``Memory`` whose contents are memcommit memories and whose query is recall.

    import memcommit
    from autogen_agentchat.agents import AssistantAgent
    from memcommit.integrations.autogen import MemcommitMemory

    memory = MemcommitMemory("memory.db", tenant="acme", name="preferences", k=5)
    await memory.add(MemoryContent(content="Ada writes in metric units.", mime_type="text/plain"))
    agent = AssistantAgent("helper", model_client=..., memory=[memory])

Each added content is a memory of one scope (the memory's ``name``) of one
tenant: its content is the text recall reads (the text itself, JSON text for a
dict, a short description for bytes or an image) and ``metadata["autogen"]``
holds the content as given, so a query returns what was added. ``query`` and
``update_context`` go through `memcommit.recall` (``k`` is ``max_records``;
budgets, pools and scorers pass through), and each result carries recall's
explanation of it in ``metadata["memcommit"]``. ``clear`` invalidates: the
contents leave every answer and stay in history. Any other memory of the scope
(one written through MCP or the API, whatever its metadata says) is no content:
no answer holds it, and ``clear`` leaves it as it is. ``chronological=True`` makes
recall count every memory as relevant, oldest first, which is what AutoGen's
``ListMemory`` returns. Needs ``memcommit[autogen]``.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from memcommit.errors import InvalidInput, MissingExtra, StoreClosed

try:
    from autogen_core import CancellationToken, Component, Image
    from autogen_core.memory import (
        Memory,
        MemoryContent,
        MemoryMimeType,
        MemoryQueryResult,
        UpdateContextResult,
    )
    from autogen_core.model_context import ChatCompletionContext
    from autogen_core.models import SystemMessage
    from pydantic import BaseModel, Field
except ImportError as exc:
    raise MissingExtra(__name__, "autogen", exc.name) from exc

import memcommit
from memcommit.integrations import marks, opened, recall_arguments, recall_own
from memcommit.model import Memory as Stored
from memcommit.recall import Context, RecallOptions, Row

#: The metadata key of an added content (as given), and of recall's row on a result.
MARK = "autogen"
EXPLAINED = "memcommit"
#: The scope `query` recalls from, which no recall option may change.
_BOUND = "its own scope (its name)"
#: The shape of an added content's mark: its MIME type, metadata and one value of a kind.
_REQUIRED: marks.Shape = {"mime_type": str}
_VALUES: marks.Shape = {"text": str, "json": Mapping, "bytes": str, "image": str}
_OPTIONAL: marks.Shape = {"metadata": Mapping, **_VALUES}


def _every_memory(memory: Stored, query: Any) -> float:
    """A scorer that finds every memory equally relevant: recall then keeps their order."""
    return 1.0


class MemcommitMemoryConfig(BaseModel):
    """The component configuration of a `MemcommitMemory` (a store opened from a target)."""

    store: str
    options: dict[str, Any] = Field(default_factory=dict)
    tenant: str = "default"
    name: str = "memcommit"
    k: int | None = 5
    chronological: bool = False
    explain: bool = True


class MemcommitMemory(Memory, Component[MemcommitMemoryConfig]):
    """AutoGen memory kept in one scope (``name``) of one tenant of a memcommit store.

    ``store`` is a `memcommit.Store`, or a path or ``postgresql://`` URL to open
    (with ``options`` for `memcommit.open`; then `close` closes it, and only then
    can `dump_component` describe it). ``k`` caps the results (None: no cap);
    ``recall_options`` go to every recall (``budget``, ``pools``, ``scorer``,
    ``recency_weight``, ...; not ``scopes``: the name is the scope, and
    InvalidInput says so); ``explain=False`` leaves results' metadata as added.
    """

    component_type = "memory"
    component_config_schema = MemcommitMemoryConfig
    component_provider_override = "memcommit.integrations.autogen.MemcommitMemory"

    def __init__(
        self,
        store: memcommit.Store | str | Path = "memcommit.db",
        *,
        tenant: str = "default",
        name: str = "memcommit",
        k: int | None = 5,
        chronological: bool = False,
        explain: bool = True,
        options: Mapping[str, Any] | None = None,
        recall_options: Mapping[str, Any] | None = None,
        kind: str = "fact",
        author: str = "autogen",
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 0):
            raise InvalidInput("k", k, "must be an int >= 0 or None")
        self._store, self._target = opened(store, options)
        self._recall_options = recall_arguments(recall_options or {}, bound=_BOUND)
        self._options = dict(options or {})
        self.view = self._store.tenant(tenant)
        if not isinstance(name, str) or not name.strip():
            raise InvalidInput("name", name, "must be non-empty text (it is the scope)")
        self._name = name
        self.tenant, self.k, self.chronological, self.explain = tenant, k, chronological, explain
        self.kind, self.author, self.clock = kind, author, clock
        self._closed = False

    @property
    def name(self) -> str:
        """The memory's name: the memcommit scope that holds its contents."""
        return self._name

    # -- the Memory protocol --------------------------------------------------------

    async def add(
        self, content: MemoryContent, cancellation_token: CancellationToken | None = None
    ) -> None:
        """Add ``content`` as a new memory, in one commit."""
        if not isinstance(content, MemoryContent):
            raise InvalidInput("content", content, "must be an autogen_core MemoryContent")
        text, stored = _encoded(content)
        await asyncio.to_thread(self._add, text, stored)

    async def query(
        self,
        query: str | MemoryContent = "",
        cancellation_token: CancellationToken | None = None,
        **kwargs: Any,
    ) -> MemoryQueryResult:
        """The contents recall selects for ``query``, in recall's order (corrections first).

        ``kwargs`` are `memcommit.recall` arguments for this call (``max_records``
        overrides ``k``; ``scopes`` is refused, as in ``recall_options``).
        """
        ctx = await asyncio.to_thread(self.recall, _query_text(query), **kwargs)
        return MemoryQueryResult(results=[self._explained(found, ctx) for found in _found(ctx)])

    async def update_context(self, model_context: ChatCompletionContext) -> UpdateContextResult:
        """Recall for the conversation's latest message; add what it packs as a system message."""
        messages = await model_context.get_messages()
        latest = next((m.content for m in reversed(messages) if isinstance(m.content, str)), "")
        ctx = await asyncio.to_thread(self.recall, latest)
        found = _found(ctx)
        if found:
            packed = "\n".join(f"{n}. {row.memory.content}" for n, (row, _) in enumerate(found, 1))
            await model_context.add_message(SystemMessage(content=f"What you remember:\n{packed}"))
        results = [self._explained(pair, ctx) for pair in found]
        return UpdateContextResult(memories=MemoryQueryResult(results=results))

    async def clear(self) -> None:
        """Invalidate every content of this memory (history keeps them), in one commit."""
        await asyncio.to_thread(self._clear)

    async def close(self) -> None:
        """End this memory object: later calls raise StoreClosed (a store you passed stays open)."""
        self._closed = True
        if self._target is not None:
            self._store.close()

    # -- what memcommit adds --------------------------------------------------------

    def recall(self, query: str, **kwargs: Any) -> Context:
        """The `memcommit.recall` Context behind `query`: every row, each exclusion's reason.

        Recall's cap is raised past memories of the scope that are no contents
        (`recall_own`), so `query` returns ``k`` contents when the memory holds them.
        """
        self._check_open()
        fields: dict[str, Any] = {
            "scopes": [self._name],
            "max_records": self.k,
            "now": None if self.clock is None else self.clock(),
            **({"scorer": _every_memory} if self.chronological else {}),
            **self._recall_options,
            **recall_arguments(kwargs, bound=_BOUND),
        }
        options = RecallOptions(**fields)
        return recall_own(self.view, query, options, lambda m: _added(m) is not None)

    # -- components -----------------------------------------------------------------

    def _to_config(self) -> MemcommitMemoryConfig:
        if self._target is None:
            raise InvalidInput(
                "store", self._store, "pass a path or URL (not a Store) to dump this memory"
            )
        return MemcommitMemoryConfig(
            store=self._target,
            options=self._options,
            tenant=self.tenant,
            name=self._name,
            k=self.k,
            chronological=self.chronological,
            explain=self.explain,
        )

    @classmethod
    def _from_config(cls, config: MemcommitMemoryConfig) -> MemcommitMemory:
        return cls(
            config.store,
            options=config.options,
            tenant=config.tenant,
            name=config.name,
            k=config.k,
            chronological=config.chronological,
            explain=config.explain,
        )

    # -- the work -------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosed(f"memory {self._name!r} is closed")

    def _commit(self, message: str) -> Any:
        self._check_open()
        now = None if self.clock is None else self.clock()
        return self.view.commit(message=message, author=self.author, now=now)

    def _add(self, text: str, stored: dict[str, Any]) -> None:
        with self._commit(f"autogen: add to {self._name}") as tx:
            tx.add(text, kind=self.kind, scope=self._name, metadata={MARK: stored})

    def _clear(self) -> None:
        """Invalidate the contents that hold, read inside the commit under the writers' lock.

        A content another writer cleared since is not invalidated a second time.
        """
        now = None if self.clock is None else self.clock()
        with self._commit(f"autogen: clear {self._name}") as tx:
            found = self.view.find(scopes=[self._name], live=False)
            held = [m for m in found if m.holds(now) and _added(m) is not None]
            tx.message = f"autogen: clear {self._name} ({len(held)})"
            for memory in held:
                tx.invalidate(memory.id)

    def _explained(self, found: tuple[Row, MemoryContent], ctx: Context) -> MemoryContent:
        """A selected content, with recall's row in its metadata unless ``explain`` is False."""
        row, content = found
        if self.explain:
            metadata = dict(content.metadata or {})
            metadata[EXPLAINED] = {
                "id": row.memory.id,
                "score": row.score,
                "pool": row.pool,
                "cost": row.cost,
                "unit": ctx.unit,
                "scorer": ctx.scorer,
            }
            content.metadata = metadata
        return content


def _found(ctx: Context) -> list[tuple[Row, MemoryContent]]:
    """The selected rows that are contents of this memory, each with its content."""
    rows = ctx.explanation.page(0, len(ctx.selected), outcome="selected")
    found = [(row, _added(row.memory)) for row in rows]
    return [(row, content) for row, content in found if content is not None]


def _query_text(query: Any) -> str:
    if isinstance(query, MemoryContent):
        query = query.content
    if isinstance(query, str):
        return query
    if isinstance(query, dict):
        return json.dumps(query, sort_keys=True, ensure_ascii=False, default=str)
    raise InvalidInput("query", query, "must be text or a MemoryContent of text or JSON")


def _mime(content: MemoryContent) -> str:
    mime = content.mime_type
    return mime.value if isinstance(mime, MemoryMimeType) else str(mime)


def _encoded(content: MemoryContent) -> tuple[str, dict[str, Any]]:
    """What recall reads of a content, and the content as stored (JSON)."""
    value = content.content
    mime = _mime(content)
    stored: dict[str, Any] = {"mime_type": mime, "metadata": content.metadata}
    if isinstance(value, str):
        text, stored["text"] = value, value
    elif isinstance(value, dict):
        text, stored["json"] = json.dumps(value, sort_keys=True, ensure_ascii=False), value
    elif isinstance(value, bytes):
        text, stored["bytes"] = f"{mime} content, {len(value)} bytes", _b64(value)
    elif isinstance(value, Image):
        text, stored["image"] = "an image", value.to_base64()
    else:
        raise InvalidInput("content", value, "must be text, a dict, bytes or an Image")
    if not text.strip():
        raise InvalidInput("content", value, "must not be empty")
    return text, stored


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _added(memory: Stored) -> MemoryContent | None:
    """The content ``memory`` holds if it has the shape `add` writes, else None.

    Any memory of the scope may carry metadata named "autogen" (one written
    through MCP or the API, say): only a mark of the shape `add` writes, holding
    one value that decodes, makes it a content.
    """
    stored = marks.mark_of(memory, MARK, key=None, required=_REQUIRED, optional=_OPTIONAL)
    if stored is None or sum(stored.get(kind) is not None for kind in _VALUES) != 1:
        return None
    try:
        return _decoded(stored)
    except (ValueError, OSError):  # bytes or an image that do not decode, a refused content
        return None


def _decoded(stored: Mapping[str, Any]) -> MemoryContent:
    value: Any
    if stored.get("text") is not None:
        value = stored["text"]
    elif stored.get("json") is not None:
        value = dict(stored["json"])
    elif stored.get("bytes") is not None:
        value = base64.b64decode(stored["bytes"], validate=True)
    else:
        value = Image.from_base64(stored["image"])
    mime = stored["mime_type"]
    known = {m.value: m for m in MemoryMimeType}
    metadata = stored.get("metadata")
    return MemoryContent(
        content=value,
        mime_type=known.get(mime, mime),
        metadata=None if metadata is None else dict(metadata),
    )


__all__ = ["MemcommitMemory", "MemcommitMemoryConfig"]
