"""The dashboard on a phone (375 px wide, in headless Chromium): a compact header whose menus
fold behind their buttons and reach every page, the explorer's first memory in the first
screen (its filters folded), and tables whose rows stack (the date and the main column
first, each cell labelled) instead of scrolling sideways. On a desktop the menus stay rows,
every item in sight, and the tables stay tables. The screenshots go to pytest's tmp_path, or
to the folder named by MEMORYHUB_PHONE_SHOTS, to be kept."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.utils import translation
from django.utils.translation import gettext

from apps.accounts.services import api_key_create
from apps.audit.actors import Actor
from apps.webhooks import services as webhooks
from apps.webhooks.models import WebhookEndpoint
from tests.browser import PASSWORD, TIMEOUT_MS, axe_problems, csp_refusals, log_in, watch_console
from tests.governance.conftest import Cast, build_cast

PHONE = {"width": 375, "height": 667}
DESKTOP = {"width": 1280, "height": 900}
MENUS = {"main": "#main-menu", "namespace": "#namespace-menu"}
MENU_WORDS = {"en-GB": "Menu", "zh-CN": "菜单"}


@pytest.fixture
def cast(transactional_db: None, settings: Any) -> Cast:
    built = build_cast(password=PASSWORD)
    actor = Actor.for_user(built.users["olive"])
    api_key_create(
        actor=actor, name="support desk", namespaces=[built.acme], permissions=["memories:read"]
    )
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.MEMORYHUB_WEBHOOK_DISPATCHER = False  # the delivery stays in the log, pending
    hook = webhooks.endpoint_create(
        actor=actor,
        namespace=built.acme,
        item=webhooks.NewEndpoint(url="http://127.0.0.1:9/hook", events=["memory.created"]),
        created_by="olive",
        creator_reads_memories=True,
    )
    webhooks.endpoint_send_test(actor=actor, endpoint=hook.endpoint)
    return built


def shots(tmp_path: Path) -> Path:
    kept = os.environ.get("MEMORYHUB_PHONE_SHOTS")
    folder = Path(kept) if kept else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def reach_every_item(page: Any, start: str, menu: str, phone: bool) -> list[str]:
    """Click each of the menu's items from `start`, as a person would; the items whose page
    was reached (it marks the same item as the current page)."""
    page.goto(start)
    names = page.locator(f"{menu} nav a").all_text_contents()
    reached = []
    for index, name in enumerate(names):
        page.goto(start)
        link = page.locator(f"{menu} nav a").nth(index)
        toggle = page.locator(f"button.menu-toggle[aria-controls='{menu[1:]}']")
        if phone:
            assert not link.is_visible()  # folded
            toggle.click()
            assert toggle.get_attribute("aria-expanded") == "true"
        else:
            assert not toggle.is_visible()
        assert link.is_visible()
        box = link.bounding_box()
        assert box["x"] >= 0, name
        assert box["x"] + box["width"] <= page.viewport_size["width"], name
        with page.expect_navigation():
            link.click()
        landed = page.locator(f"{menu} nav a").nth(index)
        if landed.get_attribute("aria-current") == "page" and landed.text_content() == name:
            reached.append(name)
    return reached


@pytest.mark.parametrize(
    ("locale", "viewport"),
    [("en-GB", PHONE), ("zh-CN", PHONE), ("en-GB", DESKTOP)],
    ids=["phone-en", "phone-zh", "desktop-en"],
)
def test_it_reaches_every_menu_item(
    cast: Cast,
    live_server: Any,
    browser: Any,
    tmp_path: Path,
    locale: str,
    viewport: dict[str, int],
) -> None:
    base = live_server.url
    phone = viewport == PHONE
    context = browser.new_context(viewport=viewport, locale=locale)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    said = watch_console(page)
    log_in(page, base, "olive")
    start = f"{base}/n/acme/memories/"
    page.goto(start)
    for menu in MENUS.values():
        toggle = page.locator(f"button.menu-toggle[aria-controls='{menu[1:]}']")
        assert toggle.is_visible() is phone
    main = page.locator("#main-menu nav a")
    assert main.count() == 7
    assert page.locator("#namespace-menu nav a").count() == 8  # an owner's: every tab
    if phone:
        assert (
            page.locator("button[aria-controls=main-menu]").inner_text().strip()
            == MENU_WORDS[locale]
        )
        header = page.locator("header.topbar").bounding_box()
        assert header["height"] < 0.2 * PHONE["height"], header
        page.locator("button[aria-controls=main-menu]").click()
        page.locator("button[aria-controls=namespace-menu]").click()
    tag = f"{'phone' if phone else 'desktop'}-{locale[:2]}"
    page.screenshot(path=shots(tmp_path) / f"menus-{tag}.png", full_page=True)
    problems = axe_problems(page)

    for menu in MENUS.values():
        page.goto(start)
        names = page.locator(f"{menu} nav a").all_text_contents()
        assert len(names) in (7, 8)
        assert reach_every_item(page, start, menu, phone) == names
    if phone:  # Escape folds an open menu and gives the focus back to its button
        page.goto(start)
        toggle = page.locator("button[aria-controls=main-menu]")
        toggle.click()
        page.locator("#main-menu nav a").first.focus()
        page.keyboard.press("Escape")
        assert toggle.get_attribute("aria-expanded") == "false"
        assert page.evaluate("document.activeElement.getAttribute('aria-controls')") == "main-menu"
        assert not page.locator("#main-menu nav a").first.is_visible()
    assert problems == []
    assert csp_refusals(said) == []
    context.close()


def test_without_javascript_a_phone_menu_shows_every_item(
    cast: Cast, live_server: Any, browser: Any
) -> None:
    context = browser.new_context(viewport=PHONE, java_script_enabled=False)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    log_in(page, live_server.url, "olive")
    page.goto(f"{live_server.url}/n/acme/memories/")
    assert not page.locator("button.menu-toggle").first.is_visible()
    links = page.locator(".menu nav a")
    assert links.count() == 15
    for index in range(links.count()):
        box = links.nth(index).bounding_box()
        assert box is not None  # shown
        assert box["x"] + box["width"] <= PHONE["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    context.close()


TABLE_PAGES = {
    # page: (path, its table, the date's label or None, the main column's label), in English
    "memories": ("/n/acme/memories/", "table.memories", "Created", "Memory"),
    "audit": ("/audit/", "table.audit", "Time", "Action"),
    "subjects": ("/n/acme/subjects/", "main table", "Last activity", "Subject"),
    "keys": ("/api-keys/", "table.api-keys", "Created", "Prefix"),
    "members": ("/n/acme/members/", "main table", None, "User"),
    "webhooks": ("/n/acme/webhooks/", "main table", "Created", "URL"),
}


def row_cells(page: Any, table: str) -> list[dict[str, Any]]:
    """The first body row's cells top to bottom as drawn: label shown, class, position."""
    return page.locator(f"{table} tbody tr").first.evaluate(
        """row => Array.from(row.children).map(cell => ({
            label: cell.dataset.label || "",
            shown: getComputedStyle(cell, "::before").content,
            classes: cell.className,
            top: cell.getBoundingClientRect().top,
            left: cell.getBoundingClientRect().left,
            height: cell.getBoundingClientRect().height,
        })).filter(cell => cell.height > 0).sort((a, b) => a.top - b.top)"""
    )


