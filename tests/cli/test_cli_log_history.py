"""What log, history and a mistyped tenant tell: messages, changes per operation, fields."""

from __future__ import annotations


def test_log_says_what_each_commit_did(cli):
    mid = cli.json("add", "Deploys happen on Tuesdays", "--kind", "procedure", tenant="acme")
    mid = mid["memory"]["id"]
    cli("update", mid, "--content", "Deploys happen on Wednesdays", tenant="acme")
    cli("archive", mid, tenant="acme")
    log = cli.json("log", tenant="acme")
    assert log[-1]["message"] == "add procedure"
    shown = cli("log", tenant="acme").stdout
    assert "1 archive" in shown and "1 update" in shown and "1 add" in shown


def test_history_names_the_fields_each_version_changed(cli):
    mid = cli.json("add", "Deploys happen on Tuesdays", tenant="acme")["memory"]["id"]
    cli("update", mid, "--content", "Deploys happen on Wednesdays", "--importance", "0.9",
        tenant="acme")  # fmt: skip
    cli("archive", mid, tenant="acme")
    rows = [line.split()[:4] for line in cli("history", mid, tenant="acme").stdout.splitlines()]
    assert ["1", "added", "fact", "shared"] in rows
    assert ["2", "content,", "importance", "fact"] in rows
    assert ["3", "tier", "fact", "shared"] in rows


def test_a_mistyped_tenant_gets_the_tenants_that_exist(cli):
    cli("add", "The user drinks tea", tenant="acme")
    cli("add", "The user drinks coffee", tenant="globex")
    for command in ("find", "log"):
        said = " ".join(cli(command, tenant="acem").stdout.split())
        assert (
            "the store has no tenant 'acem' (its tenants: acme, globex); did you mean 'acme'?"
            in said
        )
    assert "its tenants" not in cli("find", tenant="acme").stdout
    assert cli.json("tenants") == ["acme", "globex"]
    assert cli("tenants").stdout.split() == ["acme", "globex", "2", "tenants"]


def test_default_messages_never_quote_what_a_purge_erases(cli):
    """A commit message outlives a purge of the memory it added, so the CLI's defaults name
    the operation and kind, never the text (the MCP tools' messages already do not)."""
    added = cli.json("add", "my card is 4111-zqxcardsecret")["memory"]["id"]
    trace = cli.json("trace", "begin", "call zqxtasksecret about the divorce")["trace"]
    for memory_id in (added, trace):
        cli("forget", memory_id, "--purge", "--yes")
    messages = [c["message"] for c in cli.json("log")]
    assert messages[-2:] == ["begin trace", "add fact"]  # newest first
    assert not [m for m in messages if "zqx" in m]
    shown = [cli("show", str(seq)).stdout for seq in range(1, len(messages) + 1)]
    assert not [text for text in shown if "zqx" in text]
