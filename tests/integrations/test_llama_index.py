"""MemcommitChatStore judged against LlamaIndex's own chat store, and its memory block.

llama-index-core's published packages carry no tests (its sdist holds only the
library), so the judge is LlamaIndex's own implementation of the same contract,
``SQLAlchemyChatStore`` on an in-memory SQLite: one scenario of every
``AsyncDBChatStore`` call, and one conversation through LlamaIndex's ``Memory``
(which flushes the oldest messages to ARCHIVED past its token limit), run
against both stores; every answer must be equal. Both memcommit backends.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import uuid

import pytest
from upstream import require

from memcommit.errors import InvalidInput

li = require("memcommit.integrations.llama_index")
require("aiosqlite")  # what LlamaIndex's reference store runs on
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402
from llama_index.core.storage.chat_store.base_db import MessageStatus  # noqa: E402
from llama_index.core.storage.chat_store.sql import SQLAlchemyChatStore  # noqa: E402

ACTIVE, ARCHIVED = MessageStatus.ACTIVE, MessageStatus.ARCHIVED


def user(text):
    return ChatMessage(role="user", content=text)


def assistant(text):
    return ChatMessage(role="assistant", content=text)


def dumped(messages):
    if messages is None:
        return None
    if isinstance(messages, ChatMessage):
        return messages.model_dump(mode="json")
    return [m.model_dump(mode="json") for m in messages]


def reference():
    """LlamaIndex's own chat store, on an in-memory SQLite of its own."""
    return SQLAlchemyChatStore(table_name=f"chat_{uuid.uuid4().hex[:8]}")


@pytest.fixture
def memory(make_store):
    return make_store()


@pytest.fixture
def chat(memory):
    return li.MemcommitChatStore(store=memory, tenant="acme")


async def chat_scenario(store) -> list:
    """Every answer of one chat store through a run of every call of the contract."""
    seen: list = []

    async def look(key):
        for status in (ACTIVE, ARCHIVED, None):
            seen.append(dumped(await store.get_messages(key, status=status)))
            seen.append(await store.count_messages(key, status=status))
        seen.append(dumped(await store.get_messages(key, status=None, limit=2, offset=1)))
        seen.append(dumped(await store.get_messages(key, offset=3)))
        seen.append(sorted(await store.get_keys()))

    await look("a")
    await store.add_message("a", user("hello"))
    await store.add_messages("a", [assistant("hi"), user("when is the deploy?")])
    await store.add_messages("a", [assistant("Tuesdays"), user("thanks")])
    await store.add_message("a", user("an old note"), status=ARCHIVED)
    await store.add_messages("b", [user("another conversation")])
    await look("a")
    await look("b")
    seen.append(dumped(await store.delete_message("a", 4)))  # the 4th message under "a"
    seen.append(dumped(await store.delete_message("a", 4)))  # gone now
    await look("a")
    seen.append(dumped(await store.archive_oldest_messages("a", 2)))
    await look("a")
    seen.append(dumped(await store.delete_oldest_messages("a", 1)))
    seen.append(dumped(await store.archive_oldest_messages("a", 0)))
    await look("a")
    await store.delete_messages("a", status=ARCHIVED)
    await look("a")
    await store.set_messages("a", [user("a fresh start"), assistant("ok")])
    await look("a")
    await store.set_messages("b", [user("archived at once")], status=ARCHIVED)
    await look("b")
    await store.delete_messages("b")
    await store.set_messages("c", [])
    await look("b")
    await look("c")
    return seen


async def test_every_call_answers_as_llama_index_own_store(chat):
    assert await chat_scenario(chat) == await chat_scenario(reference())


async def memory_scenario(chat_store) -> list:
    """LlamaIndex's Memory over a chat store: what it holds and returns as a conversation runs."""
    memory = Memory.from_defaults(
        session_id="chat-42",
        chat_store=chat_store,
        token_limit=40,
        token_flush_size=10,
        chat_history_token_ratio=0.5,
        tokenizer_fn=str.split,  # no tokenizer download: words are tokens
    )
    seen = []
    for n in range(8):
        await memory.aput(user(f"question {n} about the deploy schedule"))
        await memory.aput(assistant(f"answer {n}: deploys run on Tuesdays"))
        seen.append(dumped(await memory.aget()))
        seen.append(dumped(await memory.aget_all(status=ARCHIVED)))
    await memory.areset(status=ARCHIVED)
    seen.append(dumped(await memory.aget_all(status=None)))
    await memory.aset([user("start over")])
    seen.append(dumped(await memory.aget()))
    return seen


async def test_llama_index_memory_runs_the_same_over_both_stores(chat):
    mine = await memory_scenario(chat)
    assert any(archived for archived in mine[1:16:2])  # the token limit did flush some
    assert mine == await memory_scenario(reference())


