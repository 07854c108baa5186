"""The API-keys pages in headless Chromium (the governance tests' browser, axe and console
helpers): create a key, see it once, copy it, find it gone on reload and in the list, revoke
it; axe-core on every page; the raw key without JavaScript.

The cast is key_cast.py's, built with `transactional_db` so that the live server's thread
sees it, with passwords: these tests log in through the form."""

from __future__ import annotations

import re
from typing import Any

import pytest

from apps.accounts.models import ApiKey
from apps.accounts.selectors import RAW_KEY_PATTERN
from tests.accounts.key_cast import KeyCast, build_key_cast
from tests.browser import PASSWORD, TIMEOUT_MS, axe_problems, csp_refusals, log_in, watch_console
from tests.conftest import api_client


@pytest.fixture
def cast(transactional_db: None) -> KeyCast:
    return build_key_cast(password=PASSWORD)


def _create_in_the_form(page: Any, base: str, name: str) -> str:
    """Fill in and send the create form; the raw key from the page that answers."""
    page.goto(f"{base}/api-keys/")
    page.click("a.button:has-text('Create an API key')")
    page.wait_for_url(f"{base}/api-keys/new/")
    page.fill("#id_name", name)
    page.get_by_label("Acme (acme)").check()
    page.get_by_label("Read memories").check()
    page.get_by_label("Recall and assemble context").check()
    page.click("button:has-text('Create the key')")
    page.locator("#raw-key").wait_for()
    return str(page.input_value("#raw-key"))


def test_it_creates_a_key_shows_it_once_and_revokes_it(
    cast: KeyCast, live_server: Any, context: Any
) -> None:
    base = live_server.url
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
    page = context.new_page()
    said = watch_console(page)
    log_in(page, base, "olive")
    keys_before = ApiKey.objects.count()

    raw = _create_in_the_form(page, base, "Browser bot")
    match = RAW_KEY_PATTERN.match(raw)
    assert match is not None, raw
    prefix, secret = match.group("prefix", "secret")
    assert page.url == f"{base}/api-keys/new/"  # the answer to the POST: no address of its own
    assert ApiKey.objects.count() == keys_before + 1
    assert api_client(raw).get("/api/v1/namespaces/acme/memories").status_code == 200

    copy = page.locator("button.copy-key")
    copy.wait_for(state="visible")  # the page's script shows it once it runs
    copy.click()
    page.locator("#copy-status", has_text="Copied").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == raw

    # A reload resends the form: no second key is made, and the key is not shown again; the
    # browser lands on the key's page, told why.
    page.reload()
    page.wait_for_url(f"{base}/api-keys/{prefix}/")
    assert "This form was already used" in page.inner_text(".messages")
    assert secret not in page.content()
    assert page.locator("#raw-key").count() == 0
    assert ApiKey.objects.count() == keys_before + 1

    page.goto(f"{base}/api-keys/")
    assert secret not in page.content()
    row = page.locator("tr", has_text="Browser bot")
    assert prefix in row.inner_text()
    assert "Active" in row.inner_text()

    row.locator(f"a:has-text('{prefix}')").click()
    page.wait_for_url(f"{base}/api-keys/{prefix}/")
    assert secret not in page.content()
    assert "List and filter the memories of Acme (acme)" in page.inner_text(".abilities")
    page.click("a.button:has-text('Revoke…')")
    page.wait_for_url(f"{base}/api-keys/{prefix}/revoke/")
    assert "Browser bot" in page.inner_text("main")
    page.click("button.danger:has-text('Revoke “Browser bot”')")
    page.wait_for_url(f"{base}/api-keys/{prefix}/")
    assert "Revoked" in page.inner_text("main .badge.key-revoked")
    assert "is revoked" in page.inner_text(".messages")
    assert api_client(raw).get("/api/v1/namespaces/acme/memories").status_code == 401
    assert ApiKey.objects.get(prefix=prefix).revoked_at is not None
    assert csp_refusals(said) == []


