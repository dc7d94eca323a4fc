"""``memcommit recall``: pack a bounded context for a query, and say why for every memory."""

from __future__ import annotations

from typing import Any

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
from memcommit.model import LIVE_TIERS, TIERS
from memcommit.recall import Context, Pool, RecallOptions, Tokens, Words, recall
from memcommit.recall.index.live import reporting
from memcommit.recall.scoring.registry import DEFAULT_SCORER, SCORERS


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
    fused = any(row.fusion for row in rows)  # a hybrid recall: say how each was ranked
    columns = [
        Column("id", no_wrap=True, min_width=32 if wide else None),
        Column("memory", ratio=1, overflow="ellipsis", min_width=20),
        *([Column("stage", no_wrap=True)] if wide else []),
        Column("cosine", justify="right", no_wrap=True),
        Column("score", justify="right", no_wrap=True),
        *([Column("ranked by", overflow="fold", min_width=14)] if fused else []),
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
            *([row.fusion or ""] if fused else []),
            row.outcome,
            row.reason or "",
        ]
        rows_table.add_row(*cells)
    out.print(rows_table)


def _pool(text: str) -> Pool:
    """``--pool NAME:SIZE:ENTRIES[:KIND,KIND]``: a reserved budget, in the budget's unit."""
    bits = text.split(":")
    if len(bits) not in (3, 4) or not bits[0]:
        raise InvalidInput("pool", text, "write a pool as NAME:SIZE:ENTRIES[:KIND,KIND]")
    try:
        size, entries = int(bits[1]), int(bits[2])
    except ValueError:
        raise InvalidInput("pool", text, "SIZE and ENTRIES must be whole numbers") from None
    kinds = tuple(kind for kind in bits[3].split(",") if kind) if len(bits) == 4 else None
    return Pool(bits[0], size, entries, kinds or None)


def recall_options(view: Any, tenant: str, flags: dict[str, Any]) -> RecallOptions:
    """The `RecallOptions` the command line's flags stand for.

    Only the flags spelled otherwise than recall's own arguments are turned into
    values here (text times and durations, ``--words``/``--tokens``, ``--pool``);
    every other flag is the field of its name.
    """
    flags = dict(flags)
    words, tokens = flags.pop("words"), flags.pop("tokens")
    if words is not None and tokens is not None:
        raise InvalidInput("tokens", tokens, "give --words or --tokens, not both")
    budget = Words(words) if words is not None else Tokens(tokens) if tokens is not None else None
    pools = [_pool(text) for text in flags.pop("pools")]
    return RecallOptions(
        tenant=tenant,
        kinds=flags.pop("kinds") or None,
        scopes=flags.pop("scopes") or None,
        tiers=flags.pop("tiers") or LIVE_TIERS,
        include_previous_sessions=not flags.pop("only_session"),
        max_age=parse_duration("max-age", flags.pop("max_age")),
        half_life=parse_duration("half-life", flags.pop("half_life")),
        budget=budget,
        pools=pools or None,
        as_of=resolve_as_of(view, flags.pop("as_of_text")),
        now=parse_now(flags.pop("now")),
        **flags,
    )


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
@click.option(
    "--live/--with-ended",
    default=True,
    show_default=True,
    help="Only memories that hold at --now (the default); or also invalidated, superseded"
    " and expired ones.",
)
@click.option(
    "--tier",
    "tiers",
    multiple=True,
    type=click.Choice(TIERS),
    help=f"Keep only these tiers (repeatable; default: {', '.join(LIVE_TIERS)}).",
)
@click.option("--recency-weight", type=float, default=0.0, show_default=True)
@click.option("--half-life", default="24h", show_default=True, help="Recency half-life: 12h, 7d.")
@click.option("--words", type=int, default=None, help="Budget in whitespace words.")
@click.option("--tokens", type=int, default=None, help="Budget in tokens (len/4 estimate).")
@click.option("--max-records", type=int, default=None, help="At most this many memories.")
@click.option(
    "--pool",
    "pools",
    multiple=True,
    help="A reserved budget NAME:SIZE:ENTRIES[:KIND,KIND] inside --words/--tokens (repeatable).",
)
@click.option(
    "--scorer",
    default=DEFAULT_SCORER,
    show_default=True,
    help="Ranking formula: " + ", ".join(SCORERS) + ".",
)
@click.option(
    "--hybrid/--lexical",
    default=None,
    help="Fuse the ranking with the dense cosine of the store's embedder (the default when"
    " --embedder is given), or rank by words only.",
)
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
    query: str, tenant: str, store_target: str, wide: bool, as_json: bool, **flags: Any
) -> None:
    """Pack a bounded context for QUERY from one tenant's memories.

    Prints the selected memories in render order; --explain adds a row for every
    memory of the tenant with its cosine, score, outcome and the reason it was
    left out. Recall only reads: no use counts change.

    The newest fact that still holds wins by default: of the tenant's memories
    sharing a --key, the newest one that holds competes; older ones are
    excluded as superseded, even when a filter also excludes the newest, and
    invalidating the newest brings the one before it back. History keeps
    them, and --as-of reads the store as it was, when the older fact was
    still the newest. --every-key-version lets every version compete.

    Example:

        memcommit recall "database timeout" --tenant team-a --words 80 --explain
    """
    with opened(store_target, tenant) as view:
        bar = progress_bar("recalling (a first recall builds the index)", as_json=as_json)
        with bar as progress, reporting(view, progress):
            options = recall_options(view, tenant, flags)
            ctx = recall(view, query, options)
        if as_json:
            print_json(ctx.to_dict(rows=options.explain))
        else:
            _show(ctx, options.explain, wide)
