"""``memcommit index``: recall's snapshots brought current for a writer that leaves them."""

from __future__ import annotations

import memcommit
from memcommit.recall.index import live


def written_without_snapshots(target: str, tenants: dict[str, int]) -> None:
    """``tenants[name]`` memories in each tenant, by a writer that keeps no snapshot."""
    if target.startswith("postgresql://"):
        url, _, schema = target.partition("?schema=")
        store = memcommit.open(url, schema=schema, keep_snapshots=False)
    else:
        store = memcommit.open(target, keep_snapshots=False)
    with store, store.commit(message="bulk") as tx:
        for tenant, count in tenants.items():
            for i in range(count):
                tx.add(f"note {i} about topic {i % 7}", tenant=tenant)


def test_index_writes_the_tenants_snapshot_then_finds_it_current(cli):
    written_without_snapshots(cli.target, {"default": 300, "other": 280})
    (first,) = cli.json("index")
    assert (first["tenant"], first["memories"], first["written"]) == ("default", 300, True)
    assert first["current"] is True
    assert first["opened"] == "built: snapshot missing"
    (again,) = cli.json("index")
    assert (again["written"], again["current"]) == (False, True)
    assert again["opened"] == "loaded, caught up 0 memories"
    every = cli.json("index", "--all-tenants")
    assert [(k["tenant"], k["written"]) for k in every] == [("default", False), ("other", True)]
    line = cli("index").stdout
    assert line.startswith("default: 300 memories, already current (loaded, caught up 0")


def test_a_snapshot_stays_current_while_only_other_tenants_commit(cli):
    """Current means holding every commit of its own tenant: a run after another tenant's
    commit leaves the file alone (a reader catches up on nothing), one after its own rewrites."""
    written_without_snapshots(cli.target, {"default": 300, "other": 280})
    cli.json("index", "--all-tenants")
    place = {k["tenant"]: k for k in cli.json("index", "--all-tenants")}
    assert all(k["current"] and not k["written"] for k in place.values())
    cli("add", "a note of another tenant", tenant="other")
    after_other = {k["tenant"]: k for k in cli.json("index", "--all-tenants")}
    assert (after_other["default"]["written"], after_other["default"]["current"]) == (False, True)
    assert after_other["default"]["opened"] == "loaded, caught up 0 memories"
    assert after_other["other"]["written"] and after_other["other"]["memories"] == 281
    cli("add", "a note of its own")
    (own,) = cli.json("index")
    assert (own["written"], own["current"], own["memories"]) == (True, True, 301)
    assert own["opened"] == "loaded, caught up 1 memories"


def test_index_says_when_a_tenant_is_too_small_for_a_snapshot(cli, monkeypatch):
    monkeypatch.setattr(live, "SNAPSHOT_MIN", 256)  # (tests keep snapshots of any size)
    written_without_snapshots(cli.target, {"default": 255})
    out = cli("index").stdout
    assert out == "tenant 'default' holds fewer than the 256 memories a snapshot is kept for\n"
    assert cli.json("index", tenant="nobody") == []


def test_index_fails_when_the_folder_takes_no_snapshot(cli, tmp_path, monkeypatch):
    written_without_snapshots(cli.target, {"default": 300})
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("MEMCOMMIT_INDEX_DIR", str(blocked))
    out = cli("index", code=1).stdout
    assert out.startswith("default: 300 memories, not kept (built: snapshot unreadable")
