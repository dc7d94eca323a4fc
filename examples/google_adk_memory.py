"""A Google ADK app whose long-term memory is memcommit, over two runs.

Runs offline (no model is called: the script plays the conversation ADK's
session service would record). Each run reopens the store, as a new process
would:

    python examples/google_adk_memory.py                 # a throwaway store
    python examples/google_adk_memory.py --store run.db  # keep it, then: memcommit log

Run 1: a session goes through ADK's own InMemorySessionService, and at its end
`add_session_to_memory` turns it into a memcommit trace; the agent also writes
one memory directly (`add_memory`). Run 2: a new session asks a question, and
`search_memory` answers from what run 1 kept (the entries ADK's
``load_memory``/``preload_memory`` tools would hand the model); the script
prints recall's explanation of every memory it weighed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from google.adk.events.event import Event
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions import InMemorySessionService
from google.genai import types

import memcommit
from memcommit.integrations.google_adk import MemcommitMemoryService

APP, USER = "release-helper", "ada"
START_TIME = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)


class Clock:
    """The time of this story: one minute per reading, so commits are in a known order."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def said(author: str, text: str, clock: Clock) -> Event:
    role = "user" if author == "user" else "model"
    content = types.Content(role=role, parts=[types.Part(text=text)])
    return Event(author=author, content=content, timestamp=clock().timestamp())


async def first_run(memory: MemcommitMemoryService, clock: Clock) -> None:
    sessions = InMemorySessionService()
    session = await sessions.create_session(app_name=APP, user_id=USER, session_id="monday")
    for author, text in [
        ("user", "I look after the release train for the payments team."),
        ("helper", "Nice to meet you. How often do you ship?"),
        ("user", "Our deploys go out on Tuesdays after the standup."),
        ("helper", "Noted: Tuesdays after the standup."),
        ("user", "Last week the deploy failed on a missing migration."),
    ]:
        await sessions.append_event(session, said(author, text, clock))
    await memory.add_session_to_memory(session)
    rule = types.Content(role="user", parts=[types.Part(text="Never deploy on a Friday.")])
    entry = MemoryEntry(id="rule.friday", content=rule, author="helper")
    await memory.add_memory(app_name=APP, user_id=USER, memories=[entry])
    (trace,) = memory.view(APP).traces()
    print(f"  session 'monday' is trace {trace.id[:8]} with {len(trace.steps)} steps")


async def second_run(memory: MemcommitMemoryService, clock: Clock) -> None:
    question = "Can we deploy the hotfix on Friday or wait for Tuesday?"
    found = await memory.search_memory(app_name=APP, user_id=USER, query=question)
    print(f"  search_memory found {len(found.memories)} memories for {question!r}:")
    for entry in found.memories:
        text = entry.content.parts[0].text
        score = entry.custom_metadata["memcommit"]["score"]
        print(f"    {entry.author:7} {score:.3f} {text!r}")
    print("recall's explanation:")
    ctx = memory.recall(app_name=APP, user_id=USER, query=question)
    for row in ctx.rows:
        score = "-" if row.score is None else f"{row.score:.3f}"
        print(f"  {row.reason or 'selected':17} score={score} {row.memory.content!r}")


async def main_async(path: Path) -> None:
    clock = Clock(START_TIME)
    print("run 1")
    with memcommit.open(path, clock=clock) as store:
        await first_run(MemcommitMemoryService(store, k=4, clock=clock), clock)
    print("run 2 (the store reopened)")
    with memcommit.open(path, clock=clock) as store:
        await second_run(MemcommitMemoryService(store, k=4, clock=clock), clock)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="SQLite file to keep (default: a temp file)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(main_async(args.store or Path(tmp) / "memory.db"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
