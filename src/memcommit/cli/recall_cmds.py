"""``memcommit recall``: pack a bounded context for a query, and say why for every memory."""

from __future__ import annotations

import re
from datetime import timedelta

import click
from rich.table import Table

import memcommit
from memcommit.cli.app import (
    console,
    handle_errors,
    json_option,
    main,
    parse_now,
    print_json,
    store_option,
)
from memcommit.errors import InvalidInput
from memcommit.recall import Context, Tokens, Words, recall

_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def _duration(field: str, text: str | None) -> timedelta | None:
    """``"90s"``, ``"30m"``, ``"12h"``, ``"7d"`` or ``"2w"``."""
    if text is None:
        return None
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text)
    if not match:
        raise InvalidInput(field, text, "must be a number and a unit: s, m, h, d or w")
    return timedelta(**{_UNITS[match[2]]: float(match[1])})


def _show(ctx: Context, explain: bool) -> None:
    if ctx.note:
        console.print(f"[yellow]{ctx.note}[/yellow]")
    used = ", ".join(f"{name}: {n}" for name, n in ctx.used.items())
    limit = "no limit" if ctx.budget is None else f"{ctx.budget} {ctx.unit}"
    console.print(f"[bold]{len(ctx.selected)} selected[/bold] ({used} {ctx.unit}; budget {limit})")
    console.print(ctx.render() or "(empty context)", markup=False, highlight=False)
    if not explain:
        return
    table = Table("id", "memory", "stage", "cosine", "score", "outcome", "reason")
    for row in ctx.rows:
        table.add_row(
            row.memory.id[:10],
            row.memory.content[:60],
            row.stage,
            "" if row.cosine is None else f"{row.cosine:.3f}",
            "" if row.score is None else f"{row.score:.3f}",
            row.outcome,
            row.reason or "",
        )
    console.print(table)


@main.command("recall")
@click.argument("query")
@click.option("--tenant", required=True, help="Tenant to recall for (hard isolation boundary).")
@click.option(
    "--kind", "kinds", multiple=True, help="Memory kind or store (semantic, episodic, ...)."
)
@click.option("--scope", "scopes", multiple=True, help="Keep only these scopes (repeatable).")
@click.option("--session", default=None, help="The current session.")
@click.option("--only-session", is_flag=True, help="Leave out previous sessions (needs --session).")
@click.option("--max-age", default=None, help="Oldest memory kept, inclusive: 90s, 30m, 12h, 7d.")
@click.option("--latest-per-key", is_flag=True, help="Keep only the newest memory of each key.")
@click.option("--recency-weight", type=float, default=0.0, show_default=True)
@click.option("--half-life", default="24h", show_default=True, help="Recency half-life: 12h, 7d.")
@click.option("--words", type=int, default=None, help="Budget in whitespace words.")
@click.option("--tokens", type=int, default=None, help="Budget in tokens (len/4 estimate).")
@click.option("--max-records", type=int, default=None, help="At most this many memories.")
@click.option("--scorer", default="memory", show_default=True, help="memory, tfidf or poolsplit.")
@click.option("--now", default=None, help="Measure ages at this ISO 8601 time (default: now).")
@click.option("--explain", is_flag=True, help="Show a row for every memory of the tenant.")
@store_option
@json_option
@handle_errors
def recall_cmd(
    query: str,
    tenant: str,
    kinds: tuple[str, ...],
    scopes: tuple[str, ...],
    session: str | None,
    only_session: bool,
    max_age: str | None,
    latest_per_key: bool,
    recency_weight: float,
    half_life: str,
    words: int | None,
    tokens: int | None,
    max_records: int | None,
    scorer: str,
    now: str | None,
    explain: bool,
    store_target: str,
    as_json: bool,
) -> None:
    """Pack a bounded context for QUERY from one tenant's memories.

    Prints the selected memories in render order; --explain adds a row for every
    memory of the tenant with its cosine, score, outcome and the reason it was
    left out. Recall only reads: no use counts change.

    Example:

        memcommit recall "database timeout" --tenant team-a --words 80 --explain
    """
    if words is not None and tokens is not None:
        raise InvalidInput("tokens", tokens, "give --words or --tokens, not both")
    budget = Words(words) if words is not None else Tokens(tokens) if tokens is not None else None
    store = memcommit.open(store_target)
    try:
        ctx = recall(
            store,
            query,
            tenant=tenant,
            kinds=kinds or None,
            scopes=scopes or None,
            session=session,
            include_previous_sessions=not only_session,
            max_age=_duration("max-age", max_age),
            latest_per_key=latest_per_key,
            recency_weight=recency_weight,
            half_life=_duration("half-life", half_life),
            budget=budget,
            max_records=max_records,
            scorer=scorer,
            now=parse_now(now),
            explain=explain,
        )
        if as_json:
            print_json(ctx.to_dict(rows=explain))
        else:
            _show(ctx, explain)
    finally:
        store.close()
