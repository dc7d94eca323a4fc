"""``memcommit embed``: give the memories that have none a vector (Store.embed), resumably."""

from __future__ import annotations

import click

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


@main.command("embed")
@store_option
@tenant_option
@all_tenants_option
@click.option(
    "--batch-size",
    type=click.IntRange(1, 100_000),
    default=64,
    show_default=True,
    help="Texts per embedding call; each batch is written in a transaction of its own.",
)
@click.option("--limit", type=click.IntRange(0), default=None, help="Stop after this many texts.")
@json_option
@handle_errors
def embed_cmd(
    store_target: str,
    tenant: str,
    all_tenants: bool,
    batch_size: int,
    limit: int | None,
    as_json: bool,
) -> None:
    """Embed the memories that have no vector yet (Store.embed), with --embedder.

    Resumable: each batch lands on its own, so an interrupted run keeps what it
    did and running it again does only the rest. Memories already embedded by
    the same embedder are skipped; a memory whose text changed while the model
    ran is left for the next run.

    Example:

        memcommit embed --store agent.db --embedder local --all-tenants
    """
    with opened(store_target, write=True) as store:
        where = store if all_tenants else store.tenant(tenant)
        with progress_bar("embedding", as_json=as_json) as progress:
            report = where.embed(batch_size=batch_size, limit=limit, progress=progress)
    if as_json:
        print_json({**vars(report), "texts_per_second": report.texts_per_second})
        return
    rate = f", {report.texts_per_second:.1f} texts/s" if report.embedded else ""
    console().print(
        f"embedded {report.embedded} memories with {report.embedder}{rate};"
        f" {report.skipped} changed meanwhile, {report.remaining} still without a vector"
    )
