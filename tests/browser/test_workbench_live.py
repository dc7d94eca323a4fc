"""The workbench over a real SQLite store: tenants, free text, paging, read-only, no HTML."""

from __future__ import annotations

import json
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from workbench_helpers import open_page, running, settle

import memcommit
from memcommit.tiers.stats import TierStats
from memcommit.workbench import StoreSource, make_server

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)
IMG = '<img src=x onerror="window.__pwned = 1">payload image'
SCRIPT = "<script>window.__pwned = 2</script> payload script"
FILLER = 250


def build_store(path: Path) -> None:
    """Two tenants; Team A holds the hostile texts and enough rows to need paging."""
    store = memcommit.open(str(path), clock=lambda: NOW)
    try:
        with store.commit(message="seed", author="test", now=NOW - timedelta(hours=5)) as tx:
            tx.add(IMG, id="x-img", tenant="alpha", session="s1")
            tx.add(SCRIPT, id="x-script", tenant="alpha", session="s1")
            tx.add("payload notes for beta only", id="b-1", tenant="beta", session="s9")
            for i in range(FILLER):
                tx.add(
                    f"deployment note {i} about payload queue",
                    id=f"a-{i:03d}",
                    tenant="alpha",
                    kind="fact" if i % 2 else "event",
                    session="s1" if i % 3 else "s2",
                )
        with store.commit(message="beta only", author="test", now=NOW - timedelta(hours=4)) as tx:
            tx.add("beta private payload", id="b-2", tenant="beta", scope="private")
        # Counters a TieredMemory would have persisted: the workbench only reads them.
        stats = TierStats()
        stats.of(("alpha", "shared")).hits = 3
        stats.of(("alpha", "shared")).misses = 1
        stats.of(("beta", "private")).hits = 7
        stats.save(store)
    finally:
        store.close()


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """A served SQLite store, and a way to read its head commit afterwards."""
    path = tmp_path_factory.mktemp("live") / "memories.db"
    build_store(path)
    source = StoreSource(memcommit.open(str(path), read_only=True), clock=lambda: NOW)
    server = make_server(source)
    for url in running(server):
        yield url, path
    source.close()


def to_final_stage(pg) -> None:
    while pg.evaluate("document.body.dataset.stage") != "3":
        pg.get_by_role("button", name="Next stage", exact=True).click()


def api(url: str, path: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url + path.lstrip("/")) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def test_live_config_lists_the_store_tenants(live) -> None:
    url, _ = live
    status, config = api(url, "/api/config")
    assert status == 200 and config["mode"] == "live"
    assert [t["id"] for t in config["tenants"]] == ["alpha", "beta"]


def test_live_recall_is_tenant_scoped_and_paged(live) -> None:
    url, _ = live
    query = "tenant=alpha&query=payload+queue&budget=30&max_records=5&store=all"
    status, selection = api(url, "/api/recall?" + query)
    assert status == 200 and len(selection["selected"]) == 5
    query = "/api/rows?" + query
    status, first = api(url, query + "&limit=100")
    assert status == 200
    assert first["total"] == FILLER + 2 and len(first["rows"]) == 100
    assert all(row["tenant"] == "alpha" for row in first["rows"])
    assert [r["id"] for r in first["rows"][:5]] == selection["selected"]  # selected first
    _, third = api(url, query + "&limit=100&offset=200")
    assert len(third["rows"]) == FILLER + 2 - 200
    _, excluded = api(url, query + "&outcome=excluded&limit=10")
    assert excluded["total"] == FILLER + 2 - 5
    assert {r["outcome"] for r in excluded["rows"]} == {"excluded"}


def test_live_pools_reserve_room_for_each_kind(live) -> None:
    url, _ = live
    query = "tenant=alpha&query=payload+queue&budget=40&max_records=6"
    pools = "facts:20:3:fact,note events:20:3:event"
    status, selection = api(url, f"/api/recall?{query}&pools={pools.replace(' ', '+')}")
    assert status == 200
    by_pool = {m["pool"] for m in selection["selected_memories"]}
    assert by_pool == {"facts", "events"}
    # the pools leave kinds out (corrections, ...): always-scope memories of those would load
    # in the implicit first pool "always", which has no room for anything else
    assert set(selection["context"]["used"]) == {"always", "facts", "events"}
    assert selection["context"]["used"]["always"] == 0
    kinds = {m["pool"]: set() for m in selection["selected_memories"]}
    for memory in selection["selected_memories"]:
        kinds[memory["pool"]].add(memory["kind"])
    assert kinds == {"facts": {"fact"}, "events": {"event"}}
    status, body = api(url, f"/api/recall?{query}&pools=big:500:1")
    assert status == 400 and body["error"]["field"] == "pools"


def test_live_log_and_tiers_show_only_the_asked_tenant(live) -> None:
    url, _ = live
    _, alpha_log = api(url, "/api/log?tenant=alpha")
    assert [(c["message"], c["changes"]) for c in alpha_log["commits"]] == [("seed", FILLER + 2)]
    _, beta_log = api(url, "/api/log?tenant=beta")
    assert [(c["message"], c["changes"]) for c in beta_log["commits"]] == [
        ("beta only", 1),
        ("seed", 1),
    ]
    _, alpha = api(url, "/api/tiers?tenant=alpha")
    assert [(p["partition"], p["counts"], p["hits"]) for p in alpha["partitions"]] == [
        ("alpha / shared", {"short": FILLER + 2}, 3)
    ]
    _, beta = api(url, "/api/tiers?tenant=beta")
    assert [(p["partition"], p["counts"], p["hits"]) for p in beta["partitions"]] == [
        ("beta / private", {"short": 1}, 7),
        ("beta / shared", {"short": 1}, 0),
    ]
    for endpoint in ("/api/log", "/api/tiers"):
        for query in ("", "?tenant=gamma", "?tenant=alpha&tenant=beta"):
            status, body = api(url, endpoint + query)
            assert status == 400 and body["error"]["field"] == "tenant", (endpoint, query)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ("query=", "query"),
        ("query=x&kinds=gossip", "kinds"),
        ("query=x&tiers=hot", "tiers"),
        ("query=x&tiers=", "tiers"),
        ("query=x&pools=a:1", "pools"),
        ("query=x&previous=0", "previous"),
        ("query=x&tenant=gamma", "tenant"),
    ],
)
def test_live_bad_parameters_name_the_field(live, params: str, field: str) -> None:
    url, _ = live
    for endpoint in ("/api/recall?", "/api/rows?"):
        status, body = api(url, endpoint + params)
        assert status == 400 and body["error"]["field"] == field


