"""``memcommit tiers``: working memory from the command line (TieredMemory, simulate)."""

from __future__ import annotations

from dataclasses import asdict

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
from memcommit.cli.ids import is_short_id, resolve_memory
from memcommit.cli.moments import parse_now
from memcommit.cli.opening import open_store
from memcommit.cli.progress import progress_bar
from memcommit.cli.tables import count, memory_table
from memcommit.cli.tables import table as shared_table
from memcommit.errors import InvalidInput, NotFound
from memcommit.tiers import AccessCount, Never, simulate
from memcommit.tiers.memory import TieredMemory
from memcommit.tiers.policies.names import EVICTION_POLICIES, policy_by_name
from memcommit.tiers.traces import SYNTHETIC, synthetic

POLICIES = list(EVICTION_POLICIES)


def _tiers(
    store_target: str, tenant: str, all_tenants: bool, *, write: bool, **config
) -> tuple[object, TieredMemory]:
    store = open_store(store_target, write=write)
    view = store if all_tenants else store.tenant(tenant)
    return store, TieredMemory(view, auto=False, **config)


def _config(
    capacity: int,
    eviction: str,
    promote_uses: int | None,
    mid_capacity: int | None,
    long_capacity: int | None,
) -> dict:
    return {
        "capacity": capacity,
        "eviction": policy_by_name(eviction),
        "promotion": AccessCount(promote_uses) if promote_uses else Never(),
        "mid_capacity": mid_capacity,
        "long_capacity": long_capacity,
    }


