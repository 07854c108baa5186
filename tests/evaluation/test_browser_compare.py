"""The comparison of two quality runs in headless Chromium, at desktop and phone widths, in
English and Chinese: each table that may scroll sideways is a region a keyboard can reach (it
takes the focus, named by its heading), and axe finds no serious problem."""

from __future__ import annotations

import json
from typing import Any

import pytest

from apps.audit.actors import Actor
from apps.evaluation.services import eval_set_import_jsonl, run_start, variant_save
from tests.browser import PASSWORD, axe_problems, csp_refusals, log_in, watch_console
from tests.governance.conftest import Cast, build_cast

ACTOR = Actor.system("tests")
PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 900}


@pytest.fixture
def compared(transactional_db: None) -> tuple[Cast, str]:
    """Two runs of a set on acme (the second with a variant that keeps one result), and the
    address comparing them."""
    cast = build_cast(password=PASSWORD)
    cases = [
        {"question": "Which tea does the user like?", "subject": "u1",
         "expected_contains": ["green tea"], "category": "preference"},
        {"question": "Where did the user move?", "subject": "u1",
         "expected_memory_ids": [str(cast.turn.pk)], "category": "place"},
        {"question": "What is the user's favourite volcano?", "subject": "u1"},
    ]  # fmt: skip
    eval_set = eval_set_import_jsonl(
        actor=ACTOR,
        namespace=cast.acme,
        name="acme questions",
        text="\n".join(json.dumps(case) for case in cases),
    )
    a = run_start(actor=ACTOR, eval_set=eval_set)
    tiny = variant_save(
        actor=ACTOR, namespace=cast.acme, name="tiny", config={"k": 1, "keyword_candidates": 1}
    )
    b = run_start(actor=ACTOR, eval_set=eval_set, variant=tiny)
    return cast, f"/n/acme/quality/compare/?a={a.pk}&b={b.pk}"


@pytest.mark.parametrize("locale", ["en", "zh-CN"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_its_scrolling_tables_are_reachable_by_keyboard(
    compared: tuple[Cast, str], live_server: Any, browser: Any, locale: str, viewport: dict
) -> None:
    _cast, address = compared
    base = live_server.url
    context = browser.new_context(locale=locale, viewport=viewport)
    page = context.new_page()
    said = watch_console(page)
    log_in(page, base, "olive")
    page.goto(base + address)
    regions = page.locator(".table-scroll")
    assert regions.count() >= 1
    for region in regions.all():
        assert region.get_attribute("tabindex") == "0"
        assert region.get_attribute("role") == "region"
        heading = page.locator(f"#{region.get_attribute('aria-labelledby')}").inner_text()
        assert heading.strip()
        region.focus()
        assert region.evaluate("el => document.activeElement === el")
    if viewport is PHONE:  # the figures stack on a phone: nothing scrolls sideways
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        assert page.locator("#deltas").evaluate(
            "el => el.parentElement.scrollWidth <= el.parentElement.clientWidth"
        )
    assert axe_problems(page) == []
    assert csp_refusals(said) == []
    context.close()
