"""``memcommit compact`` and ``memcommit merge``: traces to summaries, summaries to one."""

from __future__ import annotations

from datetime import timedelta

import click
from rich.table import Column

from memcommit.cli.app import (
    all_tenants_option,
    console,
    handle_errors,
    json_option,
    main,
    print_json,
    store_option,
    tenant_option,
)
from memcommit.cli.ids import short_ids
from memcommit.cli.moments import parse_duration, parse_now
from memcommit.cli.opening import open_store
from memcommit.cli.progress import progress_bar
from memcommit.cli.tables import table as shared_table
from memcommit.compaction import (
    CompactionResult,
    Compactor,
    Every,
    FinishedTraces,
    KeepFailed,
    MergeResult,
    OlderThan,
    Policy,
    UnderPressure,
)
from memcommit.model import Commit

#: Rows of the human-readable table; a big run is summed up in a line after them.
SHOWN = 20


def parse_age(text: str) -> timedelta:
    """``"90s"``, ``"30m"``, ``"12h"``, ``"7d"`` or ``"2w"`` as a timedelta."""
    return parse_duration("older-than", text or "")  # type: ignore[return-value]


def build_policy(
    older_than: str | None, keep_failed: int | None, pressure: int | None, per: str
) -> Policy:
    """The policy the options describe: filters combined with Every, pressure around them."""
    filters: list[Policy] = []
    if older_than is not None:
        filters.append(OlderThan(parse_age(older_than)))
    if keep_failed is not None:
        filters.append(KeepFailed(records=keep_failed))
    policy: Policy = Every(*filters) if len(filters) > 1 else (filters or [FinishedTraces()])[0]
    return UnderPressure(pressure, per=per, among=policy) if pressure is not None else policy


def _commit_json(commit: Commit | None) -> dict | None:
    if commit is None:
        return None
    return {
        "seq": commit.seq,
        "id": commit.id,
        "time": commit.time.isoformat(),
        "message": commit.message,
        "changes": len(commit.changes),
    }


def _compaction_json(result: CompactionResult) -> dict:
    return {
        "traces": list(result.traces),
        "summaries": [
            {"id": s.id, "tenant": s.tenant, "scope": s.scope, "task": s.metadata.get("task")}
            for s in result.summaries
        ],
        "moved": list(result.moved),
        "errors": [vars(e) for e in result.errors],
        "commits": [_commit_json(c) for c in result.commits],
    }


def _open(store_target: str, tenant: str, all_tenants: bool):
    store = open_store(store_target, write=True)
    return store, (store if all_tenants else store.tenant(tenant))


