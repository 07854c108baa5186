"""Dashboard and API headers: a Content-Security-Policy without inline script or style, and
no caching of anything that may show decrypted content."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from tests.conftest import Tenant
from tests.foundation.test_dashboard_shell import DASHBOARD_PAGES

INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)
INLINE_STYLE = re.compile(r"<style\b|\sstyle=", re.IGNORECASE)
INLINE_HANDLER = re.compile(r"\son[a-z]+=|\shx-on", re.IGNORECASE)


def directives(response: object) -> dict[str, str]:
    header = response["Content-Security-Policy"]  # type: ignore[index]
    return {
        part.split()[0]: " ".join(part.split()[1:])
        for part in (p.strip() for p in header.split(";"))
        if part
    }


@pytest.mark.django_db
@pytest.mark.parametrize("page", [*DASHBOARD_PAGES, "dashboard:account:login"])
def test_every_page_has_a_strict_csp_and_nothing_inline(alice_client: Client, page: str) -> None:
    response = alice_client.get(reverse(page))
    csp = directives(response)
    assert csp["default-src"] == "'self'"
    assert csp["script-src"] == "'self'"
    assert csp["style-src"] == "'self'"
    assert csp["frame-ancestors"] == "'none'"
    assert "unsafe-inline" not in response["Content-Security-Policy"]
    html = response.content.decode()
    assert not INLINE_SCRIPT.search(html)
    assert not INLINE_STYLE.search(html)
    assert not INLINE_HANDLER.search(html)


@pytest.mark.django_db
def test_the_error_pages_have_nothing_inline(alice_client: Client) -> None:
    from django.template import loader

    for name in ("400.html", "404.html", "500.html"):
        html = loader.get_template(name).render({})
        assert not INLINE_SCRIPT.search(html), name
        assert not INLINE_STYLE.search(html), name


@pytest.mark.django_db
@pytest.mark.parametrize("page", DASHBOARD_PAGES)
def test_pages_of_a_signed_in_user_are_never_stored(alice_client: Client, page: str) -> None:
    response = alice_client.get(reverse(page))
    assert "no-store" in response["Cache-Control"]
    assert "private" in response["Cache-Control"]


@pytest.mark.django_db
def test_api_responses_with_decrypted_content_are_never_stored(acme: Tenant) -> None:
    created = acme.client.post(
        acme.url("memories"), {"subject": "u1", "content": "Likes tea"}, format="json"
    )
    assert "no-store" in created["Cache-Control"]
    read = acme.client.get(acme.url(f"memories/{created.json()['id']}"))
    assert read.json()["content"] == "Likes tea"
    assert "no-store" in read["Cache-Control"]


@pytest.mark.django_db
def test_the_api_docs_load_their_set_up_script_from_a_url(client: Client) -> None:
    html = client.get("/api/docs/").content.decode()
    assert "SwaggerUIBundle" not in html  # the set-up script is not inline
    script = client.get("/api/docs/?script=")
    assert script.status_code == 200
    assert "SwaggerUIBundle" in script.content.decode()
