"""``memcommit init | add | get | find | log | show | history | diff | check``: the store.

Each command opens the store, calls one library method through a tenant view
(``--tenant``, default "default"), and prints a rich table or ``--json``.
"""

from __future__ import annotations

import dataclasses
import difflib
from typing import Any

import click
from rich.table import Table

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
from memcommit.cli.ids import resolve_as_of, resolve_memory
from memcommit.cli.opening import opened
from memcommit.cli.progress import progress_bar
from memcommit.cli.tables import (
    changes_table,
    commit_line,
    commit_table,
    count,
    memory_table,
    when,
)
from memcommit.model import KINDS, TIERS


def as_of_option(fn):
    """Add ``--as-of``: a commit seq, a commit id, or a time (ISO 8601 or ``2h``, ``yesterday``)."""
    return click.option(
        "--as-of",
        "as_of_text",
        help="Read as of a commit (seq or id) or a time: ISO 8601, 2h, 3d, yesterday.",
    )(fn)


@main.command("init")
@store_option
@json_option
@handle_errors
def init_cmd(store_target: str, as_json: bool) -> None:
    """Create a store (or bring an existing one's schema up to date).

    A store written before the hash chain has its history hashed once here,
    with a progress bar (any first read-write open would do it, silently).

    Example:

        memcommit init --store agent.db
    """
    import memcommit

    with progress_bar("hashing the history", as_json=as_json) as progress:
        store = memcommit.open(store_target, progress=progress)
    with store:
        head = store.head
    if as_json:
        print_json({"store": store_target, "head": None if head is None else head.seq})
    else:
        console().print(f"store ready at {store_target} ({head.seq if head else 0} commits)")


@main.command("add")
@click.argument("content")
@click.option("--kind", type=click.Choice(KINDS), default="fact", show_default=True)
@click.option("--scope", default="shared", show_default=True, help="Partition of the memory.")
@click.option("--session", help="Session the memory belongs to.")
@click.option("--key", help="A newer memory with the same key replaces this one in recall.")
@click.option("--importance", type=float, default=0.5, show_default=True, help="From 0 to 1.")
@click.option("--tag", "tags", multiple=True, help="A tag (repeat for more).")
@click.option("--tier", type=click.Choice(TIERS), default="short", show_default=True)
@click.option(
    "--always",
    is_flag=True,
    help="Always load it (implied by --kind correction: a correction always loads).",
)
@click.option(
    "--message", "-m", help="Commit message (default: add and the kind; never the content)."
)
@click.option("--author", default="cli", show_default=True, help="Commit author.")
@tenant_option
@store_option
@json_option
@handle_errors
def add_cmd(
    content: str, kind: str, scope: str, session: str | None, key: str | None, importance: float,
    tags: tuple[str, ...], tier: str, always: bool, message: str | None, author: str, tenant: str,
    store_target: str, as_json: bool,
) -> None:  # fmt: skip
    """Add one memory in a commit of its own (Transaction.add).

    Example:

        memcommit add "The user prefers tea" --kind fact --key drink -m "noted a preference"
    """
    # (never the content: a commit message outlives a purge of the memory)
    text = message if message is not None else f"add {kind}"
    with (
        opened(store_target, tenant, create=True) as view,
        view.commit(message=text, author=author) as tx,
    ):
        m = tx.add(
            content, kind=kind, scope=scope, session=session, key=key, importance=importance,
            tags=tags, tier=tier, always=always or kind == "correction",
        )  # fmt: skip
    if as_json:
        print_json({"memory": m, "commit": {"seq": tx.result.seq, "id": tx.result.id}})
    else:
        console().print(f"added {m.id} in commit {tx.result.seq}")


@main.command("get")
@click.argument("memory_id")
@as_of_option
@tenant_option
@store_option
@json_option
@handle_errors
def get_cmd(memory_id: str, as_of_text: str | None, tenant: str, store_target: str, as_json: bool):
    """Show one memory (Store.get), optionally as it was at an earlier commit.

    Example:

        memcommit get 01a228c9a9fb154e01830803e85a0f72 --as-of 3
    """
    with opened(store_target, tenant) as view:
        m = view.get(resolve_memory(view, memory_id), as_of=resolve_as_of(view, as_of_text))
    if as_json:
        print_json(m)
        return
    table = Table("field", "value", show_header=False)
    for f in dataclasses.fields(m):
        value = getattr(m, f.name)
        shown = when(value) if f.name.endswith("_at") else "" if value is None else str(value)
        table.add_row(f.name, shown)
    console().print(table)


