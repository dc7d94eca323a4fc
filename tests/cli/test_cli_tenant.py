"""One tenant rule: every command that works in a tenant takes --tenant with the same default."""

from __future__ import annotations

import click
from click.testing import CliRunner

from memcommit.cli import main
from memcommit.cli.docs import commands, root_context

#: Commands over the whole store (or no store), which no tenant narrows.
STORE_WIDE = {
    "memcommit check", "memcommit demo", "memcommit export", "memcommit import",
    "memcommit init", "memcommit migrate", "memcommit tenants", "memcommit tiers simulate",
    "memcommit token revoke", "memcommit verify", "memcommit witness", "memcommit workbench",
}  # fmt: skip
#: Store-wide commands whose --tenant names the tenant of a token they make or list: no default.
TOKEN_TENANT = {"memcommit token create", "memcommit token list"}


def tenant_options() -> dict[str, click.Option | None]:
    root = root_context()
    found = {}
    for command, ctx in commands(root.command, root):
        if isinstance(command, click.Group):
            continue
        options = [p for p in command.params if "--tenant" in getattr(p, "opts", ())]
        found[ctx.command_path] = options[0] if options else None
    return found


def test_every_tenant_command_has_the_same_tenant_option(monkeypatch):
    monkeypatch.delenv("MEMCOMMIT_TENANT", raising=False)
    options = tenant_options()
    without = {path for path, option in options.items() if option is None}
    assert without == STORE_WIDE
    working = [o for path, o in options.items() if o and path not in TOKEN_TENANT]
    shown = {(o.get_default(click.Context(main)), o.show_default) for o in working}
    assert shown == {("default", "default or $MEMCOMMIT_TENANT")}
    # a token's tenant is stated, never taken from $MEMCOMMIT_TENANT
    assert not any(callable(options[path].default) for path in TOKEN_TENANT)


def test_the_environment_sets_the_tenant_everywhere(tmp_path, monkeypatch):
    path = str(tmp_path / "t.db")
    monkeypatch.setenv("MEMCOMMIT_TENANT", "acme")
    runner = CliRunner()
    assert runner.invoke(main, ["add", "Acme's fact", "--store", path]).exit_code == 0
    assert "Acme's fact" in runner.invoke(main, ["find", "--store", path]).stdout
    assert "1 selected" in runner.invoke(main, ["recall", "acme fact", "--store", path]).stdout
    monkeypatch.delenv("MEMCOMMIT_TENANT")
    assert "0 memories in tenant 'default'" in runner.invoke(main, ["find", "--store", path]).stdout


def test_a_tenant_given_with_all_tenants_is_refused_on_every_command(tmp_path, monkeypatch):
    """--all-tenants works over every tenant: a --tenant beside it is a usage error, never
    silently dropped (from $MEMCOMMIT_TENANT it is only the default, and goes)."""
    root = root_context()
    both = [  # each command's words, and a value for each argument it requires
        ctx.command_path.split()[1:]
        + ["x" for p in command.params if isinstance(p, click.Argument) and p.required]
        for command, ctx in commands(root.command, root)
        if any("--all-tenants" in getattr(p, "opts", ()) for p in command.params)
    ]
    assert ["index"] in both and ["embed"] in both and len(both) >= 5
    path = str(tmp_path / "t.db")
    runner = CliRunner()
    assert runner.invoke(main, ["init", "--store", path]).exit_code == 0
    for words in both:
        result = runner.invoke(main, [*words, "--store", path, "--tenant", "a", "--all-tenants"])
        assert result.exit_code == 2, (words, result.output)
        assert "give --tenant or --all-tenants, not both" in result.output
    monkeypatch.setenv("MEMCOMMIT_TENANT", "a")
    assert runner.invoke(main, ["index", "--store", path, "--all-tenants"]).exit_code == 0
