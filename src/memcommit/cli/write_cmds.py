"""``memcommit update | invalidate | supersede | archive | restore | forget``: change a memory.

Each command is one commit holding one Transaction call, inside ``--tenant``.
The library validates every value (the same errors as the Python API); ids may
be given in full or as the short form the tables show. The store must exist.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
from memcommit.cli.ids import resolve_memory
from memcommit.cli.moments import TIME_FORMS, parse_moment
from memcommit.cli.opening import opened
from memcommit.model import KINDS, LIVE_TIERS, Memory
from memcommit.store import Transaction


def commit_options(fn: Callable) -> Callable:
    """``-m/--message``, ``--author``, ``--tenant``, ``--store`` and ``--json``."""
    for option in (
        json_option,
        store_option,
        tenant_option,
        click.option("--author", default="cli", show_default=True, help="Commit author."),
        click.option("--message", "-m", default=None, help="Commit message (default: the op)."),
    ):
        fn = option(fn)
    return fn


def write_one(
    op: str,
    ids: tuple[str, ...],
    change: Callable[[Transaction, list[str]], Memory],
    *,
    store_target: str,
    tenant: str,
    message: str | None,
    author: str,
    as_json: bool,
    confirm: Callable[[str], None] | None = None,
) -> bool:
    """Resolve ``ids``, ask ``confirm`` (before the commit holds the write lock), run
    ``change`` in one commit, and report the new version; for a purge, whether its
    tenant is still owed a scrub of purged content (`Store.scrub_pending`)."""
    with opened(store_target, tenant, write=True) as view:
        full = [resolve_memory(view, id, field=f"id {n + 1}") for n, id in enumerate(ids)]
        if confirm is not None:
            confirm(full[0])
        text = message if message is not None else f"{op} {' '.join(full)}"
        with view.commit(message=text, author=author) as tx:
            memory = change(tx, full)
        pending = op == "purge" and bool(view.scrub_pending())
    report(op, memory, tx, as_json=as_json)
    return pending


def report(op: str, memory: Memory, tx: Transaction, *, as_json: bool) -> None:
    """The changed memory and its commit (none when nothing changed), as JSON or one line."""
    commit = tx.result
    if as_json:
        landed = None if commit is None else {"seq": commit.seq, "id": commit.id}
        print_json({"op": op, "memory": memory, "commit": landed})
        return
    state = f"version {memory.version} ({memory.status}, tier {memory.tier})"
    if commit is None:
        console().print(f"{op}: {memory.id} unchanged, still {state}; nothing was committed")
        return
    console().print(f"{op}: {memory.id} is now {state} in commit {commit.seq}")


@main.command("update")
@click.argument("memory_id")
@click.option("--content", help="New text of the memory.")
@click.option("--kind", type=click.Choice(KINDS), help="New kind.")
@click.option("--scope", help="New partition.")
@click.option("--session", help="New session.")
@click.option("--key", help="New key (a newer memory with the same key wins in recall).")
@click.option("--importance", type=float, help="New importance, from 0 to 1.")
@click.option("--tag", "tags", multiple=True, help="Replace the tags (repeat for more).")
@click.option(
    "--always/--not-always",
    default=None,
    help="Make it a correction that always loads (implied by --kind correction).",
)
@click.option("--expected-version", type=int, help="Refuse if the memory moved past this version.")
@commit_options
@handle_errors
def update_cmd(
    memory_id: str, content: str | None, kind: str | None, scope: str | None,
    session: str | None, key: str | None, importance: float | None, tags: tuple[str, ...],
    always: bool | None, expected_version: int | None, message: str | None, author: str,
    tenant: str, store_target: str, as_json: bool,
) -> None:  # fmt: skip
    """Write a new version of a memory with some fields changed (Transaction.update).

    Only the fields given change; the old version stays in history.

    Example:

        memcommit update …4be01f3 --content "The user prefers green tea" --importance 0.8
    """
    if kind == "correction" and always is None:
        always = True  # a correction always loads, as recall promises
    given: dict[str, Any] = {
        "content": content, "kind": kind, "scope": scope, "session": session, "key": key,
        "importance": importance, "tags": tags or None, "always": always,
    }  # fmt: skip
    fields = {name: value for name, value in given.items() if value is not None}

    def change(tx: Transaction, ids: list[str]) -> Memory:
        return tx.update(ids[0], expected_version=expected_version, **fields)

    write_one(
        "update", (memory_id,), change, store_target=store_target, tenant=tenant,
        message=message, author=author, as_json=as_json,
    )  # fmt: skip


@main.command("invalidate")
@click.argument("memory_id")
@click.option("--at", "at_text", help=f"When it stopped holding (default: now): {TIME_FORMS}.")
@commit_options
@handle_errors
def invalidate_cmd(
    memory_id: str, at_text: str | None, message: str | None, author: str, tenant: str,
    store_target: str, as_json: bool,
) -> None:  # fmt: skip
    """Mark a memory as no longer holding (Transaction.invalidate); history keeps it.

    Example:

        memcommit invalidate …4be01f3 --at yesterday -m "the office moved"
    """
    at = None if at_text is None else parse_moment("at", at_text)

    def change(tx: Transaction, ids: list[str]) -> Memory:
        return tx.invalidate(ids[0], at=at)

    write_one(
        "invalidate", (memory_id,), change, store_target=store_target, tenant=tenant,
        message=message, author=author, as_json=as_json,
    )  # fmt: skip


@main.command("supersede")
@click.argument("old_id")
@click.argument("new_id")
@commit_options
@handle_errors
def supersede_cmd(
    old_id: str, new_id: str, message: str | None, author: str, tenant: str,
    store_target: str, as_json: bool,
) -> None:  # fmt: skip
    """Replace memory OLD_ID by NEW_ID (Transaction.supersede); OLD_ID stops holding.

    Example:

        memcommit supersede …4be01f3 …9c2d7aa -m "deploy window changed"
    """

    def change(tx: Transaction, ids: list[str]) -> Memory:
        return tx.supersede(ids[0], ids[1])

    write_one(
        "supersede", (old_id, new_id), change, store_target=store_target, tenant=tenant,
        message=message, author=author, as_json=as_json,
    )  # fmt: skip


@main.command("archive")
@click.argument("memory_id")
@commit_options
@handle_errors
def archive_cmd(
    memory_id: str, message: str | None, author: str, tenant: str, store_target: str,
    as_json: bool,
) -> None:  # fmt: skip
    """Move a memory to the archive tier (Transaction.archive); recall leaves it out.

    Example:

        memcommit archive …4be01f3
    """

    def change(tx: Transaction, ids: list[str]) -> Memory:
        return tx.archive(ids[0])

    write_one(
        "archive", (memory_id,), change, store_target=store_target, tenant=tenant,
        message=message, author=author, as_json=as_json,
    )  # fmt: skip


@main.command("restore")
@click.argument("memory_id")
@click.option("--tier", type=click.Choice(LIVE_TIERS), default="short", show_default=True)
@commit_options
@handle_errors
def restore_cmd(
    memory_id: str, tier: str, message: str | None, author: str, tenant: str,
    store_target: str, as_json: bool,
) -> None:  # fmt: skip
    """Bring an archived memory back to a tier (Transaction.restore).

    Example:

        memcommit restore …4be01f3 --tier long
    """

    def change(tx: Transaction, ids: list[str]) -> Memory:
        return tx.restore(ids[0], tier=tier)

    write_one(
        "restore", (memory_id,), change, store_target=store_target, tenant=tenant,
        message=message, author=author, as_json=as_json,
    )  # fmt: skip


@main.command("forget")
@click.argument("memory_id")
@click.option(
    "--purge", is_flag=True, help="Erase the content from every version, for good (privacy)."
)
@click.option("--yes", "-y", is_flag=True, help="Purge without asking first.")
@commit_options
@handle_errors
def forget_cmd(
    memory_id: str, purge: bool, yes: bool, message: str | None, author: str, tenant: str,
    store_target: str, as_json: bool,
) -> None:  # fmt: skip
    """Forget a memory: it no longer holds (Transaction.invalidate), or --purge erases it.

    Without --purge the memory stays in history, out of recall. --purge
    erases its content, tags and metadata from every version, and from the
    summaries derived from it (Transaction.purge); a tombstone stays. It asks
    for confirmation first unless --yes is given.

    Example:

        memcommit forget …4be01f3 --purge --yes -m "user asked to delete it"
    """
    op = "purge" if purge else "invalidate"

    def ask(full_id: str) -> None:
        if purge and not yes:
            click.confirm(
                f"Purge {full_id}? Its content is erased from every version, for good",
                abort=True,
                err=True,
            )

    def change(tx: Transaction, ids: list[str]) -> Memory:
        return tx.purge(ids[0]) if purge else tx.invalidate(ids[0])

    pending = write_one(
        op, (memory_id,), change, store_target=store_target, tenant=tenant, message=message,
        author=author, as_json=as_json, confirm=ask,
    )  # fmt: skip
    if pending:
        click.echo(
            f"warning: copies of purged content may remain in the database files (a reader"
            f" still held them); run `memcommit scrub --tenant {tenant}` later",
            err=True,
        )


@main.command("scrub")
@tenant_option
@all_tenants_option
@store_option
@json_option
@handle_errors
def scrub_cmd(tenant: str, all_tenants: bool, store_target: str, as_json: bool) -> None:
    """Remove the copies of purged content the database keeps (Store.scrub); exit 1 if any remain.

    Runs by itself after every purge. This scrubs the tenant's part and every
    tenant still owed a scrub (Store.scrub_pending: a reader held the copies, or
    a purging process died before its scrub); --all-tenants scrubs every part.
    Exit code 1 names what is still owed: try again once long reads have ended.

    Example:

        memcommit scrub --store agent.db --tenant acme
    """
    with opened(store_target, write=True) as store:
        chosen = None if all_tenants else sorted({tenant, *store.scrub_pending()})
        clean = store.scrub(chosen)
        pending = store.scrub_pending()
    if as_json:
        print_json({"clean": clean, "pending": pending})
    elif clean and not pending:
        console().print("scrubbed: no copy of purged content is left in the database files")
    else:
        shown = ", ".join(pending) or ", ".join(chosen or ["every tenant"])
        console().print(f"[yellow]not clean[/yellow]: a reader still held copies ({shown})")
    if not clean or pending:
        raise SystemExit(1)
