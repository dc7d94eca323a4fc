"""A LangGraph agent whose long-term memory is memcommit, remembering across two runs.

Runs offline: a scripted chat model stands in for the LLM, so every run prints
the same story. Each run builds the graph afresh and reopens the store, as a new
process would:

    python examples/langgraph_agent.py                  # a throwaway store
    python examples/langgraph_agent.py --store run.db   # keep it; `memcommit log --store run.db`

Run 1: the user says what they like; the graph's "remember" node puts it in the
store (a commit). Run 2: the user asks; the "recall" node searches the store with
the question (memcommit's recall, scored), the model answers from what came
back, and the script prints recall's explanation of every memory it weighed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TypedDict

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

import memcommit
from memcommit.integrations.langgraph import MemcommitStore

USER = ("user_ada", "memories")  # the namespace: scope "user_ada.memories" of the tenant
START_TIME = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)


class State(TypedDict):
    message: str
    remember: dict[str, str]
    recalled: list[str]
    reply: str


class Clock:
    """The time of this story: one minute per reading, so commits are in a known order."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def build(model: GenericFakeChatModel, store: BaseStore):
    """recall -> answer -> remember: the agent's graph, with memcommit as its store."""

    def recall(state: State, *, store: BaseStore) -> dict:
        hits = store.search(USER, query=state["message"], limit=3)
        return {"recalled": [h.value["text"] for h in hits if h.score]}

    def answer(state: State) -> dict:
        known = "\n".join(f"- {text}" for text in state["recalled"]) or "- (nothing yet)"
        prompt = [
            SystemMessage(f"You are a helpful assistant. What you remember:\n{known}"),
            HumanMessage(state["message"]),
        ]
        print("  prompt the model saw:", prompt[0].content.replace("\n", " | "))
        return {"reply": model.invoke(prompt).content}

    def remember(state: State, *, store: BaseStore) -> dict:
        for key, text in state["remember"].items():
            store.put(USER, key, {"text": text})
        return {}

    graph = StateGraph(State)
    graph.add_node("recall", recall)
    graph.add_node("answer", answer)
    graph.add_node("remember", remember)
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "answer")
    graph.add_edge("answer", "remember")
    graph.add_edge("remember", END)
    return graph.compile(store=store)


def run(memory: memcommit.Store, clock: Clock, message: str, remember: dict, reply: str):
    """One run of the agent: a fresh graph over the reopened store."""
    store = MemcommitStore(memory, tenant="acme", clock=clock)
    model = GenericFakeChatModel(messages=iter([AIMessage(reply)]))
    out = build(model, store).invoke(
        {"message": message, "remember": remember, "recalled": [], "reply": ""}
    )
    print(f"  user: {message}\n  agent: {out['reply']}")
    return store


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="SQLite file to keep (default: a temp file)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.store or Path(tmp) / "memory.db"
        clock = Clock(START_TIME)

        print("run 1")
        learned = {"food": "Ada loves spicy ramen.", "pet": "Ada's cat is called Miso."}
        with memcommit.open(path, clock=clock) as memory:
            run(memory, clock, "I love spicy ramen; my cat is Miso.", learned, "Noted!")

        print("run 2 (a new graph over the reopened store)")
        question = "Which food do I love?"
        with memcommit.open(path, clock=clock) as memory:
            store = run(memory, clock, question, {}, "You love spicy ramen, Ada.")
            print("recall's explanation of the search:")
            ctx = store.memcommit.recall(
                question, scopes=["user_ada.memories"], tiers=None, now=clock.now
            )
            for row in ctx.rows:
                score = "-" if row.score is None else f"{row.score:.3f}"
                why = row.reason or "selected"
                print(f"  {why:17} score={score} {row.memory.content!r}")
            print("commits of the namespace:")
            for commit in store.log(USER):
                print(f"  #{commit.seq} {commit.message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
