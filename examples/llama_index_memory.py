"""A LlamaIndex ``Memory`` whose chat history and long-term memory are memcommit, over two runs.

Runs offline (no model is called: the script prints what LlamaIndex's Memory
would hand one). Each run reopens the store, as a new process would:

    python examples/llama_index_memory.py                 # a throwaway store
    python examples/llama_index_memory.py --store run.db  # keep it, then: memcommit log

Run 1: a conversation goes into a Memory over `MemcommitChatStore`; past its
token limit LlamaIndex flushes the oldest messages, which memcommit moves to its
archive tier; the agent commits a fact it learned. Run 2: the same session goes
on after a restart, and a `MemcommitRecallBlock` puts what recall packs for the
new question (the fact, and the correction that always loads) into the memory;
the script prints recall's explanation of every memory it weighed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import Memory
from llama_index.core.storage.chat_store.base_db import MessageStatus

import memcommit
from memcommit.integrations.llama_index import MemcommitChatStore, MemcommitRecallBlock

TENANT = "acme"
SESSION = "chat-42"
START_TIME = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)


class Clock:
    """The time of this story: one minute per reading, so commits are in a known order."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def memory_over(store: memcommit.Store, clock: Clock, blocks: list | None = None) -> Memory:
    return Memory.from_defaults(
        session_id=SESSION,
        chat_store=MemcommitChatStore(store=store, tenant=TENANT, clock=clock),
        memory_blocks=blocks or [],
        token_limit=60,
        token_flush_size=12,
        chat_history_token_ratio=0.5,
        tokenizer_fn=str.split,  # offline: words stand in for tokens
    )


async def first_run(store: memcommit.Store, clock: Clock) -> None:
    memory = memory_over(store, clock)
    turns = [
        ("Hi! I look after the release train for the payments team.", "Nice to meet you."),
        ("Our deploys go out on Tuesdays after the standup.", "Noted: Tuesdays after standup."),
        ("And we never deploy on a Friday, whatever happens.", "Understood, never on Fridays."),
        ("Last week the deploy failed on a missing migration.", "Sorry to hear that."),
    ]
    for question, answer in turns:
        await memory.aput(ChatMessage(role="user", content=question))
        await memory.aput(ChatMessage(role="assistant", content=answer))
    archived = await memory.aget_all(status=MessageStatus.ARCHIVED)
    active = await memory.aget_all(status=MessageStatus.ACTIVE)
    print(f"  {len(active)} messages active, {len(archived)} flushed to the archive tier")
    with store.tenant(TENANT).commit(message="learned", author="helper", now=clock()) as tx:
        tx.add("Deploys go out on Tuesdays after the standup.", kind="fact", key="deploy.day")
        tx.add("Never deploy on a Friday.", kind="correction", always=True)


async def second_run(store: memcommit.Store, clock: Clock) -> None:
    view = store.tenant(TENANT)
    block = MemcommitRecallBlock(view=view, k=3, recall_options={"kinds": ["fact", "correction"]})
    memory = memory_over(store, clock, [block])
    question = "Can we deploy the hotfix this Friday?"
    await memory.aput(ChatMessage(role="user", content=question))
    history = await memory.aget_all(status=None)
    print(f"  the session continues: {len(history)} messages in its history")
    first, *_ = await memory.aget()
    print(f"  what the model would see first: {first.content!r}")
    print("recall's explanation:")
    ctx = view.recall(question, max_records=3, kinds=["fact", "correction"], now=clock.now)
    for row in ctx.rows:
        score = "-" if row.score is None else f"{row.score:.3f}"
        print(f"  {row.reason or 'selected':17} score={score} {row.memory.content!r}")


async def main_async(path: Path) -> None:
    clock = Clock(START_TIME)
    print("run 1")
    with memcommit.open(path, clock=clock) as store:
        await first_run(store, clock)
    print("run 2 (the store reopened)")
    with memcommit.open(path, clock=clock) as store:
        await second_run(store, clock)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="SQLite file to keep (default: a temp file)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(main_async(args.store or Path(tmp) / "memory.db"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