def check_stacked(page: Any, table: str, date: str | None, main: str) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], page.url
    cells = row_cells(page, table)
    assert len({round(cell["left"]) for cell in cells}) == 1, cells  # one above the other
    firsts = [date, main] if date else [main]
    assert [cell["label"] for cell in cells[: len(firsts)]] == firsts, (page.url, cells)
    for cell in cells:
        assert cell["label"], (page.url, cell)
        assert cell["shown"] == f'"{cell["label"]}"', (page.url, cell)


@pytest.mark.parametrize("locale", ["en-GB", "zh-CN"])
def test_tables_stack_on_a_phone(
    cast: Cast, live_server: Any, browser: Any, tmp_path: Path, locale: str
) -> None:
    base = live_server.url
    context = browser.new_context(viewport=PHONE, locale=locale)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    said = watch_console(page)
    log_in(page, base, "olive")
    language = "en" if locale == "en-GB" else "zh-hans"
    problems: list[str] = []
    endpoint = WebhookEndpoint.objects.get()
    pages = {
        **TABLE_PAGES,
        "delivery log": (f"/n/acme/webhooks/{endpoint.pk}/", "#deliveries", "When", "Event"),
    }
    for name, (path, table, date, main) in pages.items():
        page.goto(base + path)
        with translation.override(language):
            check_stacked(page, table, date and gettext(date), gettext(main))
        page.screenshot(
            path=shots(tmp_path) / f"table-{name.replace(' ', '-')}-{locale[:2]}.png",
            full_page=True,
        )
        problems += axe_problems(page)
    # A chart's figures, the columns named by the data: each day stacked, labelled.
    page.goto(f"{base}/n/acme/")
    page.locator("figure.chart details summary").first.click()
    with translation.override(language):
        check_stacked(page, "figure.chart table", None, gettext("Day"))
    # The memories' first row is in the first screen, its filters folded.
    page.goto(f"{base}/n/acme/memories/")
    assert page.locator("#filters details").get_attribute("open") is None
    first = page.locator("table.memories tbody tr").first.locator("td.row-main").bounding_box()
    assert first["y"] + first["height"] <= PHONE["height"], first
    # A member's buttons are in reach: no sideways scrolling to find them.
    page.goto(f"{base}/n/acme/members/")
    with translation.override(language):
        words = gettext("Remove %(name)s") % {"name": "vera"}
    shown = page.get_by_role("button", name=words).bounding_box()
    assert shown["x"] >= 0
    assert shown["x"] + shown["width"] <= PHONE["width"]
    assert problems == []
    assert csp_refusals(said) == []
    context.close()


def test_tables_stay_tables_on_a_desktop(cast: Cast, live_server: Any, browser: Any) -> None:
    context = browser.new_context(viewport=DESKTOP)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    log_in(page, live_server.url, "olive")
    page.goto(f"{live_server.url}/audit/")
    cells = row_cells(page, "table.audit")
    assert len({round(cell["top"]) for cell in cells}) == 1  # side by side, in one line
    assert [cell["label"] for cell in cells][:2] == ["Event", "Time"]  # in the template's order
    assert all(cell["shown"] == "none" for cell in cells)
    assert page.locator("table.audit thead").is_visible()
    context.close()
