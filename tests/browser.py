"""Browser tests' groundwork (a pytest plugin, loaded by tests/conftest.py): Debian's Chromium
driven by Playwright, one browser per test module and a fresh context (own cookies) per test,
and the helpers every browser test uses: the login form, the console, axe-core.

Playwright cannot download its own browser here: the tests skip without /usr/bin/chromium,
unless MEMORYHUB_REQUIRE_BROWSER=1 (CI), which turns the skip into a failure."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run",
]  # fmt: skip
BLOCKING = ("serious", "critical")  # the axe impacts that fail a page
TIMEOUT_MS = 10_000
PASSWORD = "correct-horse-battery-1"  # the browser casts' users log in with it


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium for the module (each test opens its own context: its own cookies)."""
    if not shutil.which(CHROMIUM):
        reason = f"{CHROMIUM} is not installed (make test installs it when run as root)"
        if os.environ.get("MEMORYHUB_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{reason}, and MEMORYHUB_REQUIRE_BROWSER=1 forbids skipping.")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the tests' ORM calls happen in
    # it too, and the live server answers in its own thread.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            yield chromium
            chromium.close()
    finally:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    context.set_default_timeout(TIMEOUT_MS)
    yield context
    context.close()


def log_in(page: Any, base: str, username: str, password: str = PASSWORD) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{base}/")


def watch_console(page: Any) -> list[str]:
    """What the page's console and uncaught errors say, as "<url>: <text>"."""
    said: list[str] = []
    page.on("console", lambda message: said.append(f"{page.url}: {message.text}"))
    page.on("pageerror", lambda error: said.append(f"{page.url}: uncaught {error}"))
    return said


def csp_refusals(said: list[str]) -> list[str]:
    return [text for text in said if "Content Security Policy" in text]


def axe_problems(page: Any) -> list[str]:
    """The serious and critical violations axe-core finds on the page, one line per node."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [
        f"{page.url} [{violation['impact']}] {violation['id']}: {violation['help']} "
        f"at {node['target']} {node['html'][:200]}"
        for violation in results.response["violations"]
        if violation["impact"] in BLOCKING
        for node in violation["nodes"]
    ]
