"""The privacy portal on a phone (375 px wide, in headless Chromium): its menu folds behind a
button and reaches every page; its table (where personal data was found) stacks, the date and
what was found first, each cell labelled, nothing scrolling sideways."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.utils import translation
from django.utils.translation import gettext

from apps.audit.actors import Actor
from apps.namespaces.services import namespace_update
from tests.browser import TIMEOUT_MS, axe_problems, csp_refusals, watch_console
from tests.conftest import Tenant
from tests.privacy.conftest import Story, allow_return
from tests.privacy.test_browser import APP, enter

PHONE = {"width": 375, "height": 812}


@pytest.fixture
def tale(transactional_db: None, acme: Tenant, story: Story) -> Story:
    """conftest's story, committed, with a write the PII policy refused."""
    allow_return(acme, APP)
    namespace_update(actor=Actor.system("tests"), namespace=acme.namespace, pii_policy="reject")
    refused = acme.client.post(
        acme.url("memories"),
        {"subject": "u1", "content": "Card 4111 1111 1111 1111"},
        format="json",
    )
    assert refused.status_code == 422
    return story


@pytest.mark.parametrize(("locale", "language"), [("en", "en"), ("zh-hans", "zh-hans")])
def test_the_portal_menu_and_table_fit_a_phone(
    tale: Story,
    acme: Tenant,
    live_server: Any,
    browser: Any,
    tmp_path: Path,
    locale: str,
    language: str,
) -> None:
    kept = os.environ.get("MEMORYHUB_PHONE_SHOTS")
    shots = Path(kept) if kept else tmp_path
    shots.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport=PHONE)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    said = watch_console(page)
    home = enter(page, live_server.url, acme, locale=locale)
    toggle = page.locator("button[aria-controls=portal-menu]")
    links = page.locator("#portal-menu nav a")
    names = links.all_inner_texts()
    assert len(names) == 6
    with translation.override(language):
        assert toggle.inner_text().strip() == gettext("Menu")
    toggle.click()
    page.screenshot(path=shots / f"portal-menu-{locale}.png", full_page=True)
    problems = axe_problems(page)
    for index, name in enumerate(names):
        page.goto(home)
        assert not links.nth(index).is_visible()  # folded
        toggle.click()
        with page.expect_navigation():
            links.nth(index).click()
        assert links.nth(index).get_attribute("aria-current") == "page", name

    page.goto(f"{home}blocked/")
    page.screenshot(path=shots / f"portal-blocked-{locale}.png", full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    cells = page.locator("main table#writes tbody tr").first.evaluate(
        """row => Array.from(row.children).map(cell => ({
            label: cell.dataset.label, shown: getComputedStyle(cell, "::before").content,
            top: cell.getBoundingClientRect().top, left: cell.getBoundingClientRect().left,
        })).sort((a, b) => a.top - b.top)"""
    )
    with translation.override(language):
        labels = [gettext(w) for w in ("When", "What was found", "What happened", "Kept now")]
    assert [cell["label"] for cell in cells] == labels
    assert [cell["shown"] for cell in cells] == [f'"{label}"' for label in labels]
    assert len({round(cell["left"]) for cell in cells}) == 1  # one above the other
    problems += axe_problems(page)
    assert problems == []
    assert csp_refusals(said) == []
    context.close()