@pytest.mark.browser
def test_live_page_renders_untrusted_text_as_text_and_never_writes(browser, live) -> None:
    url, path = live
    with memcommit.open(str(path)) as before_store:
        head_before = before_store.head.seq
    ctx = browser.new_context()
    try:
        pg = ctx.new_page()
        dialogs: list[str] = []
        pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        open_page(pg, url)
        pg.get_by_label("Question", exact=True).fill("payload image script")
        settle(pg)
        pg.get_by_label("Maximum retrieved records", exact=True).fill("3")
        settle(pg)
        to_final_stage(pg)
        cells = pg.locator("#records tbody td.text .content").all_text_contents()
        assert IMG in cells and SCRIPT in cells
        tray = pg.locator("#tray").text_content()
        assert "<img" in tray or "<script>" in tray  # shown literally in the tray too
        assert pg.evaluate("window.__pwned") is None
        assert pg.locator("main img, main script").count() == 0
        assert dialogs == []
        assert pg.get_by_text("1–100 of 252").count() == 1
        pg.get_by_role("button", name="Next page", exact=True).click()
        settle(pg)
        assert pg.get_by_text("101–200 of 252").count() == 1
        pg.get_by_label("event", exact=True).uncheck()  # the live Kinds boxes
        settle(pg)
        to_final_stage(pg)
        passed = pg.locator("#diagram .lane[data-lane='1'] .count").text_content()
        assert passed == f"({FILLER // 2 + 2})"  # the events were filtered out
        pg.get_by_label("Scopes", exact=True).fill("planner")
        settle(pg)
        to_final_stage(pg)
        assert pg.locator("#tray li[data-id]").count() == 0
        assert "other_scope" in pg.locator("#records tbody").text_content()
        log_rows = pg.locator("#log tbody tr")
        log_rows.first.wait_for()
        assert log_rows.count() == 1 and "seed" in log_rows.first.text_content()
        tiers = pg.locator("#tier-table tbody tr").first.locator("td").all_text_contents()
        assert tiers == ["alpha / shared", "252", "0", "0", "0", "3", "0", "1", "0.75"]
    finally:
        ctx.close()
    with memcommit.open(str(path)) as after_store:
        assert after_store.head.seq == head_before
        assert len(after_store.log()) == 2


def test_a_purge_by_another_process_leaves_no_cached_answer(tmp_path) -> None:
    """The workbench hears only its own Store's commits; another process's purge must
    still reach every answer it gives, cached or not (and a new tenant its list)."""
    path = tmp_path / "m.db"
    with memcommit.open(str(path)) as writer, writer.commit(message="seed", now=NOW) as tx:
        secret = tx.add("the vault phrase is zqxworkbenchsecret", tenant="t")
    source = StoreSource(memcommit.open(str(path), read_only=True), clock=lambda: NOW)
    try:
        asked = {"tenant": ["t"], "query": ["vault phrase"]}
        assert "zqxworkbenchsecret" in json.dumps(source.recall(asked))
        other = memcommit.open(str(path))  # another process, as far as source knows
        with other, other.commit(message="erase", now=NOW) as tx:
            tx.purge(secret.id)
            tx.add("a note", tenant="u")
        for answer in (source.recall(asked), source.rows(asked)):
            assert "zqxworkbenchsecret" not in json.dumps(answer)
        assert [t["id"] for t in source.config({})["tenants"]] == ["t", "u"]
    finally:
        source.close()


def test_a_lost_commit_whose_seq_was_taken_again_leaves_no_cached_answer(tmp_path) -> None:
    """A commit can be seen, then lost (a crash before it was durable, a restore), and the
    next commit take its seq: the cache follows the commit id, not only the seq."""
    import sqlite3

    path, backup = tmp_path / "m.db", tmp_path / "backup.db"
    writer = memcommit.open(str(path))
    with writer.commit(message="seed", now=NOW) as tx:
        tea = tx.add("the user drinks tea", tenant="t")
    with sqlite3.connect(path) as src, sqlite3.connect(backup) as dst:
        src.backup(dst)
    with writer.commit(message="to be lost", now=NOW) as tx:
        tx.update(tea.id, content="the user drinks coffee")
    source = StoreSource(memcommit.open(str(path), read_only=True), clock=lambda: NOW)
    try:
        asked = {"tenant": ["t"], "query": ["the user drinks"]}
        assert "coffee" in json.dumps(source.recall(asked))
        with sqlite3.connect(backup) as src, sqlite3.connect(path) as dst:
            src.backup(dst)  # the second commit is gone
        with writer.commit(message="another second commit", now=NOW) as tx:
            tx.add("an unrelated note", tenant="t")
        assert "coffee" not in json.dumps(source.recall(asked))
    finally:
        source.close()
        writer.close()