def _policy_options(fn):
    options = [
        click.option(
            "--capacity",
            type=int,
            default=64,
            show_default=True,
            help="Short-term capacity per partition (tenant, scope).",
        ),
        click.option(
            "--eviction",
            type=click.Choice(POLICIES, case_sensitive=False),
            default="lru",
            show_default=True,
            help="Eviction policy.",
        ),
        click.option("--promote-uses", type=int, help="Promote memories used this often."),
        click.option("--mid-capacity", type=int, help="Evict to mid-term segments of this size."),
        click.option("--long-capacity", type=int, help="Trim long-term to this many."),
        tenant_option,
        all_tenants_option,
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


@main.group("tiers")
def tiers_group() -> None:
    """Working memory: what is in short-term, hits and misses, maintenance, simulation.

    Example:

        memcommit tiers simulate --synthetic zipf --capacity 1000 --policy arc
    """


@tiers_group.command("working")
@store_option
@json_option
@click.option("--scope", "scopes", multiple=True, help="Only these scopes (repeatable).")
@tenant_option
@all_tenants_option
@handle_errors
def working_cmd(
    store_target: str, as_json: bool, scopes: tuple[str, ...], tenant: str, all_tenants: bool
) -> None:
    """List the memories in short-term memory (TieredMemory.working).

    Example:

        memcommit tiers working --scope planner --json
    """
    store, tm = _tiers(store_target, tenant, all_tenants, write=False)
    try:
        found = tm.working(scopes=list(scopes) or None)
    finally:
        store.close()
    if as_json:
        print_json(
            [{"id": m.id, "scope": m.scope, "kind": m.kind, "content": m.content} for m in found]
        )
        return
    out = console()
    out.print(memory_table(found))
    out.print(f"{len(found)} memories in short-term")


@tiers_group.command("stats")
@store_option
@json_option
@tenant_option
@all_tenants_option
@handle_errors
def stats_cmd(store_target: str, as_json: bool, tenant: str, all_tenants: bool) -> None:
    """Show hits, warm hits, misses and tier moves per partition (TieredMemory.stats).

    Example:

        memcommit tiers stats --json
    """
    store, tm = _tiers(store_target, tenant, all_tenants, write=False)
    try:
        stats = tm.stats
    finally:
        store.close()
    if as_json:
        print_json(stats.to_json())
        return
    # one column per partition (and the total): counter names are long, partitions few
    names = list(asdict(stats.total))
    parts = [
        *[(f"{t}/{s}", c) for (t, s), c in sorted(stats.partitions.items())],
        ("total", stats.total),
    ]
    table = shared_table(
        Column("counter", no_wrap=True),
        *[Column(label, justify="right", overflow="fold") for label, _ in parts],
        expand=False,
    )
    for name in names:
        table.add_row(name.replace("_", " "), *[str(getattr(c, name)) for _, c in parts])
    table.add_row("hit ratio", *[f"{c.hit_ratio:.3f}" for _, c in parts])
    console().print(table)


@tiers_group.command("touch")
@store_option
@json_option
@click.argument("ids", nargs=-1, required=True)
@_policy_options
@click.option("--now", "now_text", help="The time of the touch (ISO 8601).")
@handle_errors
def touch_cmd(
    store_target: str,
    as_json: bool,
    ids: tuple[str, ...],
    now_text: str | None,
    tenant: str,
    all_tenants: bool,
    **config,
) -> None:
    """Count a use of each id; page archived ones back in (TieredMemory.touch).

    Example:

        memcommit tiers touch …4be01f3 …9c2d7aa --capacity 32 --eviction arc
    """
    store, tm = _tiers(store_target, tenant, all_tenants, write=True, **_config(**config))
    try:
        view = store if all_tenants else store.tenant(tenant)
        full = [
            resolve_memory(view, id) if is_short_id(id, numbers_are_seqs=False) else id
            for id in ids
        ]
        try:
            result = tm.touch(full, now=parse_now(now_text))
            unknown: list[str] = []
        except NotFound as exc:
            result, unknown = exc.result, list(exc.value)
    finally:
        store.close()
    data = {
        "hits": result.hits,
        "warm_hits": result.warm_hits,
        "misses": result.misses,
        "paged_in": result.paged_in,
        "evicted": result.evicted,
        "unknown": unknown,
        "commit": result.commit.seq if result.commit else None,
    }
    if as_json:
        print_json(data)
    else:
        console().print(
            ", ".join(
                f"{k.replace('_', ' ')} {len(v)}" for k, v in data.items() if isinstance(v, list)
            )
        )
    if unknown:
        raise NotFound("ids", unknown)


@tiers_group.command("maintain")
@store_option
@json_option
@_policy_options
@click.option("--now", "now_text", help="The time of the maintenance (ISO 8601).")
@handle_errors
def maintain_cmd(
    store_target: str, as_json: bool, now_text: str | None, tenant: str, all_tenants: bool,
    **config,
) -> None:  # fmt: skip
    """Promote, evict over-capacity partitions, settle mid-term, trim long-term (maintain).

    Example:

        memcommit tiers maintain --capacity 64 --promote-uses 3 --mid-capacity 256
    """
    store, tm = _tiers(store_target, tenant, all_tenants, write=True, **_config(**config))
    try:
        result = tm.maintain(now=parse_now(now_text))
    finally:
        store.close()
    data = {
        "promoted": result.promoted,
        "evicted": result.evicted,
        "to_mid": result.to_mid,
        "segments_promoted": result.segments_promoted,
        "consolidated": result.consolidated,
        "trimmed": result.trimmed,
        "commits": [c.seq for c in result.commits],
    }
    if as_json:
        print_json(data)
        return
    console().print(", ".join(f"{k.replace('_', ' ')} {len(v)}" for k, v in data.items()))


def _trace(path: str | None, kind: str | None, requests: int, seed: int) -> list:
    if (path is None) == (kind is None):
        raise InvalidInput("trace", path, "give a trace file or --synthetic, not both or neither")
    if path is None:
        return synthetic(kind, requests, seed=seed)
    with click.open_file(path) as f:
        return [line.strip() for line in f if line.strip()]


@tiers_group.command("simulate")
@json_option
@click.argument("trace_file", required=False, type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--synthetic",
    type=click.Choice(SYNTHETIC),
    help="Use a seeded Zipf trace (α 0.8, 100k ids), plain or with scans or loops.",
)
@click.option(
    "--requests",
    type=int,
    default=1_000_000,
    show_default=True,
    help="Length of a synthetic trace.",
)
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of a synthetic trace.")
@click.option(
    "--capacity",
    "capacities",
    type=int,
    multiple=True,
    required=True,
    help="Cache size in memories (repeatable).",
)
@click.option(
    "--policy",
    "policies",
    multiple=True,
    type=click.Choice(POLICIES, case_sensitive=False),
    help="Policy to replay (repeatable; default: all).",
)
@handle_errors
def simulate_cmd(
    as_json: bool,
    trace_file: str | None,
    synthetic: str | None,
    requests: int,
    seed: int,
    capacities: tuple[int, ...],
    policies: tuple[str, ...],
) -> None:
    """Replay a trace of memory ids (one per line) through policies (tiers.simulate).

    Record the ids your agent touched, then compare hit ratios to pick a policy.

    Example:

        memcommit tiers simulate touches.txt --capacity 64 --capacity 256 --policy lru --policy arc
    """
    runs = [(c, p) for c in capacities for p in (policies or POLICIES)]
    with progress_bar("reading the trace", as_json=as_json):
        trace = _trace(trace_file, synthetic, requests, seed)
    results = []
    total = len(runs) * len(trace)
    what = f"replaying {len(trace):,} requests through {count(len(runs), 'policy', 'policies')}"
    with progress_bar(what, as_json=as_json) as progress:
        for done, (capacity, policy) in enumerate(runs):
            offset = done * len(trace)
            results.append(
                simulate(
                    trace, capacity=capacity, policy=policy_by_name(policy),
                    progress=lambda n, offset=offset: progress(offset + n, total),
                )
            )  # fmt: skip
    if as_json:
        print_json([{**asdict(r), "misses": r.misses, "hit_ratio": r.hit_ratio} for r in results])
        return
    table = shared_table(
        "policy", *[Column(h, justify="right") for h in ("capacity", "requests", "hits", "misses")],
        Column("hit ratio", justify="right"), expand=False,
    )  # fmt: skip
    for r in results:
        table.add_row(
            r.policy,
            str(r.capacity),
            str(r.requests),
            str(r.hits),
            str(r.misses),
            f"{r.hit_ratio:.4f}" if r.requests else "—",  # no request: no ratio
        )
    console().print(table)
