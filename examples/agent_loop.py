"""An agent loop on memcommit: recall, act, commit what was learned, touch what was used.

Runs offline with a scripted model in place of an LLM, so every run prints the
same story. Copy the loop, swap ``ScriptedModel`` for your model call:

    python examples/agent_loop.py                 # a throwaway store
    python examples/agent_loop.py --store run.db  # keep it; then `memcommit log --store run.db`

Each turn the agent:
1. recalls a bounded context with reserved pools per kind of memory; corrections
   (``always=True``) load first, whatever else competes for the budget;
2. asks the model, which answers from that context only;
3. records the task as a trace (root + steps) and commits what it learned;
4. touches the memories it actually used, so working memory keeps them close.
At the end, finished tasks are compacted into long-term summaries.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import memcommit
from memcommit.compaction import Compactor, FinishedTraces
from memcommit.recall import recall
from memcommit.tiers import AccessCount, AnyOf, ImportanceAtLeast, Scored
from memcommit.tiers.memory import TieredMemory
from poolsplit import Pool

TENANT = "acme-devops"

#: Reserved budgets: procedures and facts cannot crowd each other (or events) out.
#: Corrections are always-scope: they bypass the caps, so their pool needs no budget.
POOLS = [
    Pool("corrections", max_tokens=0, max_entries=0, types=("correction",)),
    Pool("procedures", max_tokens=80, max_entries=2, types=("procedure",)),
    Pool("facts", max_tokens=120, max_entries=4, types=("fact", "decision", "summary")),
    Pool("events", max_tokens=60, max_entries=2, types=("event",)),
]


class Clock:
    """Injected time: the store and the agent read it; the loop moves it on."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, hours: float) -> None:
        self.now += timedelta(hours=hours)


@dataclass(frozen=True)
class Turn:
    """One scripted exchange: the user's task and what the model does with it."""

    task: str
    question: str
    steps: tuple[str, ...]
    learned: tuple[dict[str, Any], ...] = ()
    correction: str | None = None
    status: str = "finished"


@dataclass
class Reply:
    """What the model did: its steps, and the memories it relied on."""

    steps: list[str]
    used: list[str] = field(default_factory=list)


SCRIPT = (
    Turn(
        task="Deploy the billing service",
        question="how do I deploy the billing service",
        steps=("ran the billing tests: 212 passed", "git push --force to main", "deployed"),
        learned=(
            {
                "content": "The billing service deploys with make deploy-billing "
                "from the release branch.",
                "kind": "procedure",
                "key": "deploy.billing",
                "importance": 0.8,
            },
            {"content": "Billing listens on port 8080.", "key": "billing.port"},
        ),
        correction="Never force-push to main: open a pull request instead.",
    ),
    Turn(
        task="Fix the flaky timeout in the billing tests",
        question="billing tests time out",
        steps=("reproduced the timeout on a cold sandbox database", "retried: still flaky"),
        learned=(
            {
                "content": "Billing tests time out when the sandbox database is cold; "
                "warm it first with make db-warm.",
                "kind": "procedure",
                "key": "billing.tests.timeout",
            },
        ),
        status="failed",
    ),
    Turn(
        task="Move billing to the new load balancer",
        question="which port does billing listen on",
        steps=("pointed the load balancer at billing", "billing now listens on port 9090"),
        learned=({"content": "Billing listens on port 9090.", "key": "billing.port"},),
    ),
    Turn(
        task="Deploy the billing service again",
        question="deploy the billing service: steps, tests and port",
        steps=("make db-warm", "ran the billing tests: 214 passed", "git push --force to main"),
    ),
)


