"""The bank page as a person sees it: honest lanes, answers revealed with their stage, both widths.

Every check reads what is on screen (visible text, bounding boxes) in Debian's
Chromium. Contexts use reduced motion, so an input change restarts inspection
at stage 1 without playing and each stage is reached with Next stage.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

import pytest
from workbench_helpers import open_page, settle

pytestmark = pytest.mark.browser

DESK = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
FILTER_REASON = "not in the chosen memory store"
PACKING_REASON = "does not fit the remaining word budget"

# Elements whose own text is clipped when their box leaves their parent's box (or, outside a
# sideways scroller, the viewport). Screen-reader-only text and select options are skipped.
CLIPPED_TEXT = """
() => {
  const out = [];
  const width = document.documentElement.clientWidth;
  const ownText = (e) => Array.from(e.childNodes).some(
    (n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim());
  for (const e of document.querySelectorAll("body *")) {
    if (!ownText(e) || e.closest(".sr-only, select, option, script")) continue;
    const box = e.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    let parent = e.parentElement;
    while (parent && getComputedStyle(parent).display.startsWith("inline")) {
      parent = parent.parentElement;
    }
    const outer = parent.getBoundingClientRect();
    const text = JSON.stringify(e.textContent.trim().slice(0, 40));
    const name = (e.id ? "#" + e.id : e.tagName) + " " + text;
    if (box.left < outer.left - 1 || box.right > outer.right + 1) {
      out.push(name + " leaves its parent");
    }
    if (!e.closest(".scroller") && (box.left < -1 || box.right > width + 1)) {
      out.push(name + " leaves the screen");
    }
    const overflow = getComputedStyle(e).overflowX;
    if (overflow !== "visible" && e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1) {
      out.push(name + " is cut inside itself");
    }
  }
  return out;
}
"""


@pytest.fixture
def calm(browser, bank_url):
    """A desk-sized bank page with reduced motion: stages move only on Next stage."""
    ctx = browser.new_context(viewport=DESK, reduced_motion="reduce")
    pg = ctx.new_page()
    open_page(pg, bank_url)
    yield pg
    ctx.close()


@pytest.fixture
def phone(browser, bank_url):
    """The bank page on a 390 × 844 phone, reduced motion."""
    ctx = browser.new_context(viewport=PHONE, is_mobile=True, reduced_motion="reduce")
    pg = ctx.new_page()
    open_page(pg, bank_url)
    yield pg
    ctx.close()


def control(page, label: str):
    return page.get_by_label(label, exact=True)


def set_value(page, label: str, value: object) -> None:
    control(page, label).fill(str(value))
    settle(page)


def button(page, name: str):
    return page.get_by_role("button", name=name, exact=True)


def stage(page) -> int:
    return int(page.evaluate("document.body.dataset.stage"))


def next_stage(page) -> None:
    before = stage(page)
    button(page, "Next stage").click()
    page.wait_for_function("s => Number(document.body.dataset.stage) > s", arg=before)


def walkthrough(page, budget: int) -> None:
    """The seed's first walkthrough at one word budget (stage 1 afterwards)."""
    control(page, "Question").select_option(label="Database-timeout procedure")
    settle(page)
    control(page, "Memory store").select_option(label="Procedural steps")
    settle(page)
    set_value(page, "Maximum retrieved records", 3)
    set_value(page, "Context word budget", budget)
    assert stage(page) == 0


def lane_census(page) -> list[tuple[str, int, list[str]]]:
    """Per lane: its count as shown, and the ids of the cards visible in it."""
    lanes = page.locator("#diagram .lane")
    out = []
    for i in range(4):
        lane = lanes.nth(i)
        cards = lane.locator(".card").evaluate_all(
            "cs => cs.filter(c => c.checkVisibility()).map(c => c.dataset.id)"
        )
        out.append((lane.locator(".count").inner_text(), len(cards), cards))
    return out


def visible_text(page, selector: str = "body") -> str:
    return page.locator(selector).inner_text()


@pytest.mark.parametrize(
    ("question", "store", "tenant", "budget"),
    [
        ("Database-timeout procedure", "Procedural steps", "Team A", 10),
        ("Timeout incident", "All stores", "Team A", 80),
        ("Current connection limit", "All stores", "Team B", 200),
        ("Friday lunch (no match)", "All stores", "Team A", 40),
    ],
)
def test_every_lane_count_equals_the_cards_visible_in_it(
    calm, question: str, store: str, tenant: str, budget: int
) -> None:
    choices = {"Question": question, "Memory store": store, "Active tenant": tenant}
    for label, option in choices.items():
        control(calm, label).select_option(label=option)
        settle(calm)
    set_value(calm, "Context word budget", budget)
    for shown in range(4):
        assert stage(calm) == shown
        for index, (count, visible, ids) in enumerate(lane_census(calm)):
            if index > shown:
                assert (count, visible) == ("", 0), (shown, index)
            else:
                assert count == f"({visible})", (shown, index, ids)
                assert len(set(ids)) == visible  # a card appears once per lane
        if shown < 3:
            next_stage(calm)
    stored, passed, ranked, tray = (set(ids) for _, _, ids in lane_census(calm))
    assert tray <= ranked <= passed <= stored and len(stored) == 10  # a trail, never a jump


def test_cards_stay_in_every_lane_they_passed(calm) -> None:
    walkthrough(calm, 10)
    for _ in range(3):
        next_stage(calm)
    census = {i: ids for i, (_, _, ids) in enumerate(lane_census(calm))}
    assert set(census[1]) == {"M4", "M7"} and set(census[2]) == {"M4", "M7"}
    assert census[3] == ["M7"]
    ranked = calm.locator("#diagram .lane[data-lane='2']")
    assert ranked.locator(".card.passed").evaluate_all("cs => cs.map(c => c.dataset.id)") == ["M7"]
    stopped = ranked.locator(".group")
    assert stopped.locator(".group-reason").inner_text() == PACKING_REASON
    assert stopped.locator(".card").evaluate_all("cs => cs.map(c => c.dataset.id)") == ["M4"]
    bank = calm.locator("#diagram .lane[data-lane='0'] .group-reason").all_inner_texts()
    assert bank == [FILTER_REASON, "another tenant's record (hard filter)"]


def test_all_lanes_and_the_tray_fit_a_desk_viewport_at_the_start(calm) -> None:
    assert stage(calm) == 0
    calm.locator("#playback").evaluate("e => e.scrollIntoView({block: 'start'})")
    boxes = {
        "lanes": calm.locator("#diagram"),
        "legend": calm.locator("#legend"),
        "tray": calm.locator(".tray"),
        "tray lane": calm.locator("#diagram .lane[data-lane='3']"),
    }
    for name, locator in boxes.items():
        box = locator.bounding_box()
        assert box["y"] >= 0 and box["y"] + box["height"] <= DESK["height"], name
        assert box["x"] >= 0 and box["x"] + box["width"] <= DESK["width"], name
    assert lane_census(calm)[0][1] == 10  # the whole bank is on screen


def test_the_answer_is_not_on_screen_before_the_final_stage(calm) -> None:
    walkthrough(calm, 10)  # M7 selected, M4 does not fit: coverage 0 of 1
    score_m7 = calm.locator("#records tbody tr[data-id=M7] td.num").nth(1).text_content()
    assert re.fullmatch(r".*\d\.\d{3}", score_m7)
    score_m7 = score_m7[-5:]
    for shown in range(3):
        text = visible_text(calm, "#experiment") + visible_text(calm, ".records")
        assert PACKING_REASON not in text and "Supporting-fact coverage" not in text, shown
        assert "0 of 1" not in text and "selected" not in visible_text(calm, "#status"), shown
        assert calm.locator("#records .pill.selected:visible").count() == 0, shown
        decided = calm.locator("#records .pill.excluded:visible").count()
        assert decided == [0, 8, 8][shown], shown  # the filters' exclusions, from stage 2 on
        assert calm.locator("#tray li").count() == 0, shown
        assert "M7" not in visible_text(calm, "#current-panel"), shown
        assert "appear at stage 4" in visible_text(calm, "#current-panel"), shown
        assert (score_m7 in text) == (shown >= 2), shown  # scores come with ranking
        assert (FILTER_REASON in text) == (shown >= 1), shown  # reasons with the filters
        next_stage(calm)
    text = visible_text(calm, "#experiment") + visible_text(calm, ".records")
    assert PACKING_REASON in text and "Supporting-fact coverage: 0 of 1 declared (M4)" in text
    assert "1 selected" in visible_text(calm, "#status")
    assert "M7" in visible_text(calm, "#current-panel")
    row = calm.locator("#records tbody tr[data-id=M7] td.outcome")
    assert row.inner_text().strip() == "Selected"


def test_status_line_speaks_in_user_words(calm) -> None:
    walkthrough(calm, 10)
    lines = []
    for shown in range(4):
        lines.append(visible_text(calm, "#status"))
        if shown < 3:
            next_stage(calm)
    assert lines == [
        "Stage 1 of 4, stored records: the bank holds 10 records. The scope filters come next.",
        "Stage 2 of 4, scope filters: 2 of 10 records passed; 8 filtered out.",
        "Stage 3 of 4, ranking: 2 ranked by blended score; 0 share no word with the question.",
        "Final context: 1 selected, 10 of 10 words used; 9 left out.",
    ]
    assert not any("ms" in line.split() or "recall()" in line for line in lines)


def test_cosine_cell_says_why_a_record_was_never_ranked(calm) -> None:
    for _ in range(3):
        next_stage(calm)
    cells = calm.locator("#records tbody tr[data-id=M8] td.num")
    assert cells.nth(0).inner_text() == "not ranked: filtered out first"
    assert cells.nth(1).inner_text() == "not ranked"
    cosine = calm.locator("#records tbody tr[data-id=M4] td.num").first.inner_text()
    assert re.fullmatch(r"0\.\d{3}", cosine)


def test_errors_are_plain_words_and_clear_the_old_result(calm) -> None:
    for _ in range(3):
        next_stage(calm)
    assert calm.locator("#tray li[data-id]").count() == 2
    set_value(calm, "Context word budget", "")
    error = calm.get_by_role("alert")
    assert error.inner_text() == "Context word budget is empty; it must be a whole number."
    assert control(calm, "Context word budget").get_attribute("aria-invalid") == "true"
    for _ in range(3):
        next_stage(calm)
    assert calm.locator("#tray li").count() == 0
    assert calm.locator("#records tbody tr").count() == 0
    assert [count for count, _, _ in lane_census(calm)] == ["", "", "", ""]
    assert visible_text(calm, "#status") == "No result: fix the highlighted setting."
    assert "Selected" not in visible_text(calm, "#current-panel")
    set_value(calm, "Context word budget", -1)
    assert error.inner_text() == (
        "Context word budget must be between 0 and 20000 (you entered “-1”)."
    )
    assert "=" not in error.inner_text() and "'" not in error.inner_text()
    set_value(calm, "Context word budget", 11)
    assert error.is_hidden()
    assert control(calm, "Context word budget").get_attribute("aria-invalid") is None
    assert calm.locator("#records tbody tr").count() == 10


def test_error_answer_carries_the_bare_reason(bank_url: str) -> None:
    try:
        urllib.request.urlopen(bank_url + "api/recall?budget=")
    except urllib.error.HTTPError as exc:
        error = json.load(exc)["error"]
    else:
        pytest.fail("an empty budget was accepted")
    assert error == {
        "field": "budget",
        "value": "",
        "reason": "must be a whole number",
        "message": "budget='': must be a whole number",
    }


def test_reasons_are_readable_in_the_panels_and_the_notebook(calm) -> None:
    walkthrough(calm, 10)
    button(calm, "Capture baseline").click()
    button(calm, "Record observation").click()
    for _ in range(3):
        next_stage(calm)
    expected = (
        f"M1, M2, M3, M5, M6: {FILTER_REASON}; M4: {PACKING_REASON}; "
        "M8, M9, M10: another tenant's record (hard filter)"
    )
    for panel in ("#baseline-panel", "#current-panel"):
        text = visible_text(calm, panel)
        assert expected in text, panel
        assert "other_kind" not in text and "other_tenant" not in text and "over_budget" not in text
    assert "Excluded: " + expected in control(calm, "Notebook").input_value()


def test_legend_names_every_stripe_colour(calm) -> None:
    legend = calm.locator("#legend")
    assert legend.locator(".legend-title").inner_text() == "Stripe colour: memory store"
    assert legend.locator(".legend-item").all_inner_texts() == [
        "Semantic facts",
        "Episodic events",
        "Procedural steps",
        "Working context",
    ]
    swatches = dict(
        legend.locator(".swatch").evaluate_all(
            "ss => ss.map(s => [s.dataset.kind, getComputedStyle(s).backgroundColor])"
        )
    )
    stripes = calm.locator("#diagram .card").evaluate_all(
        "cs => cs.map(c => [c.dataset.kind, getComputedStyle(c).borderLeftColor])"
    )
    assert {kind for kind, _ in stripes} == set(swatches)
    assert set(swatches) == {"fact", "event", "procedure", "working"}
    for kind, colour in stripes:
        assert swatches[kind] == colour, kind
    assert len(set(swatches.values())) == 4


def test_seed_reference_links_and_related_readings(calm) -> None:
    caveat = calm.locator("#caveat")
    assert "ADK memory concepts · Cosine similarity reference" in caveat.inner_text()
    adk = caveat.get_by_role("link", name="ADK memory concepts", exact=True)
    cosine = caveat.get_by_role("link", name="Cosine similarity reference", exact=True)
    assert adk.get_attribute("href").startswith("https://google.github.io/adk-docs/")
    assert "Cosine_similarity" in cosine.get_attribute("href")
    readings = calm.get_by_role("list", name="Related readings")
    text = readings.inner_text()
    assert "consolidation" in text and "context" in text.lower()
    links = calm.locator(".caveats a")
    assert links.count() >= 6
    for i in range(links.count()):
        link = links.nth(i)
        assert link.get_attribute("href").startswith("https://")
        assert link.get_attribute("rel") == "noopener noreferrer"


def test_phone_stacks_baseline_over_current_and_clips_no_text(phone) -> None:
    button(phone, "Capture baseline").click()
    base = phone.locator("#baseline-panel").bounding_box()
    current = phone.locator("#current-panel").bounding_box()
    assert base["y"] + base["height"] <= current["y"]
    assert current["width"] > 300 and base["width"] > 300
    for _ in range(4):
        assert phone.evaluate(CLIPPED_TEXT) == [], stage(phone)
        if stage(phone) < 3:
            next_stage(phone)


def test_phone_reaches_every_lane_and_the_tray_directly(phone) -> None:
    for _ in range(3):
        next_stage(phone)
    diagram = phone.locator("#diagram").bounding_box()
    names = ["1 Bank", "2 Passed", "3 Ranked", "4 Tray"]
    for index in (3, 0, 2, 1):
        button(phone, names[index]).click()
        lane = phone.locator(f"#diagram .lane[data-lane='{index}']")
        for part in (lane, lane.locator("h3")):
            box = part.bounding_box()
            assert diagram["x"] - 1 <= box["x"], names[index]
            assert box["x"] + box["width"] <= diagram["x"] + diagram["width"] + 1, names[index]
        assert button(phone, names[index]).get_attribute("aria-current") == "true"
    button(phone, "4 Tray").click()
    assert phone.locator("#diagram .lane[data-lane='3'] .card").evaluate_all(
        "cs => cs.map(c => c.dataset.id)"
    ) == ["M4", "M7"]


def test_phone_table_caption_stays_put_and_a_hint_says_it_scrolls(phone) -> None:
    caption = phone.locator("#records-caption")
    hint = phone.locator("#table-hint")
    table = phone.locator("#table-scroll")
    table.scroll_into_view_if_needed()
    assert hint.is_visible() and "further right" in hint.inner_text()
    before = caption.bounding_box()
    assert before["x"] >= 0 and before["x"] + before["width"] <= PHONE["width"]
    table.evaluate("e => e.scrollTo({left: e.scrollWidth})")
    hint.wait_for(state="hidden")  # every column has been seen
    after = caption.bounding_box()  # the caption does not scroll sideways with the table
    assert (after["x"], after["width"]) == (before["x"], before["width"])
    assert caption.evaluate("e => e.closest('.scroller')") is None
    head = phone.locator("#records thead th").first.bounding_box()
    assert head["x"] >= table.bounding_box()["x"] - 1  # the ID column stays in view
