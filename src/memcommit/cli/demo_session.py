"""``memcommit demo``, second half: one agent session on a real SQLite store.

The agent learns facts in commits, works a task as a trace, has a fact
superseded, reads the store as of an earlier commit, uses its working memory
(hits, misses, evictions), compacts the finished task and recalls a bounded
context in which a behavioural correction always loads. A scripted clock makes
every run print the same story.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

from rich.console import Console
from rich.table import Column

import memcommit
from memcommit.cli.ids import short_ids
from memcommit.cli.tables import count, table
from memcommit.compaction import Compactor
from memcommit.recall import Words
from memcommit.tiers import LRU, TieredMemory
from poolsplit import Pool

START = datetime(2026, 6, 1, 9, 0, tzinfo=timezone.utc)
TENANT = "acme"

FACTS = [
    ("deploy.window", "Deploys to production happen on Tuesdays and Thursdays after 10:00."),
    ("db.engine", "The orders database is PostgreSQL 16 with one read replica."),
    ("ci.runner", "CI runs the checkout test suite on two cores in about six minutes."),
]
CORRECTION = "Never rerun a flaky checkout test blindly: read its logs first."
TASK = "Fix the flaky checkout test"
STEPS = [
    ("event", "Ran the checkout test suite: test_refund_timeout failed once in five runs."),
    ("event", "Read the logs: the refund mock answered after the 2 s client timeout."),
    ("procedure", "Raised the refund mock latency budget and pinned the test clock."),
    ("event", "Ran the checkout test suite twenty times: all green."),
]
KNOWLEDGE = ("summary", "fact", "event", "procedure")
BUDGET = 120
QUERY = "why did the checkout test fail and how was it fixed"


def scripted_clock() -> Iterator[datetime]:
    """Commit times one minute apart, from START on: every run tells the same story."""
    t = START
    while True:
        yield t
        t += timedelta(minutes=1)


def session_story(out: Console, target: str) -> dict:
    """Chapter: commits, a trace, a superseded fact, as-of reads, tiers, compaction, recall.

    Prints to ``out`` and returns what happened (for ``--json``).
    """
    ticks = scripted_clock()
    with memcommit.open(target, clock=lambda: next(ticks)) as store:
        out.rule("[bold]An agent session: every change is a commit[/bold]")
        out.print(f"Store: SQLite file [cyan]{target}[/cyan], tenant [cyan]{TENANT}[/cyan].")
        agent = store.tenant(TENANT)
        tiers = TieredMemory(agent, capacity=6, eviction=LRU())

        with agent.commit(message="learn the project", author="agent") as tx:
            facts = {key: tx.add(text, kind="fact", key=key) for key, text in FACTS}
            tx.add(CORRECTION, kind="correction", always=True, importance=1.0)
        learned = tx.result

        with agent.commit(message=f"task: {TASK}", author="agent") as tx:
            trace_id = tx.begin_trace(TASK)
            steps = [tx.step(trace_id, text, kind=kind) for kind, text in STEPS]
            tx.finish(trace_id, status="finished")

        old = facts["deploy.window"]
        with agent.commit(message="deploy window changed", author="agent") as tx:
            new = tx.add("Deploys to production happen on weekdays after 10:00.", key=old.key)
            tx.supersede(old.id, new.id)

        log = table("seq", "author", "message", "changes", expand=False)
        log.title = "Commit log (newest first)"
        for commit in agent.log():
            ops = sorted({change.op for change in commit.changes})
            log.add_row(str(commit.seq), commit.author, commit.message, ", ".join(ops))
        out.print(log)

        then = agent.get(old.id, as_of=learned)
        out.print(
            f"As of commit {learned.seq}, {old.id} {'held' if then.holds() else 'no longer held'}:"
            f" {then.content!r}\nNow it is replaced by {new.id}: {new.content!r}"
        )

        out.rule("[bold]Working memory: a cache over the store[/bold]")
        out.print(
            f"Short-term memory holds {tiers.capacity} memories per partition (LRU); "
            "each commit that overfills it is followed by a tier commit that says why."
        )
        used = [facts["db.engine"].id, steps[1].id, old.id]
        result = tiers.touch(used)
        out.print(
            f"The agent used 3 memories: {count(len(result.hits), 'hit')} in short-term, "
            f"{count(len(result.warm_hits), 'warm hit')}, "
            f"{count(len(result.misses), 'miss', 'misses')} "
            f"({len(result.paged_in)} paged back in from the archive; the superseded "
            "fact no longer holds and stays out)."
        )
        for commit in reversed(agent.log(limit=10)):
            if commit.author == "tiers":
                out.print(f"  commit {commit.seq} by tiers: {commit.message}")

        out.rule("[bold]Compaction: a finished task becomes one summary[/bold]")
        done = Compactor(agent).compact(now=START + timedelta(hours=1))
        out.print(
            f"Compacted {len(done.traces)} trace in commit {done.commit.seq}: "
            f"{len(done.summaries)} summary in long-term, {len(done.moved)} steps archived."
        )

        out.rule("[bold]Recall: a bounded context, a reason for every memory[/bold]")
        pools = [
            Pool("corrections", max_tokens=0, max_entries=0, types=("correction",)),
            Pool("knowledge", max_tokens=BUDGET, max_entries=3, types=KNOWLEDGE),
        ]
        ctx = agent.recall(QUERY, budget=Words(BUDGET), pools=pools, now=START + timedelta(hours=2))
        out.print(f"Query: {QUERY!r}, {BUDGET} words, at most 3 memories besides corrections\n")
        out.print(ctx.render())
        # The shared style (no side borders) keeps every reason whole at 80 columns,
        # even when colliding ids need their full 32 digits.
        rows = table(Column("id", no_wrap=True), expand=False)
        rows.title = "Every memory of the tenant, and why it was or was not selected"
        for column in ("kind", "tier", "score", "outcome", "reason"):
            rows.add_column(column, no_wrap=True)
        short = short_ids(row.memory.id for row in ctx.rows)
        for row in ctx.rows:
            score = "" if row.score is None else f"{row.score:.3f}"
            rows.add_row(
                short[row.memory.id],
                row.memory.kind,
                row.memory.tier,
                score,
                row.outcome,
                row.reason or "",
            )
        out.print(rows)
        tiers.close()
        check = store.check()
        out.print(f"store.check(): {'ok' if check.ok else check.problems}")
        return {
            "store": target,
            "tenant": TENANT,
            "commits": [
                {"seq": c.seq, "author": c.author, "message": c.message}
                for c in reversed(agent.log())
            ],
            "superseded": {"old": old.id, "new": new.id, "held_as_of": learned.seq},
            "touch": {
                "hits": result.hits,
                "warm_hits": result.warm_hits,
                "misses": result.misses,
                "paged_in": result.paged_in,
            },
            "compacted": {"traces": list(done.traces), "summaries": len(done.summaries)},
            "recall": ctx.to_dict(),
            "check_ok": check.ok,
        }
