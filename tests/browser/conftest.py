"""Fixtures for the workbench: live servers on a free port and one headless Chromium.

Browser tests skip with a visible reason when Debian's Chromium or Playwright is
missing, and fail instead when MEMCOMMIT_REQUIRE_BROWSER=1 (CI).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from workbench_helpers import open_page, running

from memcommit.workbench import BankSource, make_server

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def bank_url() -> Iterator[str]:
    """The teaching bank served on 127.0.0.1 at a free port."""
    source = BankSource()
    yield from running(make_server(source))
    source.close()


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install 'memcommit[workbench]')"
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    return None


@pytest.fixture(scope="module")
def browser():
    """One headless Debian Chromium per test module.

    Playwright's sync API keeps an asyncio loop running on the main thread while
    it is open; closing it when a module ends keeps that loop away from the async
    tests (the frameworks' own suites) that xdist runs on the same worker.
    """
    reason = browser_missing()
    if reason is not None:
        if os.environ.get("MEMCOMMIT_REQUIRE_BROWSER") == "1":
            pytest.fail(f"MEMCOMMIT_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def context(browser):
    """A fresh browser context (own localStorage) at desktop size."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context, bank_url):
    """The bank page, loaded, with its first result drawn."""
    pg = context.new_page()
    open_page(pg, bank_url)
    return pg
