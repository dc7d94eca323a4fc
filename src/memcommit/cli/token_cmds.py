"""``memcommit token create | list | revoke``: the bearer tokens of ``memcommit mcp --tokens``.

Each command calls one method of `memcommit.interfaces.tokens.Tokens`. A new
token is printed once, on stdout, and never again: the store keeps its digest.
"""

from __future__ import annotations

from dataclasses import asdict

import click

from memcommit.cli.app import console, handle_errors, json_option, main, print_json, store_option
from memcommit.cli.opening import opened
from memcommit.cli.tables import count, table, when
from memcommit.interfaces.tokens import Tokens


@main.group("token")
def token_group() -> None:
    """Bearer tokens for the served MCP server: each opens one tenant's memory.

    Example:

        memcommit token create --tenant team-a --label ci-runner-1
    """


@token_group.command("create")
@click.option("--tenant", required=True, help="The one tenant the token opens.")
@click.option("--label", help="What the token is for (a host, a person), shown by list.")
@store_option
@json_option
@handle_errors
def create_cmd(tenant: str, label: str | None, store_target: str, as_json: bool) -> None:
    """Make a token for one tenant (Tokens.create); it is printed this once, never stored.

    Give it to one host as "Authorization: Bearer <token>". Only its SHA-256
    digest is kept; lose it and make another (and revoke the lost one).

    Example:

        memcommit token create --tenant team-a --label ci-runner-1
    """
    with opened(store_target, create=True) as store:
        issued = Tokens(store).create(tenant, label=label)
    if as_json:
        print_json({"token": issued.token, **asdict(issued.info)})
        return
    click.echo(issued.token)
    click.echo(
        f"token {issued.info.id} for tenant {tenant!r}: shown this once, keep it secret",
        err=True,
    )


@token_group.command("list")
@click.option("--tenant", help="Only the tokens of this tenant.")
@store_option
@json_option
@handle_errors
def list_cmd(tenant: str | None, store_target: str, as_json: bool) -> None:
    """List the tokens (Tokens.list), revoked ones too: ids, tenants, labels, never secrets.

    Example:

        memcommit token list --tenant team-a
    """
    with opened(store_target) as store:
        found = Tokens(store).list(tenant=tenant)
    if as_json:
        print_json(found)
        return
    shown = table("id", "tenant", "label", "created", "revoked")
    for info in found:
        label = info.label or ""
        shown.add_row(info.id, info.tenant, label, when(info.created), when(info.revoked))
    out = console()
    out.print(shown)
    out.print(count(len(found), "token"))


@token_group.command("revoke")
@click.argument("token_id")
@store_option
@json_option
@handle_errors
def revoke_cmd(token_id: str, store_target: str, as_json: bool) -> None:
    """Revoke the token TOKEN_ID (Tokens.revoke): its next request gets 401.

    Example:

        memcommit token revoke 3f2a9c0d11e4b7a8
    """
    with opened(store_target, write=True) as store:
        info = Tokens(store).revoke(token_id)
    if as_json:
        print_json(info)
        return
    click.echo(f"revoked token {info.id} of tenant {info.tenant!r} at {when(info.revoked)}")
