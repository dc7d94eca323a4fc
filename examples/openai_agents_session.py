"""An OpenAI Agents SDK agent whose session and long-term memory are memcommit, over two runs.

Runs offline: the SDK's ScriptedModel stands in for the LLM, so every run prints
the same story. Each run reopens the store, as a new process would:

    python examples/openai_agents_session.py                 # a throwaway store
    python examples/openai_agents_session.py --store run.db  # keep it, then: memcommit log

Run 1: the conversation is a session (a memcommit trace, one step per item); the
agent learns a fact and commits it; the finished session is compacted into a
summary. Run 2: a new session; the agent's instructions come from
`recall_instructions`, so what run 1 learned reaches the model, and the script
prints recall's explanation of every memory it weighed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from agents import Agent, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message

import memcommit
from memcommit.integrations.openai_agents import MemcommitSession, recall_instructions

TENANT = "acme"
START_TIME = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)


class Clock:
    """The time of this story: one minute per reading, so commits are in a known order."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


async def first_run(memory: memcommit.Store, clock: Clock) -> None:
    session = MemcommitSession("chat-1", memory, tenant=TENANT, clock=clock)
    model = ScriptedModel([[assistant_message("Noted: your deploys go out on Tuesdays.")]])
    agent = Agent(name="helper", instructions="You are a helpful assistant.", model=model)
    message = "Remember: our deploys go out on Tuesdays after the standup."
    result = await Runner.run(agent, message, session=session)
    print(f"  user: {message}\n  agent: {result.final_output}")
    with memory.tenant(TENANT).commit(message="learned", author="helper", now=clock()) as tx:
        tx.add("Deploys go out on Tuesdays after the standup.", kind="fact", key="deploy.day")
    session.finish()
    (summary,) = session.compact().summaries
    print(f"  the finished session compacted into a summary: {summary.content.splitlines()[1]!r}")


async def second_run(memory: memcommit.Store, clock: Clock) -> None:
    view = memory.tenant(TENANT)
    question = "When do our deploys go out?"
    instructions = recall_instructions(
        view, "You are a helpful assistant.", query=question, kinds=["fact"], now=clock.now
    )
    model = ScriptedModel([[assistant_message("On Tuesdays, after the standup.")]])
    agent = Agent(name="helper", instructions=instructions, model=model)
    session = MemcommitSession("chat-2", memory, tenant=TENANT, clock=clock)
    result = await Runner.run(agent, question, session=session)
    print(f"  instructions the model saw: {model.last_call.system_instructions!r}")
    print(f"  user: {question}\n  agent: {result.final_output}")
    print("recall's explanation:")
    ctx = view.recall(question, kinds=["fact"], now=clock.now)
    for row in ctx.rows:
        score = "-" if row.score is None else f"{row.score:.3f}"
        print(f"  {row.reason or 'selected':17} score={score} {row.memory.content!r}")
    print(f"the first session is still in history: {len(view.traces())} traces")


async def main_async(path: Path) -> None:
    clock = Clock(START_TIME)
    print("run 1")
    with memcommit.open(path, clock=clock) as memory:
        await first_run(memory, clock)
    print("run 2 (the store reopened)")
    with memcommit.open(path, clock=clock) as memory:
        await second_run(memory, clock)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="SQLite file to keep (default: a temp file)")
    args = parser.parse_args(argv)
    set_tracing_disabled(True)  # offline: nothing is sent anywhere
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(main_async(args.store or Path(tmp) / "memory.db"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
