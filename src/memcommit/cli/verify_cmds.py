"""``memcommit verify`` / ``memcommit witness``: is the stored log the log that was written?"""

from __future__ import annotations

import click

from memcommit.cli.app import console, handle_errors, json_option, main, print_json, store_option
from memcommit.cli.opening import opened
from memcommit.cli.progress import progress_bar


@main.command("verify")
@click.option(
    "--since",
    help="Check only the commits after this one: a seq, or a witness line verified before.",
)
@click.option(
    "--expect",
    help="A witness line kept from earlier: fail if the store is behind it or forked from it.",
)
@store_option
@json_option
@handle_errors
def verify_cmd(store_target: str, since: str | None, expect: str | None, as_json: bool) -> None:
    """Walk the hash chain (Store.verify); exit code 1 if a commit or version does not match.

    Every version's digest is recomputed from its fields and every commit's hash
    from its fields, its parent's hash and its versions' digests. The first
    problem is named with how it fails: edited, missing, reordered, inserted,
    or (with --expect) behind or forked. Writers go on while it runs.

    Example:

        memcommit verify --store agent.db --expect "$(cat agent.witness)"
    """
    since_ref: int | str | None = int(since) if since is not None and since.isdigit() else since
    with opened(store_target) as store, progress_bar("verifying", as_json=as_json) as progress:
        report = store.verify(since=since_ref, expect=expect, progress=progress)
    if as_json:
        print_json(
            {
                "ok": report.ok,
                "after": report.after,
                "commits": report.commits,
                "versions": report.versions,
                "head": str(report.head),
                "sealed_upto": report.sealed_upto,
                "problems": [{**vars(p), "text": str(p)} for p in report.problems],
            }
        )
    elif report.ok:
        console().print(
            f"ok: {report.commits} commits and {report.versions} versions after commit"
            f" {report.after} verify; head {report.head}"
        )
    else:
        for problem in report.problems:
            console().print(f"[red]problem[/red] {problem}", soft_wrap=True)
    if not report.ok:
        raise SystemExit(1)


@main.command("witness")
@store_option
@json_option
@handle_errors
def witness_cmd(store_target: str, as_json: bool) -> None:
    """Print the newest commit's witness line (Store.witness), to keep outside the store.

    Give it back later to ``memcommit verify --expect``: a store rolled back
    behind it, or rewritten from it on, fails.

    Example:

        memcommit witness --store agent.db > agent.witness
    """
    with opened(store_target) as store:
        w = store.witness()
    if as_json:
        print_json({"seq": w.seq, "id": w.id, "hash": w.hash, "text": str(w)})
    else:
        click.echo(str(w))