def test_it_passes_axe_and_the_csp_on_every_api_key_page(
    cast: KeyCast, live_server: Any, context: Any
) -> None:
    base = live_server.url
    page = context.new_page()
    said = watch_console(page)
    log_in(page, base, "olive")
    problems: list[str] = []
    seen: list[str] = []

    def check(name: str, path: str | None = None) -> None:
        if path is not None:
            response = page.goto(f"{base}{path}")
            assert response is not None
            assert response.status == 200, (name, response.status)
        page.wait_for_load_state("load")
        seen.append(name)
        problems.extend(f"{name}: {problem}" for problem in axe_problems(page))

    check("list", "/api-keys/")
    check("list, filtered to nothing", "/api-keys/?state=revoked")
    check("create form", "/api-keys/new/")
    page.click("button:has-text('Create the key')")  # the browser checks the name first
    page.fill("#id_name", "x")
    page.click("button:has-text('Create the key')")
    page.locator(".error", has_text="Choose at least one namespace.").wait_for()
    check("create form with errors")
    raw = _create_in_the_form(page, base, "Axe bot")
    check("the new key, shown once")
    prefix = RAW_KEY_PATTERN.match(raw).group("prefix")  # type: ignore[union-attr]
    check("key detail", f"/api-keys/{prefix}/")
    page.fill("#id_expires_on", "2001-01-01")
    page.click("button:has-text('Set the expiry')")
    page.locator(".error", has_text="Choose a day after today").wait_for()
    check("key detail with an expiry error")
    check("shared key detail (not changeable)", f"/api-keys/{cast.shared_key.prefix}/")
    check("revoke confirmation", f"/api-keys/{prefix}/revoke/")
    page.click("button.danger")
    page.wait_for_url(f"{base}/api-keys/{prefix}/")
    # Checked without the "revoked" message: base.html's message list fails axe (see
    # test_it_shows_messages_in_a_list_axe_accepts).
    check("revoked key detail", f"/api-keys/{prefix}/")

    # And what others see: an editor's empty list.
    other = context.browser.new_context()
    try:
        editor = other.new_page()
        log_in(editor, base, "eddie")
        editor.goto(f"{base}/api-keys/")
        problems.extend(f"editor's list: {problem}" for problem in axe_problems(editor))
    finally:
        other.close()

    assert len(seen) == 10
    assert problems == [], "axe found serious or critical violations:\n" + "\n".join(problems)
    refused = csp_refusals(said)
    assert refused == [], "the Content-Security-Policy refused:\n" + "\n".join(refused)


def test_it_shows_messages_in_a_list_axe_accepts(
    cast: KeyCast, live_server: Any, context: Any
) -> None:
    base = live_server.url
    page = context.new_page()
    log_in(page, base, "olive")
    prefix = cast.acme_key.prefix
    page.goto(f"{base}/api-keys/{prefix}/revoke/")
    page.click("button.danger")
    page.wait_for_url(f"{base}/api-keys/{prefix}/")
    page.locator(".messages").wait_for()
    assert axe_problems(page) == []


def test_it_shows_the_key_as_selectable_text_without_javascript(
    cast: KeyCast,
    live_server: Any,
    browser: Any,
) -> None:
    base = live_server.url
    context = browser.new_context(java_script_enabled=False)
    context.set_default_timeout(TIMEOUT_MS)
    try:
        page = context.new_page()
        log_in(page, base, "olive")
        raw = _create_in_the_form(page, base, "No-script bot")
        assert RAW_KEY_PATTERN.match(raw)
        field = page.locator("#raw-key")
        assert field.get_attribute("readonly") is not None
        assert page.locator("label[for=raw-key]").inner_text().startswith("The API key")
        assert not page.locator("button.copy-key").is_visible()  # nothing to click without JS
        page.goto(f"{base}/api-keys/")
        assert re.search(r"No-script bot", page.inner_text("main"))
        assert raw not in page.content()
    finally:
        context.close()
