"""The favicon: /favicon.ico (which browsers ask for whatever a page links) answers with the
pages' icon, an image; every page links it in its head; the browser loads it under the
Content-Security-Policy, on the dashboard and in the portal."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.browser import csp_refusals, watch_console

pytestmark = pytest.mark.django_db


def test_it_answers_favicon_ico_with_an_image() -> None:
    response = Client().get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml"
    assert b"<svg" in response.content
    assert "max-age=86400" in response["Cache-Control"]


@pytest.mark.parametrize("width", [1280, 375])
def test_the_browser_loads_the_icon_the_pages_link(
    live_server: Any, browser: Any, width: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": 800})
    page = context.new_page()
    said = watch_console(page)
    base = live_server.url
    for path in ("/accounts/login/", "/portal/receipts/no-such-code/"):
        page.goto(base + path)
        icon = page.locator("head link[rel=icon]")
        assert icon.count() == 1
        href = icon.get_attribute("href")
        linked = page.request.get(base + href)
        assert linked.status == 200
        assert linked.headers["content-type"].startswith("image/")
    answered = page.request.get(f"{base}/favicon.ico")
    assert answered.status == 200
    assert answered.headers["content-type"] == "image/svg+xml"
    assert csp_refusals(said) == []
    context.close()