class ScriptedModel:
    """Stands in for an LLM: follows the script, but obeys the corrections it is shown.

    It "uses" a memory when the memory shares a word with the task, which is
    enough to show the loop; a real model would say which memories it cited.
    """

    def respond(self, turn: Turn, context: list[memcommit.Memory]) -> Reply:
        rules = [m for m in context if m.always]
        steps = []
        for step in turn.steps:
            if "--force" in step and any("force-push" in r.content for r in rules):
                step = "opened a pull request to main (a correction forbids force-push)"
            steps.append(step)
        words = {w.strip(".,:;").lower() for w in turn.task.split()} - {"the", "a"}
        used = [
            m.id
            for m in context
            if m.always or words & {w.strip(".,:;").lower() for w in m.content.split()}
        ]
        return Reply(steps, used)


def first_line(memory: memcommit.Memory) -> str:
    """A memory's first line (a summary's is its task), to keep the story short."""
    return memory.content.splitlines()[0]


def run(store_path: str | Path, *, say: Callable[[str], None] = print) -> dict[str, Any]:
    """Play the script against the store at ``store_path``; returns what happened."""
    clock = Clock(datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc))
    store = memcommit.open(str(store_path), clock=clock)
    compactor = Compactor(store, policy=FinishedTraces())
    tiers = TieredMemory(
        store,
        capacity=6,
        eviction=Scored(recency=1.0, importance=1.0, frequency=0.5),
        promotion=AnyOf(AccessCount(3), ImportanceAtLeast(0.8)),
        compactor=compactor,
    )
    model = ScriptedModel()
    report: dict[str, Any] = {"turns": []}
    try:
        for turn in SCRIPT:
            clock.advance(hours=20)
            context = recall(
                store, turn.question, tenant=TENANT, pools=POOLS, budget=None, latest_per_key=True
            )
            reply = model.respond(turn, context.selected)
            say(f"\n## {turn.task}  ({clock.now:%a %H:%M})")
            say(f"recalled {len(context.selected)} memories for {turn.question!r}:")
            for memory in context.selected:
                say(f"  [{memory.kind}] {first_line(memory)}")
            with store.commit(message=f"task: {turn.task}", author="agent") as tx:
                trace = tx.begin_trace(turn.task, tenant=TENANT)
                for step in reply.steps:
                    tx.step(trace, step)
                    say(f"  step: {step}")
                for fact in turn.learned:
                    tx.add(tenant=TENANT, **fact)
                if turn.correction:
                    tx.add(
                        turn.correction,
                        kind="correction",
                        tenant=TENANT,
                        always=True,
                        importance=1.0,
                    )
                    say(f"  user corrected: {turn.correction}")
                tx.finish(trace, status=turn.status)
            if reply.used:
                touched = tiers.touch(reply.used)
                say(
                    f"  used {len(reply.used)}: {len(touched.hits)} hits,"
                    f" {len(touched.warm_hits)} warm hits, {len(touched.misses)} misses"
                )
            report["turns"].append(
                {
                    "task": turn.task,
                    "recalled": [m.id for m in context.selected],
                    "steps": reply.steps,
                    "used": reply.used,
                    "commit": tx.result.seq,
                }
            )

        clock.advance(hours=1)
        along = len(store.find(tenant=TENANT, kinds=["summary"]))
        result = compactor.compact(now=clock())
        say(
            f"\nmaintenance compacted {along} finished tasks along the way;"
            f" compacted the other {len(result.traces)} now"
        )
        final = recall(
            store, "deploy billing", tenant=TENANT, pools=POOLS, budget=None, latest_per_key=True
        )
        say("recall 'deploy billing' now loads:")
        for memory in final.selected:
            say(f"  [{memory.kind}] {first_line(memory)}")
        report["compacted"] = list(result.traces)
        report["final"] = [m.id for m in final.selected]
        report["commits"] = store.head.seq if store.head else 0
    finally:
        store.close()
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", help="SQLite file to keep (default: a temporary one)")
    args = parser.parse_args(argv)
    if args.store:
        run(args.store)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        run(Path(tmp) / "agent.db")
    return 0


if __name__ == "__main__":
    sys.exit(main())