@main.command("find")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(KINDS), help="Repeatable.")
@click.option("--scope", "scopes", multiple=True, help="Repeatable.")
@click.option("--session", "sessions", multiple=True, help="Repeatable.")
@click.option("--key", help="Only memories with this key.")
@click.option("--tier", "tiers", multiple=True, type=click.Choice(TIERS), help="Repeatable.")
@click.option("--trace", help="Only the root and steps of this trace.")
@click.option("--all", "everything", is_flag=True, help="Include memories that no longer hold.")
@click.option("--limit", type=int, help="At most this many.")
@as_of_option
@tenant_option
@store_option
@wide_option
@json_option
@handle_errors
def find_cmd(
    kinds: tuple[str, ...], scopes: tuple[str, ...], sessions: tuple[str, ...], key: str | None,
    tiers: tuple[str, ...], trace: str | None, everything: bool, limit: int | None,
    as_of_text: str | None, tenant: str, store_target: str, wide: bool, as_json: bool,
) -> None:  # fmt: skip
    """List memories matching filters (Store.find); live ones only unless --all.

    Example:

        memcommit find --kind fact --scope planner --limit 20
    """
    with opened(store_target) as store:
        view = store.tenant(tenant)
        found = view.find(
            kinds=kinds or None, scopes=scopes or None, sessions=sessions or None, key=key,
            tiers=tiers or None, trace=trace, live=not everything, limit=limit,
            as_of=resolve_as_of(view, as_of_text),
        )  # fmt: skip
        hint = "" if found else unknown_tenant(store, tenant)
    if as_json:
        print_json(found)
        return
    out = console()
    out.print(memory_table(found, wide=wide))
    out.print(f"{count(len(found), 'memory', 'memories')} in tenant {tenant!r}{hint}")


@main.command("log")
@click.option("--limit", type=int, help="At most this many commits.")
@as_of_option
@tenant_option
@store_option
@wide_option
@json_option
@handle_errors
def log_cmd(
    limit: int | None, as_of_text: str | None, tenant: str, store_target: str, wide: bool,
    as_json: bool,
) -> None:  # fmt: skip
    """List commits, newest first (Store.log).

    Example:

        memcommit log --limit 10
    """
    with opened(store_target) as store:
        view = store.tenant(tenant)
        commits = view.log(limit=limit, as_of=resolve_as_of(view, as_of_text))
        hint = "" if commits else unknown_tenant(store, tenant)
    if as_json:
        print_json(commits)
        return
    out = console()
    out.print(commit_table(commits, wide=wide))
    out.print(f"{count(len(commits), 'commit')} that change tenant {tenant!r}{hint}")


def unknown_tenant(store: Any, tenant: str) -> str:
    """``; the store has no tenant 'acem' (its tenants: acme)``, or "" for a known tenant."""
    names = store.tenants()
    if tenant in names:
        return ""
    if not names:
        return "; the store has no memories yet"
    near = difflib.get_close_matches(tenant, names, n=1)
    guess = f"; did you mean {near[0]!r}?" if near else ""
    return f"; the store has no tenant {tenant!r} (its tenants: {', '.join(names)}){guess}"


@main.command("tenants")
@store_option
@json_option
@handle_errors
def tenants_cmd(store_target: str, as_json: bool) -> None:
    """List the store's tenants, the names --tenant takes (Store.tenants).

    Example:

        memcommit tenants --store agent.db
    """
    with opened(store_target) as store:
        names = store.tenants()
    if as_json:
        print_json(names)
        return
    out = console()
    for name in names:
        out.print(name, markup=False, highlight=False)
    out.print(count(len(names), "tenant"))


@main.command("show")
@click.argument("commit")
@tenant_option
@store_option
@wide_option
@json_option
@handle_errors
def show_cmd(commit: str, tenant: str, store_target: str, wide: bool, as_json: bool) -> None:
    """Show one commit and its changes (Store.show), by seq or id.

    Example:

        memcommit show 3
    """
    with opened(store_target, tenant) as view:
        found = view.show(resolve_as_of(view, commit, field="commit"))
    if as_json:
        print_json(found)
        return
    out = console()
    out.print(commit_line(found), markup=False)
    out.print(changes_table(found.changes, wide=wide))


@main.command("history")
@click.argument("memory_id")
@tenant_option
@store_option
@wide_option
@json_option
@handle_errors
def history_cmd(memory_id: str, tenant: str, store_target: str, wide: bool, as_json: bool) -> None:
    """Show every version of one memory, oldest first (Store.history).

    Example:

        memcommit history 01a228c9a9fb154e01830803e85a0f72
    """
    with opened(store_target, tenant) as view:
        versions = view.history(resolve_memory(view, memory_id))
    if as_json:
        print_json(versions)
        return
    console().print(memory_table(versions, wide=wide, versions=True))


@main.command("diff")
@click.argument("a")
@click.argument("b")
@tenant_option
@store_option
@wide_option
@json_option
@handle_errors
def diff_cmd(a: str, b: str, tenant: str, store_target: str, wide: bool, as_json: bool) -> None:
    """List the changes after commit A up to commit B (Store.diff); seqs, ids or times.

    Example:

        memcommit diff 2 5
    """
    with opened(store_target, tenant) as view:
        changes = view.diff(resolve_as_of(view, a, field="a"), resolve_as_of(view, b, field="b"))
    if as_json:
        print_json(changes)
        return
    console().print(changes_table(changes, wide=wide))


@main.command("check")
@store_option
@json_option
@handle_errors
def check_cmd(store_target: str, as_json: bool) -> None:
    """Verify the store's invariants (Store.check); exit code 1 if any is broken.

    Example:

        memcommit check --store agent.db
    """
    with opened(store_target) as store:
        report = store.check()
    if as_json:
        print_json({"ok": report.ok, "problems": list(report.problems)})
    elif report.ok:
        console().print("ok: every invariant holds")
    else:
        for problem in report.problems:
            console().print(f"[red]problem[/red] {problem}")
    if not report.ok:
        raise SystemExit(1)
