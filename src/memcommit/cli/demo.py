"""``memcommit demo``: what memcommit fixes, shown on an agent's memory.

Each chapter is a function of the console, so later chapters (store, tiers,
recall) can be added to the same command. Everything runs at a fixed ``now``,
so the demo prints the same tables on every machine.
"""

from __future__ import annotations

import io
import shlex
import tempfile
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from memcommit.cli.app import console, json_option, main, print_json
from memcommit.cli.demo_session import TENANT, session_story
from poolsplit import Pool, retrieve, retrieve_pools

DEMO_NOW = datetime(2026, 6, 1, 9, 0, tzinfo=timezone.utc)

PRIORITY = {"fact": 8, "decision": 7, "event": 5, "procedure": 4, "note": 2, "correction": 9}
TYPE_ORDER = ("fact", "decision", "procedure", "note", "correction")

# (type, days old, tags, content): one agent's memory of a checkout service.
MEMORIES = [
    ("fact", 3, ["infra"], "The checkout service is written in Go and runs on Kubernetes."),
    ("fact", 12, ["payments"], "Payments go through Stripe; webhooks land on /hooks/stripe."),
    ("fact", 20, ["database"], "The orders database is PostgreSQL 16 with one read replica."),
    ("fact", 9, ["payments", "database"], "Refunds live in the refunds table, settled nightly."),
    ("fact", 30, ["infra"], "Staging mirrors production but uses the Stripe test keys."),
    ("fact", 6, ["latency"], "The p95 latency budget for checkout is 300 ms."),
    ("fact", 40, ["infra"], "Feature flags come from the flags service with a 30 s cache."),
    ("fact", 15, ["oncall"], "Checkout on-call is team Orbit in PagerDuty."),
    ("decision", 25, ["payments"], "Every payment call carries an idempotency key."),
    ("decision", 50, ["database"], "Migrations go through the migrate tool, never raw psql."),
    (
        "decision",
        18,
        ["latency"],
        "Checkout reads prices from the catalog cache, not the database.",
    ),
    ("decision", 35, ["infra"], "Deploys use the release pipeline with a 5 percent canary first."),
    ("decision", 60, ["payments"], "Refund emails are sent by notifications, not by checkout."),
    (
        "procedure",
        22,
        ["database"],
        "Dry-run a migration: make migrate-dry ENV=staging, read the plan.",
    ),
    (
        "procedure",
        45,
        ["payments"],
        "Replay a webhook: stripe events resend <id> --webhook-endpoint local.",
    ),
    (
        "procedure",
        28,
        ["latency"],
        "Profile a slow endpoint: enable pprof with the debug flag for 30 s.",
    ),
    ("procedure", 14, ["infra"], "Roll back a deploy: release rollback checkout --to previous."),
    ("note", 8, ["process"], "I rush to a fix before reproducing the bug: reproduce first."),
    ("note", 26, ["oncall"], "I forget the runbook after incidents: update it the same day."),
    ("note", 33, ["process"], "I over-explain in pull requests: lead with the change."),
]
CORRECTION = (
    "correction",
    85,
    ["database"],
    "Never run a migration against production without a staging dry-run first: "
    "it once locked the refunds table for 40 minutes.",
)
QUERIES = [
    ("deploy the new checkout build to production", ["infra"]),
    ("add a migration for partial refunds", ["database", "payments"]),
    ("why did checkout latency spike this morning", ["latency"]),
    ("a customer was charged twice, investigate", ["payments"]),
    ("set up staging for the refunds feature", ["infra"]),
    ("write the incident report for the outage", ["oncall"]),
    ("speed up the price lookup in checkout", ["latency"]),
    ("run the refunds migration on production", ["database"]),
]
RISKY_QUERY = QUERIES[-1]
BURSTS = (0, 3, 6, 12, 24)

ONE_BUDGET = Pool("context", max_tokens=240, max_entries=6)
POOLS = [
    Pool("knowledge", max_tokens=160, max_entries=4, types=("fact", "decision", "event")),
    Pool("procedures", max_tokens=50, max_entries=1, types=("procedure",)),
    Pool("notes", max_tokens=30, max_entries=1, types=("note",)),
    Pool("corrections", max_tokens=0, max_entries=0, types=("correction",)),
]


def memory(n: int, kind: str, days: float, tags: list[str], content: str) -> dict:
    """One memory as a poolsplit entry."""
    return {
        "id": f"{kind}-{n:02d}",
        "type": kind,
        "content": content,
        "tags": tags,
        "project": None if kind in ("procedure", "note") else "checkout",
        "base_priority": PRIORITY[kind],
        "created": (DEMO_NOW - timedelta(days=days)).isoformat(),
    }


def agent_memory(*, always: bool, burst: int = 0) -> list[dict]:
    """The agent's memory; the correction always-scope or not, after ``burst`` fresh events."""
    entries = [memory(n, *fields) for n, fields in enumerate(MEMORIES)]
    correction = memory(len(entries), *CORRECTION)
    if always:
        correction["scope"] = "always"
    entries.append(correction)
    for n in range(burst):  # a debugging session logging as it goes, minutes ago
        entries.append(
            memory(
                100 + n,
                "event",
                (burst - n) / 1440,
                ["database"],
                f"Production migration log: refunds backfill batch {n + 1} applied, "
                f"{(n + 1) * 5000} rows.",
            )
        )
    return entries


