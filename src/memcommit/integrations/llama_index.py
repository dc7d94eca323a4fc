"""LlamaIndex over memcommit: the chat store behind ``Memory``, and a memory block of recall.

    import memcommit
    from llama_index.core.memory import Memory
    from memcommit.integrations.llama_index import MemcommitChatStore, MemcommitRecallBlock

    store = memcommit.open("memory.db")
    chat = MemcommitChatStore(store=store, tenant="acme")
    memory = Memory.from_defaults(session_id="chat-42", chat_store=chat, memory_blocks=[
        MemcommitRecallBlock(view=store.tenant("acme"), k=5),
    ])

`MemcommitChatStore` fulfils LlamaIndex's ``AsyncDBChatStore`` contract. Each
key (LlamaIndex's ``session_id``) is one trace of the tenant and each message a
step of it: its content is the message's text (what recall reads), and
``metadata["llama_index"]`` the message as LlamaIndex serializes it. A
message's status is its tier: ACTIVE messages are in the working tiers,
ARCHIVED ones in memcommit's ``archive`` tier. Deleting invalidates (history
keeps every message), and a message's ``idx`` is its step number: the n-th
message ever added under its key. `MemcommitRecallBlock` is a memory block
whose content is what `memcommit.recall` packs for the latest messages.
Needs ``memcommit[llama-index]``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from memcommit.errors import InvalidInput, MissingExtra

try:
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.bridge.pydantic import ConfigDict, Field
    from llama_index.core.memory.memory import BaseMemoryBlock
    from llama_index.core.storage.chat_store.base_db import AsyncDBChatStore, MessageStatus
except ImportError as exc:
    raise MissingExtra(__name__, "llama-index", exc.name) from exc

import memcommit
from memcommit.model import Memory

#: The metadata key of a step's message, and the state namespace of key -> trace.
MARK = "llama_index"
_KEYS = "llama-index-chat-keys"
ARCHIVE = "archive"


def message_text(message: ChatMessage) -> str:
    """What a message says, as recall should read it: "role: text", or its JSON."""
    role = getattr(message.role, "value", message.role)
    text = message.content
    if isinstance(text, str) and text.strip():
        return f"{role}: {text}"
    return json.dumps(message.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)


class MemcommitChatStore(AsyncDBChatStore):
    """LlamaIndex's DB chat store as memcommit traces: one per key, a step per message.

    ``store`` is a `memcommit.Store`; ``tenant`` the tenant every key lives in
    (tenants never see each other's keys); ``scope`` and ``kind`` those of the steps.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    store: memcommit.Store = Field(exclude=True, description="The store the messages live in.")
    tenant: str = "default"
    scope: str = "conversation"
    kind: str = "event"
    author: str = "llama-index"
    clock: Callable[[], datetime] | None = Field(default=None, exclude=True)

    def __init__(self, store: memcommit.Store, **fields: Any) -> None:
        if not isinstance(store, memcommit.Store):
            raise InvalidInput("store", store, "must be a memcommit.Store (memcommit.open())")
        # the fields are this class's; mypy sees the base model's (fieldless) __init__
        super().__init__(store=store, **fields)  # type: ignore[call-arg]

    @classmethod
    def class_name(cls) -> str:
        """LlamaIndex's name of this store class."""
        return "MemcommitChatStore"

    @property
    def view(self) -> memcommit.TenantView:
        """The tenant every key of this store lives in."""
        return self.store.tenant(self.tenant)

    # -- the AsyncDBChatStore contract ---------------------------------------------

    async def get_messages(
        self,
        key: str,
        status: MessageStatus | None = MessageStatus.ACTIVE,
        limit: int | None = None,
        offset: int | None = None,
    ) -> list[ChatMessage]:
        """The key's messages of ``status`` (None: both), oldest first; a page of them."""
        for name, number in (("limit", limit), ("offset", offset)):
            if number is not None and (
                isinstance(number, bool) or not isinstance(number, int) or number < 0
            ):
                raise InvalidInput(name, number, "must be an int >= 0 or None")
        steps = await asyncio.to_thread(self._steps, key, status)
        start = offset or 0
        steps = steps[start:] if limit is None else steps[start : start + limit]
        return [_message(step) for step in steps]

    async def count_messages(
        self, key: str, status: MessageStatus | None = MessageStatus.ACTIVE
    ) -> int:
        """How many messages of ``status`` (None: both) the key holds."""
        return len(await asyncio.to_thread(self._steps, key, status))

    async def add_message(
        self, key: str, message: ChatMessage, status: MessageStatus = MessageStatus.ACTIVE
    ) -> None:
        """Append one message to the key's conversation."""
        await self.add_messages(key, [message], status)

    async def add_messages(
        self, key: str, messages: list[ChatMessage], status: MessageStatus = MessageStatus.ACTIVE
    ) -> None:
        """Append the messages, in one commit."""
        checked = _messages(messages)
        _status(status, optional=False)
        if checked:
            await asyncio.to_thread(self._write, key, checked, status, replace=False)

    async def set_messages(
        self, key: str, messages: list[ChatMessage], status: MessageStatus = MessageStatus.ACTIVE
    ) -> None:
        """Replace every message of the key by these, in one commit (the old stay in history)."""
        checked = _messages(messages)
        _status(status, optional=False)
        await asyncio.to_thread(self._write, key, checked, status, replace=True)

    async def delete_message(self, key: str, idx: int) -> ChatMessage | None:
        """Invalidate the key's message number ``idx`` (its step) and return it; None if absent."""
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise InvalidInput("idx", idx, "must be an int (the message's number under its key)")
        return await asyncio.to_thread(self._delete_one, key, idx)

    async def delete_messages(self, key: str, status: MessageStatus | None = None) -> None:
        """Invalidate the key's messages of ``status`` (None: all), in one commit."""
        await asyncio.to_thread(self._invalidate, key, lambda steps: steps, status)

    async def delete_oldest_messages(self, key: str, n: int) -> list[ChatMessage]:
        """Invalidate the oldest ``n`` active messages and return them."""
        _count(n)
        cut = await asyncio.to_thread(self._invalidate, key, lambda s: s[:n], MessageStatus.ACTIVE)
        return [_message(step) for step in cut]

    async def archive_oldest_messages(self, key: str, n: int) -> list[ChatMessage]:
        """Move the oldest ``n`` active messages to the archive tier and return them."""
        _count(n)
        return [_message(step) for step in await asyncio.to_thread(self._archive, key, n)]

    async def get_keys(self) -> list[str]:
        """Every key holding at least one message (active or archived)."""
        return await asyncio.to_thread(self._keys)

    # -- the work ------------------------------------------------------------------

    def _now(self) -> datetime | None:
        return None if self.clock is None else self.clock()

    def _commit(self, message: str) -> Any:
        return self.view.commit(message=message, author=self.author, now=self._now())

    def _trace_id(self, key: str) -> str | None:
        if not isinstance(key, str) or not key.strip():
            raise InvalidInput("key", key, "must be non-empty text")
        found: str | None = self.view.state_get(_KEYS, key)
        return found

    def _steps(self, key: str, status: MessageStatus | None) -> list[Memory]:
        """The key's messages that hold now, in order, of ``status`` (None: both)."""
        _status(status, optional=True)
        trace_id = self._trace_id(key)
        return [] if trace_id is None else _held(self.view, trace_id, status, self._now())

    def _write(
        self, key: str, messages: list[ChatMessage], status: MessageStatus, *, replace: bool
    ) -> None:
        verb = "set" if replace else "add"
        with self._commit(f"llama-index: {verb} {len(messages)} message(s) of {key}") as tx:
            trace_id = self._trace_id(key)
            held = [] if trace_id is None or not replace else self._steps(key, None)
            if not messages and not held:
                return  # nothing to write: the block lands no commit
            if trace_id is None:
                trace_id = tx.begin_trace(
                    f"chat {key}", scope=self.scope, session=key, metadata={MARK: {"key": key}}
                )
                self.view.state_set(_KEYS, key, trace_id)
            for step in held:
                tx.invalidate(step.id)
            for message in messages:
                step = tx.step(
                    trace_id,
                    message_text(message),
                    kind=self.kind,
                    metadata={MARK: message.model_dump(mode="json")},
                )
                if status == MessageStatus.ARCHIVED:
                    tx.archive(step.id)

    # The deletes and the archive read the key's messages inside their commit, under
    # the writers' lock: what they change is what holds as the commit lands, so two
    # calls at once take the oldest n and the next n, never the same messages twice.
    # The message names the key once the read has checked it.

    def _delete_one(self, key: str, idx: int) -> ChatMessage | None:
        """Invalidate message ``idx`` of the key if it holds; it, or None."""
        with self._commit("llama-index: delete a message") as tx:
            wanted = [s for s in self._steps(key, None) if s.step == idx]
            if not wanted:
                return None  # the block changed nothing: it lands nothing
            tx.message = f"llama-index: delete message {idx} of {key}"
            tx.invalidate(wanted[0].id)
        return _message(wanted[0])

    def _invalidate(
        self,
        key: str,
        pick: Callable[[list[Memory]], list[Memory]],
        status: MessageStatus | None,
    ) -> list[Memory]:
        """Invalidate the messages ``pick`` takes of the key's (of ``status``); them."""
        with self._commit("llama-index: delete messages") as tx:
            chosen = pick(self._steps(key, status))
            tx.message = f"llama-index: delete {len(chosen)} message(s) of {key}"
            for step in chosen:
                tx.invalidate(step.id)
        return chosen

    def _archive(self, key: str, n: int) -> list[Memory]:
        """Move the key's oldest ``n`` active messages to the archive tier; them."""
        with self._commit("llama-index: archive messages") as tx:
            chosen = self._steps(key, MessageStatus.ACTIVE)[:n]
            tx.message = f"llama-index: archive {len(chosen)} message(s) of {key}"
            tx.archive_many([step.id for step in chosen])
        return chosen

    def _keys(self) -> list[str]:
        now = self._now()
        keys = []
        for trace in self.view.traces():
            mark = trace.root.metadata.get(MARK)
            if isinstance(mark, Mapping) and _held(self.view, trace.id, None, now, trace.steps):
                keys.append(mark["key"])
        return keys


def _held(
    view: memcommit.TenantView,
    trace_id: str,
    status: MessageStatus | None,
    now: datetime | None,
    steps: Iterable[Memory] | None = None,
) -> list[Memory]:
    """The trace's message steps that hold at ``now``, of ``status`` (None: both)."""
    if steps is None:
        steps = view.find(trace=trace_id, live=False)
    held = [s for s in steps if s.step and MARK in s.metadata and s.holds(now)]
    if status is None:
        return held
    archived = status == MessageStatus.ARCHIVED
    return [s for s in held if (s.tier == ARCHIVE) == archived]


def _message(step: Memory) -> ChatMessage:
    return ChatMessage.model_validate(step.metadata[MARK])


def _messages(messages: Any) -> list[ChatMessage]:
    if isinstance(messages, (str, bytes, Mapping, ChatMessage)) or not isinstance(
        messages, Iterable
    ):
        raise InvalidInput("messages", messages, "must be a list of ChatMessage")
    checked = list(messages)
    for message in checked:
        if not isinstance(message, ChatMessage):
            raise InvalidInput("messages", message, "each message must be a ChatMessage")
    return checked


def _status(status: Any, *, optional: bool) -> None:
    if status is None and optional:
        return
    if not isinstance(status, MessageStatus):
        allowed = ", ".join(s.name for s in MessageStatus) + (" or None" if optional else "")
        raise InvalidInput("status", status, f"must be a MessageStatus: {allowed}")


def _count(n: Any) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise InvalidInput("n", n, "must be an int >= 0")


class MemcommitRecallBlock(BaseMemoryBlock[str]):
    """A memory block whose content is what `memcommit.recall` packs for the latest messages.

    ``view`` is the tenant recalled from; ``k`` is ``max_records`` and
    ``recall_options`` any other recall argument (``budget``, ``pools``, ``kinds``,
    ``scopes``, ``tiers``: pass ``"tiers": None`` to recall archived chat too).
    The text is recall's render: prompt-ready, corrections first.
    """

    name: str = "memcommit"
    view: Any = Field(exclude=True, description="The memcommit tenant view recalled from.")
    k: int | None = 5
    recall_options: dict[str, Any] = Field(default_factory=dict)
    accept_short_term_memory: bool = False
    clock: Callable[[], datetime] | None = Field(default=None, exclude=True)

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        query = " ".join(m.content for m in (messages or [])[-2:] if isinstance(m.content, str))
        ctx = await asyncio.to_thread(
            self.view.recall,
            query,
            max_records=self.k,
            now=None if self.clock is None else self.clock(),
            **self.recall_options,
        )
        packed: str = ctx.render()
        return packed

    async def _aput(self, messages: list[ChatMessage]) -> None:
        """Nothing to keep: the chat store holds the messages, and recall reads the store."""


__all__ = ["MemcommitChatStore", "MemcommitRecallBlock", "message_text"]
