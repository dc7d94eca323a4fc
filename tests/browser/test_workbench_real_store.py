"""The workbench in Chromium over a store as an agent leaves it (tests/browser/real_store.py).

At 1280x900 and 390x844, at every stage: no card or lane heading is wider than its
box, every card shows its memory's text under a short id, ages read in human units,
the teaching bank's copy is gone, and the tray holds what recall() selects.
"""

from __future__ import annotations

import re

import pytest
import real_store
from workbench_helpers import open_page, running, settle

import memcommit
from memcommit.recall import Words, recall
from memcommit.workbench import StoreSource, make_server
from memcommit.workbench.api import Defaults

VIEWPORTS = {"desk": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}

#: Every card and lane heading whose content is wider than its box (none may be).
OVERFLOWING = """() => Array.from(document.querySelectorAll('#diagram .card, #diagram .lane h3'))
    .filter((node) => node.scrollWidth > node.clientWidth)
    .map((node) => node.dataset.id || node.textContent)"""

#: What each drawn card shows: its full id, the id on screen, its text and the text's height.
CARDS = """() => Array.from(document.querySelectorAll('#diagram .card')).map((card) => ({
    id: card.dataset.id,
    shown: card.querySelector('.card-id').textContent,
    text: card.querySelector('.card-text').textContent,
    height: card.querySelector('.card-text').getBoundingClientRect().height,
    meta: card.querySelector('.card-meta').textContent,
}))"""


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    """The store served read-only at its fixed now; yields the URL and every memory by id."""
    path = tmp_path_factory.mktemp("real") / "agent.db"
    real_store.build(path).close()
    store = memcommit.open(str(path), read_only=True)
    source = StoreSource(store, clock=lambda: real_store.NOW)
    texts = {m.id: m.content for m in store.find(live=False)}
    for url in running(make_server(source)):
        yield url, store, texts
    source.close()


def ask(pg, url: str, question: str = real_store.QUESTION) -> None:
    open_page(pg, url)
    pg.get_by_label("Question", exact=True).fill(question)
    settle(pg)
    pg.get_by_role("button", name="Pause", exact=True).click()


def check_stage(pg, texts: dict[str, str]) -> list[dict]:
    """The legibility rules on the stage on screen; returns its cards."""
    assert pg.evaluate(OVERFLOWING) == []
    assert pg.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    cards = pg.evaluate(CARDS)
    for card in cards:
        assert card["text"] == texts[card["id"]], card["id"]
        assert card["height"] > 0, card["id"]  # shown, not only in the DOM
        assert card["shown"].startswith("…") and card["id"].endswith(card["shown"][1:])
        # 7 digits or a few more, more only while the digits are all decimal (an id's random
        # tail is all decimal for 15 digits once in about 1,150 ids: it read as a commit seq)
        suffix = card["shown"][1:]
        assert len(suffix) < 15 or suffix[1:].isdecimal(), card["shown"]
        hours = re.search(r"([\d.]+) h old", card["meta"])
        assert hours is None or float(hours.group(1)) < 72, card["meta"]
        assert re.search(r"\d+ (min|h|days|months|years) old", card["meta"]), card["meta"]
    visible = pg.evaluate("document.body.innerText")
    assert "Reduce the word budget" not in visible and "Memory bank" not in visible
    assert "synthetic fixtures" not in visible and "Prediction" not in visible
    assert not re.search(r"\d{3,}(\.\d+)? h old", visible)  # "4398.9 h old"
    return cards