@main.command("compact")
@store_option
@json_option
@click.option("--older-than", help="Only traces that ended more than this ago: 90s, 30m, 12h, 7d.")
@click.option(
    "--keep-failed", type=int, help="Keep each tenant's newest failed traces raw, up to N steps."
)
@click.option("--pressure", type=int, help="Only while more than N records are held.")
@click.option(
    "--per",
    type=click.Choice(["partition", "store"]),
    default="partition",
    show_default=True,
    help="Where --pressure counts records.",
)
@tenant_option
@all_tenants_option
@click.option("--now", "now_text", help="The time to compact at (ISO 8601); default: now.")
@click.option("--batch", type=int, help="Traces per commit; default: all in one commit.")
@click.option("--max-bytes", type=int, default=64 * 1024, show_default=True, help="Summary limit.")
@click.option("--dry-run", is_flag=True, help="List the traces that would be compacted.")
@handle_errors
def compact_cmd(
    store_target: str,
    as_json: bool,
    older_than: str | None,
    keep_failed: int | None,
    pressure: int | None,
    per: str,
    tenant: str,
    all_tenants: bool,
    now_text: str | None,
    batch: int | None,
    max_bytes: int,
    dry_run: bool,
) -> None:
    """Compact finished traces into long-term summaries (Compactor.compact).

    Each selected trace gets an outline summary in the long tier and its steps
    move to the archive, all in one commit.

    Example:

        memcommit compact --older-than 7d --keep-failed 5000 --json
    """
    policy = build_policy(older_than, keep_failed, pressure, per)
    now = parse_now(now_text)
    store, view = _open(store_target, tenant, all_tenants)
    try:
        compactor = Compactor(view, policy=policy, max_bytes=max_bytes)
        if dry_run:
            chosen = compactor.select(now)
            if as_json:
                print_json(
                    [{"trace": t.id, "tenant": t.tenant, "task": t.root.content} for t in chosen]
                )
                return
            for trace in chosen:
                console().print(f"{trace.id}  {trace.tenant}/{trace.scope}  {trace.root.content}")
            console().print(f"{len(chosen)} traces would be compacted")
            return
        with progress_bar("compacting", as_json=as_json) as progress:
            result = compactor.compact(now, batch=batch, progress=progress)
    finally:
        store.close()
    if as_json:
        print_json(_compaction_json(result))
        return
    shown = list(zip(result.traces, result.summaries, strict=True))[:SHOWN]
    short = short_ids([*result.traces, *(s.id for s in result.summaries)])
    table = shared_table(
        Column("trace", no_wrap=True), Column("tenant", overflow="ellipsis"),
        Column("summary", no_wrap=True), Column("task", ratio=1, overflow="ellipsis"),
    )  # fmt: skip
    for trace_id, summary in shown:
        table.add_row(
            short[trace_id], summary.tenant, short[summary.id], summary.metadata.get("task", "")
        )
    if shown:
        console().print(table)
    if len(result.traces) > len(shown):
        console().print(f"... and {len(result.traces) - len(shown)} more (--json lists them all)")
    for error in result.errors:
        console().print(f"[red]left {error.trace_id}[/red] ({error.tenant}): {error.error}")
    seqs = ", ".join(str(c.seq) for c in result.commits) or "none"
    console().print(
        f"{len(result.traces)} traces compacted, {len(result.moved)} steps archived, "
        f"{len(result.errors)} errors; commit {seqs}"
    )


def _merge_json(result: MergeResult) -> dict:
    return {
        "summaries": [
            {"id": s.id, "tenant": s.tenant, "scope": s.scope, "task": s.metadata.get("task")}
            for s in result.summaries
        ],
        "superseded": list(result.superseded),
        "errors": [vars(e) for e in result.errors],
        "commit": _commit_json(result.commit),
    }


@main.command("merge")
@store_option
@json_option
@click.option(
    "--by",
    type=click.Choice(["task", "key"]),
    default="task",
    show_default=True,
    help="Group summaries by their task text or by their key.",
)
@click.option("--task", help="Merge the summaries of this task only.")
@click.option("--key", help="Merge the summaries with this key only.")
@tenant_option
@all_tenants_option
@click.option("--now", "now_text", help="The time of the merge commit (ISO 8601).")
@handle_errors
def merge_cmd(
    store_target: str,
    as_json: bool,
    by: str,
    task: str | None,
    key: str | None,
    tenant: str,
    all_tenants: bool,
    now_text: str | None,
) -> None:
    """Fold summaries of the same task into one evolving summary (Compactor.merge).

    The old summaries are superseded by the new one, all in one commit.

    Example:

        memcommit merge --by task --json
    """
    now = parse_now(now_text)
    store, view = _open(store_target, tenant, all_tenants)
    try:
        result = Compactor(view).merge(by=by, task=task, key=key, now=now)
    finally:
        store.close()
    if as_json:
        print_json(_merge_json(result))
        return
    for summary in result.summaries:
        built = len(summary.metadata["provenance"]["built_from"])
        console().print(f"{summary.id}  {summary.tenant}/{summary.scope}  {built} summaries merged")
    for error in result.errors:
        console().print(f"[red]left {error.trace_id}[/red] ({error.tenant}): {error.error}")
    seq = result.commit.seq if result.commit else "none"
    console().print(
        f"{len(result.summaries)} merged summaries, {len(result.superseded)} superseded; "
        f"commit {seq}"
    )
