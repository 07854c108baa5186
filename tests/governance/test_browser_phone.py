"""The dashboard on a phone (375 px wide, in headless Chromium): a compact header, the
explorer's first memory in the first screen (its filters folded), and a wide table that
scrolls in its own box to the buttons at its right."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser import PASSWORD, axe_problems, csp_refusals, log_in, watch_console
from tests.governance.conftest import Cast, build_cast

PHONE = {"width": 375, "height": 667}


@pytest.fixture
def cast(transactional_db: None) -> Cast:
    return build_cast(password=PASSWORD)


def test_it_fits_a_phone_header_explorer_and_members_table(
    cast: Cast, live_server: Any, browser: Any
) -> None:
    base = live_server.url
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    said = watch_console(page)
    log_in(page, base, "olive")

    page.goto(f"{base}/n/acme/memories/")
    header = page.locator("header.topbar").bounding_box()
    assert header["height"] < 0.25 * PHONE["height"], header
    assert page.locator("#filters details").get_attribute("open") is None  # folded
    first = page.locator("table.memories tbody tr").first.bounding_box()
    assert first["y"] + first["height"] <= PHONE["height"], first
    problems = axe_problems(page)

    page.goto(f"{base}/n/acme/members/")
    box = page.locator(".table-scroll[role=region]")
    remove = page.locator("button", has_text="Remove vera")
    assert box.evaluate("el => el.scrollWidth > el.clientWidth")  # wider than the phone
    box.evaluate("el => { el.scrollLeft = el.scrollWidth; }")
    shown = remove.bounding_box()
    frame = box.bounding_box()
    assert frame["x"] <= shown["x"]
    assert shown["x"] + shown["width"] <= frame["x"] + frame["width"]
    centre = (shown["x"] + shown["width"] / 2, shown["y"] + shown["height"] / 2)
    hit = page.evaluate("([x, y]) => document.elementFromPoint(x, y).textContent", centre)
    assert "Remove vera" in hit
    problems += axe_problems(page)
    assert problems == []
    assert csp_refusals(said) == []
    context.close()