@pytest.mark.browser
@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_every_stage_is_legible_on_a_real_store(browser, real, size: str) -> None:
    url, _, texts = real
    ctx = browser.new_context(viewport=VIEWPORTS[size], is_mobile=size == "phone")
    try:
        pg = ctx.new_page()
        ask(pg, url)
        pg.get_by_role("button", name="Restart inspection", exact=True).click()
        pg.get_by_role("button", name="Pause", exact=True).click()
        seen = set()
        for stage in range(4):
            assert pg.evaluate("document.body.dataset.stage") == str(stage)
            cards = check_stage(pg, texts)
            assert cards, f"stage {stage} drew no card"
            seen.update(card["id"] for card in cards)
            if stage < 3:
                pg.get_by_role("button", name="Next stage", exact=True).click()
        assert len(seen) >= 8
        status = pg.locator("#status").text_content()
        assert "of 200 words used, plus 11 words of 1 correction that loads outside the budget" in (
            status
        )
        table_ids = pg.locator("#records tbody th.id").all_text_contents()
        assert table_ids and all(shown.startswith("…") for shown in table_ids)
        tray = pg.locator("#tray li[data-id]")
        for i in range(tray.count()):
            item = tray.nth(i)
            assert item.locator(".tray-text").text_content() == texts[item.get_attribute("data-id")]
    finally:
        ctx.close()


@pytest.mark.browser
def test_the_other_tenant_shows_only_its_own_memories(browser, real) -> None:
    url, store, texts = real
    ctx = browser.new_context(viewport=VIEWPORTS["desk"])
    try:
        pg = ctx.new_page()
        ask(pg, url)
        pg.get_by_label("Active tenant", exact=True).select_option("globex")
        settle(pg)
        pg.get_by_role("button", name="Pause", exact=True).click()
        while pg.evaluate("document.body.dataset.stage") != "3":
            pg.get_by_role("button", name="Next stage", exact=True).click()
        cards = check_stage(pg, texts)
        globex = {m.id for m in store.find(tenant="globex", live=False)}
        assert cards and {card["id"] for card in cards} <= globex
        assert "globex" in pg.locator("#diagram").text_content()
    finally:
        ctx.close()


@pytest.mark.browser
def test_the_selection_is_the_agents_recall(browser, real) -> None:
    url, store, _ = real
    ctx = browser.new_context(viewport=VIEWPORTS["desk"])
    try:
        pg = ctx.new_page()
        ask(pg, url)
        shown = pg.evaluate("state.selection.selected")
        # the page's budget controls start at 200 words and 10 records; the rest is the agent's
        defaults = Defaults(tenant="acme")
        agent = recall(
            store, real_store.QUESTION, tenant="acme", now=real_store.NOW,
            budget=Words(defaults.budget), max_records=defaults.max_records,
        )  # fmt: skip
        assert shown == [m.id for m in agent.selected]
    finally:
        ctx.close()


@pytest.mark.browser
def test_the_selection_is_recall_with_the_settings_on_screen(browser, real) -> None:
    url, store, _ = real
    ctx = browser.new_context(viewport=VIEWPORTS["phone"])
    try:
        pg = ctx.new_page()
        ask(pg, url)
        # every setting recall() is given below is set here, whatever the page starts from
        pg.get_by_label("Context word budget", exact=True).fill("120")
        pg.get_by_label("Maximum retrieved records", exact=True).fill("10")
        pg.get_by_label("Keep latest fact per key", exact=True).check()
        pg.get_by_label("Scorer", exact=True).select_option("tfidf")
        settle(pg)
        pg.get_by_role("button", name="Pause", exact=True).click()
        while pg.evaluate("document.body.dataset.stage") != "3":
            pg.get_by_role("button", name="Next stage", exact=True).click()
        shown = [pg.locator("#tray li[data-id]").nth(i).get_attribute("data-id")
                 for i in range(pg.locator("#tray li[data-id]").count())]  # fmt: skip
        page = recall(
            store, real_store.QUESTION, tenant="acme", now=real_store.NOW, budget=Words(120),
            max_records=10, latest_per_key=True, scorer="tfidf",
        )  # fmt: skip
        assert shown and shown == [m.id for m in page.selected]
        assert page.selected[0].always  # the correction loads first, outside the budget
    finally:
        ctx.close()
