"""``--embedder`` where the CLI opens a store, and ``memcommit embed``: resumable, per tenant."""

from __future__ import annotations

import memcommit


def open_target(target: str):
    if target.startswith("postgresql://"):
        url, _, schema = target.partition("?schema=")
        return memcommit.open(url, schema=schema)
    return memcommit.open(target)


def stored(target: str, tenant: str = "default") -> tuple[str, ...]:
    with open_target(target) as store:
        return store.vectors("hash", tenant=tenant).ids


def test_a_write_with_embedder_stores_the_vector_and_embed_fills_the_rest(cli):
    first = cli.json("add", "her new Civic is red", "--embedder", "hash")["memory"]["id"]
    assert stored(cli.target) == (first,)
    second = cli.json("add", "the weather is nice")["memory"]["id"]  # no embedder: no vector
    assert stored(cli.target) == (first,)
    report = cli.json("embed", "--embedder", "hash")
    assert (report["embedded"], report["remaining"]) == (1, 0)
    assert report["embedder"] == "hash-ngram-v1/64"
    assert stored(cli.target) == tuple(sorted([first, second]))
    again = cli("embed", "--embedder", "hash").stdout
    assert again.startswith("embedded 0 memories with hash-ngram-v1/64")


def test_embed_works_in_one_tenant_unless_asked_for_all(cli):
    cli("add", "alice's note", tenant="alice")
    cli("add", "bob's note", tenant="bob")
    assert cli.json("embed", "--embedder", "hash", tenant="alice")["embedded"] == 1
    assert stored(cli.target, "bob") == ()
    assert cli.json("embed", "--embedder", "hash", "--all-tenants")["embedded"] == 1
    assert len(stored(cli.target, "bob")) == 1


def test_embed_resumes_where_a_limited_run_stopped(cli):
    for n in range(5):
        cli("add", f"note {n}")
    assert cli.json("embed", "--embedder", "hash", "--limit", "2")["remaining"] == 3
    assert cli.json("embed", "--embedder", "hash", "--batch-size", "2")["embedded"] == 3


def test_the_embedder_comes_from_the_environment_too(cli, monkeypatch):
    cli("add", "from the environment")
    monkeypatch.setenv("MEMCOMMIT_EMBEDDER", "hash")
    assert cli.json("embed")["embedded"] == 1


def test_a_bad_or_missing_embedder_is_one_line_naming_it(cli):
    cli("add", "a note")
    missing = cli("embed", code=1)
    assert missing.stderr.startswith("error: embedder=None") and "--embedder" in missing.stderr
    bad = cli("embed", "--embedder", "nope", code=1)
    assert bad.stderr.startswith("error: embedder='nope': unknown embedder")
    assert stored(cli.target) == ()
