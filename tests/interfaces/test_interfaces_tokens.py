"""Bearer tokens (`memcommit.interfaces.tokens.Tokens`) on both backends, and their CLI."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timedelta

import pytest
from interfaces_mcp_client import MEMCOMMIT, clean_env

from memcommit.errors import InvalidInput, NotFound
from memcommit.interfaces.tokens import NAMESPACE, Tokens, digest


def test_a_token_opens_its_tenant_until_it_is_revoked(make_store, now):
    store = make_store("tokens.db")
    tokens = Tokens(store)
    a = tokens.create("team-a", label="ci runner", now=now)
    b = tokens.create("team-b", now=now + timedelta(seconds=1))
    assert a.token.startswith("mct_") and a.token != b.token
    assert tokens.check(a.token).tenant == "team-a"
    assert tokens.check(b.token) == b.info
    assert [t.id for t in tokens.list()] == [a.info.id, b.info.id]
    assert tokens.list(tenant="team-b") == [b.info]
    assert a.info.created == now and a.info.label == "ci runner" and a.info.revoked is None

    later = now + timedelta(hours=1)
    revoked = tokens.revoke(a.info.id, now=later)
    assert revoked.revoked == later
    assert tokens.revoke(a.info.id, now=later + timedelta(hours=1)).revoked == later  # kept
    assert tokens.check(a.token) is None
    assert tokens.check(b.token).tenant == "team-b"
    assert tokens.list(tenant="team-a") == [revoked]  # listed still, as revoked


def test_only_an_exact_token_is_let_in(make_store):
    store = make_store("tokens.db")
    issued = Tokens(store).create("team-a")
    token = issued.token
    flipped = token[:-1] + ("0" if token[-1] != "0" else "1")
    other_id = token[:4] + "0" * 16 + token[20:]
    for wrong in (flipped, other_id, token + "0", token[:-1], token.upper(), "", "mct_", None, 7):
        assert Tokens(store).check(wrong) is None, wrong


def test_tokens_are_stored_as_digests_out_of_every_tenants_reach(make_store):
    store = make_store("tokens.db")
    issued = Tokens(store).create("team-a")
    (record,) = store.state_items(NAMESPACE).values()
    assert record["digest"] == digest(issued.token)
    assert issued.token not in json.dumps(record)
    assert issued.token.split("_")[2] not in json.dumps(record)  # nor the secret part
    assert store.tenant("team-a").state_items(NAMESPACE) == {}


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda t: t.create(""), "tenant"),
        (lambda t: t.create(None), "tenant"),
        (lambda t: t.create("team-a", label=""), "label"),
        (lambda t: t.create("team-a", label="x" * 201), "label"),
        (lambda t: t.create("team-a", now=datetime(2026, 1, 1)), "now"),
        (lambda t: t.revoke("not-an-id"), "token_id"),
        (lambda t: t.revoke("0123456789abcdef"), "token_id"),
        (lambda t: t.revoke("0123456789abcdef", now="today"), "token_id"),
    ],
)
def test_bad_input_is_refused_naming_the_field_and_changes_nothing(make_store, call, field):
    store = make_store("tokens.db")
    tokens = Tokens(store)
    kept = tokens.create("team-a")
    before = store.state_items(NAMESPACE)
    with pytest.raises((InvalidInput, NotFound)) as caught:
        call(tokens)
    assert caught.value.field == field
    assert store.state_items(NAMESPACE) == before
    assert tokens.check(kept.token).tenant == "team-a"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*MEMCOMMIT, "token", *args], capture_output=True, text=True, env=clean_env(), timeout=60
    )


def test_the_cli_prints_a_token_once_and_lists_and_revokes_by_id(tmp_path):
    path = str(tmp_path / "agent.db")
    made = cli("create", "--tenant", "team-a", "--label", "host-1", "--store", path)
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    assert "keep it secret" in made.stderr and token not in made.stderr
    listed = cli("list", "--store", path)
    assert "host-1" in listed.stdout and token not in listed.stdout
    (info,) = json.loads(cli("list", "--store", path, "--json").stdout)
    assert info["tenant"] == "team-a" and info["revoked"] is None
    revoked = cli("revoke", info["id"], "--store", path, "--json")
    assert json.loads(revoked.stdout)["revoked"] is not None
    missing = cli("revoke", "0123456789abcdef", "--store", path)
    assert missing.returncode == 1
    assert missing.stderr == "error: token_id='0123456789abcdef': not found\n"
    unknown_store = cli("list", "--store", str(tmp_path / "none.db"))
    assert unknown_store.returncode == 1 and "Traceback" not in unknown_store.stderr
