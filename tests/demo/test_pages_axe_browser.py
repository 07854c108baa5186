"""axe-core finds no serious or critical violation on any page a person reads: every dashboard
page from the URL configuration and every portal page (tests/demo/pages.py lists them, with
real objects behind them), on a desktop and on a phone (375 px), in English and in Chinese.

One browser context a combination of width and language: its login (and, for the portal,
the link it followed) serves all its pages."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from apps.demo.services import demo_actor, demo_load
from apps.namespaces.models import Namespace
from apps.privacy.services import portal_link_create
from tests.browser import TIMEOUT_MS, axe_problems, log_in
from tests.demo.pages import ZH, Demo, build_world, page_kwargs, queries

WIDTHS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 375, "height": 812}}
LANGUAGES = {"en": "en", "zh-hans": ZH}


@pytest.fixture
def world(transactional_db: None, alice_client: Client, settings: Any) -> Demo:
    """The demo and the objects behind every page, committed: the live server's thread reads
    them through its own connection."""
    demo_load(actor=demo_actor(name="tests"))
    return build_world(Namespace.objects.get(slug="demo"), alice_client, settings)


def urls(world: Demo, area: str) -> list[str]:
    return [
        reverse(name, kwargs=kwargs) + query
        for name, kwargs in sorted(page_kwargs(world).items())
        if name.startswith(area) and name != "dashboard:account:login"
        for query in queries(world).get(name, [""])
    ]


def visit(page: Any, base: str, url: str) -> list[str]:
    """The page's axe problems, or why it could not be checked."""
    response = page.goto(base + url)
    if response is None or response.status != 200:
        return [f"{url}: status {response.status if response else None}"]
    return axe_problems(page)


def combination(
    browser: Any, base: str, world: Demo, viewport: dict[str, int], locale: str
) -> list[str]:
    """Every page in one context of this width and language: the login page, then the
    dashboard's pages logged in as Alice, then the portal's through a link for the subject."""
    context = browser.new_context(
        viewport=viewport, extra_http_headers={"Accept-Language": LANGUAGES[locale]}
    )
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    try:
        problems = visit(page, base, reverse("dashboard:account:login"))
        log_in(page, base, "alice", "alice-password-1")
        for url in urls(world, "dashboard:"):
            problems += visit(page, base, url)
        link = portal_link_create(
            actor=demo_actor(name="tests"),
            namespace=world.namespace,
            subject=world.subject,
            base_url=base,
            locale=locale,
        )
        page.goto(link.url)
        page.wait_for_url(f"{base}/portal/{world.subject.pk}/**")
        for url in urls(world, "privacy:"):
            problems += visit(page, base, url)
    finally:
        context.close()
    return problems


def test_no_page_has_a_serious_or_critical_violation(
    world: Demo, live_server: Any, browser: Any
) -> None:
    found: dict[str, list[str]] = {}
    for width, viewport in WIDTHS.items():
        for locale in LANGUAGES:
            problems = combination(browser, live_server.url, world, viewport, locale)
            if problems:
                found[f"{width}, {locale}"] = problems
    assert found == {}, "\n".join(
        f"{where}:\n  " + "\n  ".join(problems) for where, problems in found.items()
    )
