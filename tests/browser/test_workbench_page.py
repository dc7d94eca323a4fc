"""The teaching-bank page in Debian's Chromium: walkthroughs, controls, playback, notes."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from workbench_helpers import open_page, settle

pytestmark = pytest.mark.browser

CONTROL_LABELS = (
    "Question",
    "Memory store",
    "Active tenant",
    "Include previous sessions",
    "Maximum age",
    "Keep latest fact per key",
    "Recency weight",
    "Context word budget",
    "Maximum retrieved records",
)
START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def control(page, label: str):
    return page.get_by_label(label, exact=True)


def choose(page, label: str, option: str) -> None:
    control(page, label).select_option(label=option)
    settle(page)


def fill(page, label: str, value: object) -> None:
    control(page, label).fill(str(value))
    settle(page)


def tick(page, label: str, on: bool) -> None:
    control(page, label).set_checked(on)
    settle(page)


def button(page, name: str):
    return page.get_by_role("button", name=name, exact=True)


def to_final_stage(page) -> None:
    while page.evaluate("document.body.dataset.stage") != "3":
        button(page, "Next stage").click()


def tray(page) -> list[str]:
    to_final_stage(page)
    return page.locator("#tray li[data-id]").evaluate_all("items => items.map(i => i.dataset.id)")


def table_selected(page) -> list[str]:
    return page.locator("#records tbody tr[data-outcome=selected]").evaluate_all(
        "rows => rows.map(r => r.dataset.id)"
    )


def reason(page, memory_id: str) -> str | None:
    code = page.locator(f"#records tbody tr[data-id='{memory_id}'] code.reason-code")
    return code.text_content() if code.count() else None


def coverage(page) -> str:
    to_final_stage(page)
    return page.locator("#coverage").text_content()


def playback(page) -> tuple[float, bool, int]:
    data = page.evaluate("({...document.body.dataset})")
    return float(data["elapsed"]), data["playing"] == "1", int(data["stage"])


def frozen_clock_page(context, url: str):
    """A page whose timers only move when the test runs the fake clock."""
    pg = context.new_page()
    pg.clock.install(time=START)
    open_page(pg, url)
    pg.clock.pause_at(datetime(2026, 1, 1, 0, 1, tzinfo=timezone.utc))
    return pg


def setup_procedure(page) -> None:
    choose(page, "Question", "Database-timeout procedure")
    choose(page, "Memory store", "Procedural steps")
    choose(page, "Active tenant", "Team A")
    tick(page, "Include previous sessions", True)
    fill(page, "Maximum age", 168)
    fill(page, "Recency weight", 0)
    fill(page, "Maximum retrieved records", 3)


def test_every_control_has_the_seed_label(page) -> None:
    for label in CONTROL_LABELS:
        assert control(page, label).count() == 1, label
    options = control(page, "Memory store").locator("option").all_text_contents()
    assert options == [
        "Semantic facts",
        "Episodic events",
        "Procedural steps",
        "Working context",
        "All stores",
    ]
    assert control(page, "Active tenant").locator("option").all_text_contents() == [
        "Team A",
        "Team B",
    ]
    for name in ("Play", "Pause", "Next stage", "Restart inspection", "Capture baseline"):
        assert button(page, name).count() == 1
    assert control(page, "Speed").locator("option").all_text_contents() == [
        "0.25×",
        "0.5×",
        "1×",
        "2×",
    ]
    headers = page.locator("#records thead th").all_text_contents()
    assert headers == ["ID", "Memory text", "Cosine", "Blended score", "Outcome"]
    assert page.get_by_role("heading", name="Inspect every record").count() == 1
    assert control(page, "Prediction").count() == 1


def test_walkthrough_one_budget_and_record_limit(page) -> None:
    setup_procedure(page)
    steps = [
        (11, ["M4"], "1 of 1"),
        (10, ["M7"], "0 of 1"),
        (9, [], "0 of 1"),
        (20, ["M4"], "1 of 1"),
        (21, ["M4", "M7"], "1 of 1"),
    ]
    for budget, expected, covered in steps:
        fill(page, "Context word budget", budget)
        assert table_selected(page) == sorted(expected), budget
        assert tray(page) == expected, budget
        assert f"coverage: {covered} declared (M4)" in coverage(page), budget
        if "M4" not in expected:
            assert reason(page, "M4") == "over_budget"
    assert "Empty context" not in page.locator("#tray").text_content()
    fill(page, "Maximum retrieved records", 1)
    assert tray(page) == ["M4"]
    assert reason(page, "M7") == "over_record_limit"


def test_walkthrough_one_empty_tray_is_explained(page) -> None:
    setup_procedure(page)
    fill(page, "Context word budget", 9)
    assert tray(page) == []
    assert "Empty context" in page.locator("#tray").text_content()
    assert page.locator("#records tbody tr").count() == 10


def test_walkthrough_two_recency_age_and_sessions(page) -> None:
    choose(page, "Question", "Timeout incident")
    choose(page, "Memory store", "All stores")
    fill(page, "Context word budget", 80)
    fill(page, "Maximum retrieved records", 1)
    fill(page, "Recency weight", 0)
    assert tray(page) == ["M3"]
    slider = control(page, "Recency weight")
    slider.focus()
    slider.press("End")  # keyboard: recency weight 1
    settle(page)
    assert page.locator("#recency-value").text_content() == "1.00"
    assert tray(page) == ["M5"]
    choose(page, "Memory store", "Episodic events")
    fill(page, "Maximum age", 47)
    assert tray(page) == [] and reason(page, "M3") == "too_old"
    fill(page, "Maximum age", 48)
    assert tray(page) == ["M3"]
    tick(page, "Include previous sessions", False)
    for age in (48, 168, 5000):
        fill(page, "Maximum age", age)
        assert tray(page) == [] and reason(page, "M3") == "previous_session"


def test_tenants_are_a_hard_filter(page) -> None:
    choose(page, "Memory store", "All stores")
    fill(page, "Context word budget", 200)
    fill(page, "Maximum retrieved records", 10)
    choose(page, "Active tenant", "Team B")
    assert set(tray(page)) <= {"M8", "M9", "M10"} and tray(page)
    for own in ("M1", "M4", "M7"):
        assert reason(page, own) == "other_tenant"
    choose(page, "Active tenant", "Team A")
    assert not set(tray(page)) & {"M8", "M9", "M10"}
    assert reason(page, "M8") == "other_tenant"


def test_keep_latest_per_key(page) -> None:
    choose(page, "Question", "Current connection limit")
    choose(page, "Memory store", "Semantic facts")
    fill(page, "Context word budget", 100)
    tick(page, "Keep latest fact per key", False)
    assert "M1" in tray(page)
    tick(page, "Keep latest fact per key", True)
    assert reason(page, "M1") == "superseded"
    assert reason(page, "M6") == "other_kind"
    assert "M1" not in tray(page)


def test_zero_overlap_question_selects_nothing_and_says_why(page) -> None:
    choose(page, "Question", "Friday lunch (no match)")
    choose(page, "Memory store", "All stores")
    assert tray(page) == []
    assert reason(page, "M4") == "no_lexical_match"
    text = page.locator("#records tbody tr[data-id=M4] td.outcome").text_content()
    assert "shares no term with the question" in text


def test_playback_timing_with_a_fake_clock(context, bank_url) -> None:
    pg = frozen_clock_page(context, bank_url)
    assert playback(pg) == (0.0, False, 0)
    button(pg, "Play").click()
    pg.clock.run_for(5000)
    assert playback(pg) == (pytest.approx(5.0), True, 0)
    button(pg, "Pause").click()
    pg.clock.run_for(3000)
    assert playback(pg) == (pytest.approx(5.0), False, 0)  # pause settles and freezes
    control(pg, "Speed").select_option(label="2×")
    button(pg, "Play").click()
    pg.clock.run_for(2500)
    assert playback(pg) == (pytest.approx(10.0), True, 1)
    control(pg, "Speed").select_option(label="0.5×")  # settles at 2× first
    pg.clock.run_for(4000)
    assert playback(pg) == (pytest.approx(12.0), True, 1)
    button(pg, "Next stage").click()  # pauses at the next ten-second boundary
    pg.clock.run_for(2000)
    assert playback(pg) == (pytest.approx(20.0), False, 2)
    assert pg.locator("#tray li").count() == 0  # the tray fills at the final stage only
    button(pg, "Next stage").click()
    assert playback(pg) == (pytest.approx(30.0), False, 3)
    assert pg.locator("#tray li").count() > 0
    assert button(pg, "Next stage").is_disabled()
    fill(pg, "Context word budget", 11)
    assert control(pg, "Context word budget").input_value() == "11"
    pg.clock.run_for(1000)
    assert playback(pg) == (pytest.approx(0.5), True, 0)  # input change restarts and plays
    button(pg, "Restart inspection").click()
    pg.clock.run_for(2000)
    assert playback(pg) == (pytest.approx(1.0), True, 0)  # speed 0.5× kept
    assert control(pg, "Speed").input_value() == "0.5"
    assert control(pg, "Context word budget").input_value() == "11"  # settings kept
    pg.clock.run_for(120_000)
    assert playback(pg) == (pytest.approx(30.0), False, 3)  # stops at the end


def test_hidden_tab_pauses(context, bank_url) -> None:
    pg = frozen_clock_page(context, bank_url)
    button(pg, "Play").click()
    pg.clock.run_for(3000)
    pg.evaluate(
        """() => {
          Object.defineProperty(document, "hidden", {value: true, configurable: true});
          Object.defineProperty(document, "visibilityState", {value: "hidden", configurable: true});
          document.dispatchEvent(new Event("visibilitychange"));
        }"""
    )
    pg.clock.run_for(4000)
    assert playback(pg) == (pytest.approx(3.0), False, 0)


def test_reduced_motion_prevents_autoplay_but_computes_at_once(browser, bank_url) -> None:
    ctx = browser.new_context(reduced_motion="reduce")
    try:
        pg = frozen_clock_page(ctx, bank_url)
        setup_procedure(pg)
        fill(pg, "Context word budget", 10)
        pg.clock.run_for(3000)
        assert playback(pg) == (0.0, False, 0)
        assert table_selected(pg) == ["M7"]  # the result is there before any playback
        button(pg, "Play").click()  # an explicit Play still plays
        pg.clock.run_for(2000)
        assert playback(pg) == (pytest.approx(2.0), True, 0)
    finally:
        ctx.close()


def test_keyboard_operation(page) -> None:
    setup_procedure(page)
    fill(page, "Context word budget", 11)
    records = control(page, "Maximum retrieved records")
    records.focus()
    page.keyboard.press("ArrowDown")  # 3 -> 2
    settle(page)
    assert records.input_value() == "2"
    budget = control(page, "Context word budget")
    budget.focus()
    page.keyboard.press("ArrowDown")  # 11 -> 10
    settle(page)
    assert table_selected(page) == ["M7"]
    if button(page, "Pause").is_enabled():  # input changes started playback
        button(page, "Pause").click()
    button(page, "Play").focus()
    page.keyboard.press("Space")
    assert playback(page)[1] is True
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Pause"


def test_baseline_capture_replace_clear_side_by_side(page) -> None:
    setup_procedure(page)
    fill(page, "Context word budget", 11)
    control(page, "Prediction").fill("At 10 words M4 no longer fits and M7 replaces it.")
    button(page, "Capture baseline").click()
    base = page.locator("#baseline-panel")
    current = page.locator("#current-panel")
    assert "M4" in base.text_content() and "budget 11 words" in base.text_content()
    assert "M7 replaces it" in base.text_content()
    fill(page, "Context word budget", 10)
    assert "M7" in current.locator("dd").nth(2).text_content()
    assert "M4" in base.locator("dd").nth(2).text_content()  # baseline kept beside it
    box_b, box_c = base.bounding_box(), current.bounding_box()
    assert box_b["x"] + box_b["width"] <= box_c["x"] and abs(box_b["y"] - box_c["y"]) < 2
    assert button(page, "Capture baseline").is_disabled()
    button(page, "Replace baseline").click()
    assert "M7" in base.locator("dd").nth(2).text_content()
    button(page, "Clear baseline").click()
    assert "No baseline captured." in base.text_content()


def test_notebook_survives_reload_and_exports(page, tmp_path: Path) -> None:
    setup_procedure(page)
    fill(page, "Context word budget", 10)
    control(page, "Prediction").fill("M7 fits at ten words.")
    button(page, "Record observation").click()
    notes = control(page, "Notebook")
    assert "Selected: M7" in notes.input_value()
    assert "M4: does not fit the remaining word budget" in notes.input_value()
    notes.press("End")
    notes.type("\nMy own line.")
    page.reload()
    page.wait_for_function("() => document.body.dataset.started === '1'")
    assert "My own line." in control(page, "Notebook").input_value()
    assert control(page, "Prediction").input_value() == "M7 fits at ten words."
    with page.expect_download() as download:
        button(page, "Export notes").click()
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    text = saved.read_text()
    assert saved.name == "memcommit-workbench-notes.txt"
    assert "Selected: M7" in text and "My own line." in text and "M7 fits at ten words." in text


def test_fullscreen_enter_and_exit(page) -> None:
    button(page, "Expand experiment").click()
    page.wait_for_function("() => document.fullscreenElement && document.fullscreenElement.id")
    assert page.evaluate("document.fullscreenElement.id") == "experiment"
    button(page, "Exit full screen").wait_for()
    button(page, "Exit full screen").click()
    page.wait_for_function("() => document.fullscreenElement === null")
    button(page, "Expand experiment").wait_for()  # the label follows fullscreenchange


def test_honest_caveats_are_on_the_page(page) -> None:
    text = page.locator("#caveat").text_content()
    for phrase in (
        "lexical TF-IDF cosine",
        "whitespace-separated words, not model tokens",
        "synthetic fixtures",
        "Zero lexical matches are excluded",
    ):
        assert phrase in text
    assert "the store is never modified" in page.locator(".caveats.bank-only").text_content()


def test_phone_width_scrolls_by_keyboard_and_stays_readable(browser, bank_url) -> None:
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    try:
        pg = ctx.new_page()
        open_page(pg, bank_url)
        to_final_stage(pg)
        for region in ("#diagram", "#table-scroll"):
            box = pg.locator(region)
            assert box.evaluate("e => e.scrollWidth > e.clientWidth"), region
            box.focus()
            for _ in range(3):
                pg.keyboard.press("ArrowRight")
            pg.wait_for_function("r => document.querySelector(r).scrollLeft > 0", arg=region)
        sizes = pg.evaluate(
            """() => Array.from(document.querySelectorAll('label, th, .card, td'))
                 .map(e => parseFloat(getComputedStyle(e).fontSize))"""
        )
        assert min(sizes) >= 12
        assert pg.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        ctx.close()


def test_no_console_errors(context, bank_url) -> None:
    errors: list[str] = []
    pg = context.new_page()
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(str(e)))
    open_page(pg, bank_url)
    fill(pg, "Context word budget", 12)
    to_final_stage(pg)
    assert errors == []
