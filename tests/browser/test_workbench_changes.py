"""The page over a store another process writes to, in Chromium: a table page never mixes two
recalls, a recall that saw new commits reads the tenants, log and tiers again, and the tray
stays bounded however much recall selects."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from workbench_helpers import open_page, running, settle

import memcommit
from memcommit.workbench import StoreSource, make_server

pytestmark = pytest.mark.browser

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)
NOTES = 150


@pytest.fixture
def live(tmp_path):
    """(url, path): a store of two tenants served read-only; tests write to it meanwhile."""
    path = tmp_path / "m.db"
    with memcommit.open(str(path)) as store, store.commit(message="seed", now=NOW) as tx:
        for i in range(NOTES):
            tx.add(f"deploy queue note {i} of alpha", tenant="alpha")
        tx.add("a note of beta", tenant="beta")
    source = StoreSource(memcommit.open(str(path), read_only=True), clock=lambda: NOW)
    for url in running(make_server(source)):
        yield url, path
    source.close()


def write(path: Path, tenant: str, texts: list[str], message: str = "other process") -> None:
    """A commit of another process (another Store object on the file)."""
    with memcommit.open(str(path)) as other, other.commit(message=message, now=NOW) as tx:
        for text in texts:
            tx.add(text, tenant=tenant)


def ask(pg, url: str, **fields: str) -> None:
    """Open the page, ask about the alpha notes, and pause at the final stage."""
    open_page(pg, url)
    pg.get_by_label("Question", exact=True).fill("deploy queue")
    settle(pg)
    for label, value in fields.items():
        pg.get_by_label(label, exact=True).fill(value)
        settle(pg)
    pg.get_by_role("button", name="Pause", exact=True).click()
    while pg.evaluate("document.body.dataset.stage") != "3":
        pg.get_by_role("button", name="Next stage", exact=True).click()


def test_a_page_after_a_commit_recalls_again_and_says_so(context, live) -> None:
    url, path = live
    pg = context.new_page()
    ask(pg, url)
    assert pg.locator("#page-info").text_content() == f"1–100 of {NOTES}"
    assert pg.locator("#store-changed").is_hidden()
    hot = [f"deploy queue deploy queue hot note {i}" for i in range(20)]
    write(path, "alpha", hot)
    pg.get_by_role("button", name="Next page", exact=True).click()
    settle(pg)
    notice = pg.locator("#store-changed")
    assert notice.is_visible() and "The store changed" in notice.text_content()
    assert pg.locator("#page-info").text_content() == f"1–100 of {NOTES + 20}"
    # the tray and the table come from one recall: the new notes are in both
    assert pg.evaluate("state.selection.result === state.rows.result")
    tray = pg.locator("#tray li[data-id] .tray-text").all_text_contents()
    assert tray and all(text in hot for text in tray)
    selected = pg.evaluate("state.rows.rows.filter(r => r.outcome === 'selected').map(r => r.id)")
    assert selected == pg.evaluate("state.selection.selected")
    pg.get_by_role("button", name="Next page", exact=True).click()  # now an ordinary page
    settle(pg)
    assert pg.locator("#page-info").text_content() == f"101–{NOTES + 20} of {NOTES + 20}"
    assert notice.is_hidden()


def test_a_recall_that_saw_new_commits_refreshes_tenants_log_and_tiers(context, live) -> None:
    url, path = live
    pg = context.new_page()
    ask(pg, url)
    pg.locator("#log tbody tr").first.wait_for()
    assert pg.locator("#tenant option").all_text_contents() == ["alpha", "beta"]
    write(path, "gamma", ["a first note of gamma"], message="gamma arrives")
    write(path, "alpha", ["deploy queue later note"], message="later for alpha")
    pg.get_by_label("Context word budget", exact=True).fill("150")  # any recall
    settle(pg)
    pg.wait_for_function(
        "() => Array.from(document.querySelectorAll('#tenant option')).length === 3"
    )
    assert pg.locator("#tenant option").all_text_contents() == ["alpha", "beta", "gamma"]
    assert pg.locator("#tenant").input_value() == "alpha"  # the choice is kept
    pg.wait_for_function(
        "() => document.querySelector('#log tbody td:nth-child(5)')?.textContent"
        " === 'later for alpha'"
    )
    counts = pg.locator("#tier-table tbody tr").first.locator("td").all_text_contents()
    assert counts[:2] == ["alpha / shared", str(NOTES + 1)]


def test_the_tray_draws_a_bounded_number_of_memories(context, live) -> None:
    url, _ = live
    pg = context.new_page()
    ask(pg, url, **{"Context word budget": "2000", "Maximum retrieved records": "60"})
    assert pg.evaluate("state.selection.selected.length") == 60
    assert pg.locator("#tray li[data-id]").count() == 50
    more = pg.locator("#tray li.more")
    assert more.text_content().startswith("… and 10 more selected")