def context_of(query: tuple[str, list[str]]) -> dict:
    """The retrieval context of one query: its message and tags, in the checkout project."""
    message, tags = query
    return {"message": message, "tags": tags, "project": "checkout"}


def type_loads() -> tuple[Counter, Counter]:
    """How many queries load each type: with one budget, and with pools plus always-scope."""
    single, pooled = Counter(), Counter()
    competing, fixed = agent_memory(always=False), agent_memory(always=True)
    for query in QUERIES:
        chosen = retrieve(competing, ONE_BUDGET, context_of(query), now=DEMO_NOW)
        single.update({e["type"] for e in chosen})
        result = retrieve_pools(fixed, POOLS, context_of(query), now=DEMO_NOW)
        pooled.update({e["type"] for picked in result.values() for e in picked})
    return single, pooled


def loads_correction(chosen: list[dict]) -> bool:
    """Whether the correction is among the loaded memories."""
    return any(e["type"] == "correction" for e in chosen)


def poolsplit_story(out: Console) -> dict:
    """Chapter: type starvation and a crowded-out correction, then pools and always-scope.

    Prints to ``out`` and returns the figures it printed (for ``--json``).
    """
    figures: dict = {"queries": len(QUERIES), "type_loads": {}, "correction_after_burst": {}}
    out.rule("[bold]Reserved pools and corrections that always load[/bold]")
    out.print(
        f"An agent's memory of a checkout service: {len(MEMORIES) + 1} memories. "
        "Facts and decisions score high; procedures, notes and one old correction "
        f"score lower. {len(QUERIES)} queries, each packed into the same total budget "
        f"({ONE_BUDGET.max_tokens} tokens, {ONE_BUDGET.max_entries} memories)."
    )
    layout = ", ".join(
        f"{pool.name} ({'/'.join(pool.types or ('any',))}: "
        f"{pool.max_tokens} tokens, up to {pool.max_entries})"
        for pool in POOLS
    )
    out.print(f"Pools: {layout}; always-scope memories load outside every budget.")
    single, pooled = type_loads()
    kinds = Counter(kind for kind, *_ in [*MEMORIES, CORRECTION])
    table = Table(title=f"1. How many of the {len(QUERIES)} queries load each type")
    table.add_column("type")
    table.add_column("memories", justify="right")
    table.add_column("one budget", justify="right")
    table.add_column("pools + always-scope", justify="right")
    for kind in TYPE_ORDER:
        figures["type_loads"][kind] = {"one_budget": single[kind], "pools": pooled[kind]}
        table.add_row(
            kind,
            str(kinds[kind]),
            f"{single[kind]} / {len(QUERIES)}",
            f"{pooled[kind]} / {len(QUERIES)}",
        )
    out.print(table)
    out.print(
        "One budget: the high-priority types take every slot and the rest starve. "
        "Pools reserve room per type group, so every type gets its share.\n"
    )

    table = Table(title=f'2. "{RISKY_QUERY[0]}" after a burst of fresh memories')
    table.add_column("fresh memories", justify="right")
    table.add_column("one budget: correction loaded", justify="center")
    table.add_column("pools + always-scope: correction loaded", justify="center")
    for burst in BURSTS:
        competing = agent_memory(always=False, burst=burst)
        chosen = retrieve(competing, ONE_BUDGET, context_of(RISKY_QUERY), now=DEMO_NOW)
        fixed = agent_memory(always=True, burst=burst)
        result = retrieve_pools(fixed, POOLS, context_of(RISKY_QUERY), now=DEMO_NOW)
        pooled_chosen = [e for picked in result.values() for e in picked]
        figures["correction_after_burst"][burst] = {
            "one_budget": loads_correction(chosen),
            "pools": loads_correction(pooled_chosen),
        }
        table.add_row(
            str(burst),
            "yes" if loads_correction(chosen) else "[red]no[/red]",
            "yes" if loads_correction(pooled_chosen) else "[red]no[/red]",
        )
    out.print(table)
    out.print(
        "Competing for budget, the correction loads on a quiet turn and is crowded out by "
        "fresh migration logs, exactly when the agent is about to repeat the mistake. "
        'With scope="always" it loads first, outside every budget.'
    )
    return figures


@main.command()
@click.option(
    "--store",
    "store_target",
    type=click.Path(dir_okay=False),
    default=None,
    help="SQLite file for the session (default: a new file in a temporary folder).",
)
@json_option
def demo(store_target: str | None, as_json: bool) -> None:
    """Show on an agent's memory what memcommit fixes, with fixed data and time.

    Example:

        memcommit demo
    """
    if store_target is None:
        store_target = str(Path(tempfile.mkdtemp(prefix="memcommit-demo-")) / "memcommit.db")
    elif Path(store_target).exists():
        raise click.BadParameter(
            "must not exist yet: the demo starts a new store", param_hint="--store"
        )
    out = Console(file=io.StringIO()) if as_json else console()
    figures = {"poolsplit": poolsplit_story(out)}
    figures["session"] = session_story(out, store_target)
    if as_json:
        print_json(figures)
        return
    out.print(f"\nExplore what the session wrote (tenant {TENANT}):", highlight=False)
    for line in explore_commands(store_target):
        out.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)


def explore_commands(store_target: str) -> list[str]:
    """Command lines that show the demo session's own data (its store and tenant)."""
    where = f"--store {shlex.quote(store_target)} --tenant {TENANT}"
    return [
        f"memcommit log {where}",
        f"memcommit find --all {where}",
        f'memcommit recall "why did the checkout test fail" --explain {where}',
    ]
