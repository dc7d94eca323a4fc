"""``memcommit index``: bring recall's snapshots current (`memcommit.recall.index.prepare`)."""

from __future__ import annotations

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
from memcommit.cli.opening import opened
from memcommit.cli.progress import progress_bar


@main.command("index")
@store_option
@tenant_option
@all_tenants_option
@json_option
@handle_errors
def index_cmd(store_target: str, tenant: str, all_tenants: bool, as_json: bool) -> None:
    """Bring recall's snapshots current, so a fresh process's first recall opens one.

    A writer keeps them current itself (one commit in a while pays for a
    snapshot: about a second on a 100,000-memory tenant); a writer opened with
    keep_snapshots=False keeps none, and this does it instead, from another
    process or a schedule. A snapshot holding every commit of its tenant is
    left as it is (other tenants' commits do not make it stale); a tenant of
    fewer than 256 memories keeps none (recall builds it from the store in a
    few ms). Exit code 1 when a tenant's snapshot could not be kept (the line
    says why).

    Example:

        memcommit index --store agent.db --all-tenants
    """
    from memcommit.recall.index import live
    from memcommit.recall.index.prepare import prepare

    with opened(store_target) as store, progress_bar("indexing", as_json=as_json) as progress:
        kept = prepare(store, progress, tenants=None if all_tenants else [tenant])
    if as_json:
        print_json([item._asdict() for item in kept])
    else:
        _report(kept, tenant if not all_tenants else None, live.SNAPSHOT_MIN)
    if not all(item.current for item in kept):
        raise SystemExit(1)


def _report(kept: list, tenant: str | None, smallest: int) -> None:
    """One line per tenant: how many memories, what was done, how it was opened."""
    out = console()
    for item in kept:
        done = "written" if item.written else "already current" if item.current else "not kept"
        out.print(
            f"{item.tenant}: {item.memories} memories, {done} ({item.opened}; {item.seconds:.2f} s)"
        )
    if not kept:
        where = "no tenant holds" if tenant is None else f"tenant {tenant!r} holds fewer than"
        out.print(f"{where} the {smallest} memories a snapshot is kept for")
