"""The one-time links an owner hands on, in headless Chromium at desktop and phone widths, in
English and Chinese: the portal link of a subject and a new member's set-password link each
have a copy button that puts the link on the clipboard and says so in a live region; the
members page's help text is the element its field's aria-describedby names; axe accepts
every page."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser import PASSWORD, axe_problems, csp_refusals, log_in, watch_console
from tests.governance.conftest import Cast, build_cast

PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 900}
COPIED = {"en": "Copied", "zh-CN": "已复制"}


@pytest.fixture
def cast(transactional_db: None) -> Cast:
    return build_cast(password=PASSWORD)


def copy_and_read_back(page: Any, field: str, locale: str) -> None:
    """Click the copy button of `field`: the clipboard holds the field's text, and the live
    region says it was copied."""
    link = page.locator(f"#{field}").input_value()
    button = page.locator(f"button[data-copy='{field}']")
    button.wait_for(state="visible")  # the script shows it once it runs
    status = page.locator("#copy-status")
    assert status.get_attribute("aria-live") == "polite"
    assert status.inner_text() == ""
    button.click()
    status.filter(has_text=COPIED[locale]).wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == link


def described_by_missing(page: Any) -> list[str]:
    """The aria-describedby ids on the page that name no element."""
    return page.evaluate(
        """() => [...document.querySelectorAll('[aria-describedby]')].flatMap(el =>
             el.getAttribute('aria-describedby').split(/\\s+/)
               .filter(id => id && !document.getElementById(id))
               .map(id => el.id + ' -> ' + id))"""
    )


@pytest.mark.parametrize("locale", ["en", "zh-CN"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_an_owner_copies_the_links_they_hand_on(
    cast: Cast,
    live_server: Any,
    browser: Any,
    locale: str,
    viewport: dict[str, int],
    tmp_path: Path,
) -> None:
    base = live_server.url
    context = browser.new_context(locale=locale, viewport=viewport)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
    page = context.new_page()
    said = watch_console(page)
    log_in(page, base, "olive")

    page.goto(f"{base}/n/acme/subjects/{cast.subject_id}/")
    with page.expect_navigation():
        page.locator("form.portal-link-form button[type=submit]").click()
    assert re.search(r"/portal/enter/", page.locator("#portal-link").input_value())
    copy_and_read_back(page, "portal-link", locale)
    page.screenshot(path=str(tmp_path / f"portal-link-{locale}-{viewport['width']}.png"))
    problems = axe_problems(page)

    page.goto(f"{base}/n/acme/members/")
    assert described_by_missing(page) == []
    name = page.locator("#id_invite-username")
    helptext = page.locator(f"#{name.get_attribute('aria-describedby')}")
    assert helptext.inner_text().strip()  # the help text is what it points at
    problems += axe_problems(page)
    name.fill(f"newcomer-{viewport['width']}-{locale}")
    with page.expect_navigation():
        page.locator("input[name=action][value=invite] ~ button[type=submit]").click()
    assert "/accounts/" in page.locator("#invite-link").input_value()
    copy_and_read_back(page, "invite-link", locale)
    page.screenshot(path=str(tmp_path / f"invited-{locale}-{viewport['width']}.png"))
    problems += axe_problems(page)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= viewport["width"], f"the page scrolls sideways ({width}px)"
    assert problems == []
    assert csp_refusals(said) == []
    context.close()