async def test_status_is_the_tier_and_deletes_keep_history(chat):
    await chat.add_messages("k", [user("one"), user("two"), user("three")])
    await chat.archive_oldest_messages("k", 1)
    await chat.delete_oldest_messages("k", 1)
    trace_id = chat.view.state_get("llama-index-chat-keys", "k")
    steps = [m for m in chat.view.find(trace=trace_id, live=False) if m.step]
    assert [(m.content, m.tier, m.status) for m in steps] == [
        ("user: one", "archive", "active"),
        ("user: two", "short", "invalidated"),
        ("user: three", "short", "active"),
    ]


@pytest.mark.parametrize("move", ["archive_oldest_messages", "delete_oldest_messages"])
async def test_two_calls_at_once_take_the_oldest_then_the_next(make_store, before_commit, move):
    """Another process's call lands between this call's start and its commit: this one takes
    the next messages, never the same ones again."""
    ours, theirs = (li.MemcommitChatStore(make_store()) for _ in range(2))
    await ours.add_messages("k", [user(f"message {n}") for n in range(1, 5)])
    taken = []
    before_commit(ours, lambda: taken.append(asyncio.run(getattr(theirs, move)("k", 2))))
    mine = await getattr(ours, move)("k", 2)
    assert [m.content for m in taken[0]] == ["message 1", "message 2"]
    assert [m.content for m in mine] == ["message 3", "message 4"]
    assert await ours.get_messages("k") == []
    archived = 4 if move == "archive_oldest_messages" else 0
    assert await ours.count_messages("k", ARCHIVED) == archived


async def test_a_message_deleted_meanwhile_is_not_deleted_again(make_store, before_commit):
    ours, theirs = (li.MemcommitChatStore(make_store()) for _ in range(2))
    await ours.add_messages("k", [user("one"), user("two")])
    before_commit(ours, lambda: asyncio.run(theirs.delete_message("k", 1)))
    assert await ours.delete_message("k", 1) is None
    trace_id = ours.view.state_get("llama-index-chat-keys", "k")
    steps = [m for m in ours.view.find(trace=trace_id, live=False) if m.step]
    assert [v.status for v in ours.view.history(steps[0].id)] == ["active", "invalidated"]


async def test_tenants_never_see_each_other(memory, chat):
    await chat.add_messages("shared-key", [user("acme's secret")])
    other = li.MemcommitChatStore(store=memory, tenant="globex")
    assert await other.get_keys() == []
    assert await other.get_messages("shared-key", status=None) == []
    assert await other.delete_message("shared-key", 1) is None
    assert await other.archive_oldest_messages("shared-key", 5) == []
    await other.delete_messages("shared-key")
    await other.add_messages("shared-key", [user("globex's own")])
    assert dumped(await chat.get_messages("shared-key")) == dumped([user("acme's secret")])


async def test_bad_input_is_a_typed_error_and_lands_nothing(memory, chat):
    head = memory.head_seq
    for call, field in (
        (chat.add_messages("k", "not a list"), "messages"),
        (chat.add_messages("k", [user("fine"), "not a message"]), "messages"),
        (chat.add_message("k", user("x"), status="archived"), "status"),
        (chat.get_messages("k", limit=-1), "limit"),
        (chat.delete_oldest_messages("k", -2), "n"),
        (chat.delete_message("k", "1"), "idx"),
        (chat.add_message("", user("x")), "key"),
    ):
        with pytest.raises(InvalidInput) as raised:
            await call
        assert raised.value.field == field
    assert memory.head_seq == head
    with pytest.raises(InvalidInput):
        li.MemcommitChatStore(store="memory.db")


async def test_the_recall_block_serves_what_recall_packs(memory, now):
    view = memory.tenant("acme")
    with view.commit(message="facts", now=now) as tx:
        tx.add("Deploys run on Tuesdays after the standup.")
        tx.add("Never deploy on a Friday.", kind="correction", always=True)
        tx.add("The office plant needs water on Mondays.")
    block = li.MemcommitRecallBlock(view=view, k=3, clock=lambda: now)
    text = await block.aget([user("when do deploys run?")])
    assert text == view.recall("when do deploys run?", max_records=3, now=now).render()
    assert text.index("Never deploy on a Friday.") < text.index("Deploys run on Tuesdays")
    assert "plant" not in text
    memory_ = Memory.from_defaults(
        session_id="s",
        chat_store=li.MemcommitChatStore(store=memory, tenant="acme"),
        memory_blocks=[block],
        tokenizer_fn=str.split,
    )
    await memory_.aput(user("when do deploys run?"))
    messages = await memory_.aget()
    assert "Deploys run on Tuesdays" in str(messages[0].content)


def test_a_missing_llama_index_is_a_typed_error_naming_the_extra():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["llama_index"] = None  # as if llama-index-core were not installed
        from memcommit.errors import MissingExtra
        try:
            import memcommit.integrations.llama_index
        except MissingExtra as exc:
            print(exc.field, exc.value, isinstance(exc, ImportError), exc)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.startswith("extra llama-index True ")
    assert "pip install 'memcommit[llama-index]'" in done.stdout
