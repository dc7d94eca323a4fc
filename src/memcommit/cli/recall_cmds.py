"""``memcommit recall``: pack a bounded context for a query, and say why for every memory."""

from __future__ import annotations

import click
from rich.table import Column

from memcommit.cli.app import (
    console,
    handle_errors,
    json_option,
    main,
    print_json,
    store_option,
    tenant_option,
    wide_option,
)
from memcommit.cli.ids import resolve_as_of, short_ids
from memcommit.cli.moments import parse_duration, parse_now
from memcommit.cli.opening import opened
from memcommit.cli.progress import progress_bar
from memcommit.cli.tables import preview, table
from memcommit.errors import InvalidInput
from memcommit.recall import Context, Tokens, Words, recall
from memcommit.recall.index.live import reporting


def _show(ctx: Context, explain: bool, wide: bool) -> None:
    out = console()
    if ctx.note:
        out.print(f"[yellow]{ctx.note}[/yellow]")
    used = ", ".join(f"{name}: {n}" for name, n in ctx.used.items())
    limit = "no limit" if ctx.budget is None else f"{ctx.budget} {ctx.unit}"
    out.print(f"[bold]{len(ctx.selected)} selected[/bold] ({used} {ctx.unit}; budget {limit})")
    out.print(ctx.render() or "(empty context)", markup=False)
    if not explain:
        return
    rows = list(ctx.rows)
    short = short_ids(row.memory.id for row in rows)
    columns = [
        Column("id", no_wrap=True, min_width=32 if wide else None),
        Column("memory", ratio=1, overflow="ellipsis", min_width=20),
        *([Column("stage", no_wrap=True)] if wide else []),
        Column("cosine", justify="right", no_wrap=True),
        Column("score", justify="right", no_wrap=True),
        Column("outcome", no_wrap=True, overflow="ellipsis"),
        Column("reason", overflow="ellipsis", ratio=1 if wide else None, min_width=10),
    ]
    rows_table = table(*columns)
    for row in rows:
        cells = [
            row.memory.id if wide else short[row.memory.id],
            row.memory.content if wide else preview(row.memory.content, 60),
            *([row.stage] if wide else []),
            "" if row.cosine is None else f"{row.cosine:.3f}",
            "" if row.score is None else f"{row.score:.3f}",
            row.outcome,
            row.reason or "",
        ]
        rows_table.add_row(*cells)
    out.print(rows_table)


@main.command("recall")
@click.argument("query")
@click.option(
    "--kind", "kinds", multiple=True, help="Memory kind or store (semantic, episodic, ...)."
)
@click.option("--scope", "scopes", multiple=True, help="Keep only these scopes (repeatable).")
@click.option("--session", default=None, help="The current session.")
@click.option("--only-session", is_flag=True, help="Leave out previous sessions (needs --session).")
@click.option("--max-age", default=None, help="Oldest memory kept, inclusive: 90s, 30m, 12h, 7d.")
@click.option(
    "--latest-per-key/--every-key-version",
    default=True,
    show_default=True,
    help="A newer memory with the same key hides older ones (the default); or keep them all.",
)
@click.option("--recency-weight", type=float, default=0.0, show_default=True)
@click.option("--half-life", default="24h", show_default=True, help="Recency half-life: 12h, 7d.")
@click.option("--words", type=int, default=None, help="Budget in whitespace words.")
@click.option("--tokens", type=int, default=None, help="Budget in tokens (len/4 estimate).")
@click.option("--max-records", type=int, default=None, help="At most this many memories.")
@click.option("--scorer", default="memory", show_default=True, help="memory, tfidf or poolsplit.")
@click.option("--now", default=None, help="Measure ages at this time (default: now): ISO 8601, 2h.")
@click.option(
    "--as-of", "as_of_text", help="Recall from the store as of a commit (seq or id) or a time."
)
@click.option("--explain", is_flag=True, help="Show a row for every memory of the tenant.")
@tenant_option
@store_option
@wide_option
@json_option
@handle_errors
def recall_cmd(
    query: str,
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
    as_of_text: str | None,
    explain: bool,
    tenant: str,
    store_target: str,
    wide: bool,
    as_json: bool,
) -> None:
    """Pack a bounded context for QUERY from one tenant's memories.

    Prints the selected memories in render order; --explain adds a row for every
    memory of the tenant with its cosine, score, outcome and the reason it was
    left out. Recall only reads: no use counts change.

    The latest fact wins by default: of the tenant's memories sharing a --key,
    only the newest (by creation time) competes; older ones are excluded as
    older_key_version, even when a filter also excludes the newest. History
    keeps them, and --as-of reads the store as it was, when the older fact
    was still the newest. --every-key-version lets every version compete.

    Example:

        memcommit recall "database timeout" --tenant team-a --words 80 --explain
    """
    with opened(store_target, tenant) as view:
        bar = progress_bar("recalling (a first recall builds the index)", as_json=as_json)
        with bar as progress, reporting(view, progress):
            ctx = _recall(
                view, query, kinds=kinds, scopes=scopes, session=session,
                only_session=only_session, max_age=max_age, latest_per_key=latest_per_key,
                recency_weight=recency_weight, half_life=half_life, words=words, tokens=tokens,
                max_records=max_records, scorer=scorer, now=now, as_of=as_of_text,
                explain=explain,
            )  # fmt: skip
        if as_json:
            print_json(ctx.to_dict(rows=explain))
        else:
            _show(ctx, explain, wide)


def _recall(
    view, query: str, *, kinds, scopes, session, only_session, max_age, latest_per_key,
    recency_weight, half_life, words, tokens, max_records, scorer, now, as_of, explain,
) -> Context:  # fmt: skip
    """The library call, with the command line's text turned into its values."""
    if words is not None and tokens is not None:
        raise InvalidInput("tokens", tokens, "give --words or --tokens, not both")
    budget = Words(words) if words is not None else Tokens(tokens) if tokens is not None else None
    return recall(
        view,
        query,
        kinds=kinds or None,
        scopes=scopes or None,
        session=session,
        include_previous_sessions=not only_session,
        max_age=parse_duration("max-age", max_age),
        latest_per_key=latest_per_key,
        recency_weight=recency_weight,
        half_life=parse_duration("half-life", half_life),
        budget=budget,
        max_records=max_records,
        scorer=scorer,
        as_of=resolve_as_of(view, as_of),
        now=parse_now(now),
        explain=explain,
    )
