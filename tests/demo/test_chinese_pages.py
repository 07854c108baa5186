"""Every dashboard and portal page, rendered in Simplified Chinese on the demo that
`make run` loads, says in Chinese what the product (not a person) wrote: no choice label,
status word, decision or reason is left in English.

The pages are found from the URL configuration: a new page that this test cannot open fails
it until it is listed here."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import pytest
from django.apps import apps
from django.test import Client
from django.urls import reverse
from django.utils import translation

from apps.demo.services import demo_actor
from apps.namespaces.models import Namespace
from apps.privacy.services import portal_link_create
from tests.demo.pages import (
    NOT_PAGES,
    PLAYGROUND,
    ZH,
    Demo,
    build_world,
    page_kwargs,
    queries,
    url_names,
)

# Words the product writes that are not choice labels of a model field.
PRODUCT_WORDS = {
    "ok",
    "in-process",
    "created",
    "supersede",
    "a new value for the same fact",
    "user",
    "assistant",
    "buffer",
    "window",
    "summary",
    "summary_buffer",
    "edges",
    "Allow",
    "Store and tag",
    "Redact",
    "Reject",
}


def choice_labels() -> set[str]:
    """The English label of every choice of every model field in the project's apps."""
    labels: set[str] = set()
    with translation.override("en"):
        for model in apps.get_models():
            if not model.__module__.startswith("apps."):
                continue
            for field in model._meta.get_fields():
                for _, label in getattr(field, "choices", None) or []:
                    text = str(label)
                    if len(text) > 1 and not text.isdigit():
                        labels.add(text)
    return labels


class Words(HTMLParser):
    """A page's text nodes and the attributes people hear or read, outside scripts."""

    SPOKEN = ("aria-label", "title", "placeholder", "alt", "aria-description")

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "code", "pre"):
            self._skip += 1
        for name, value in attrs:
            if name in self.SPOKEN and value:
                self.found.append(value)
            if tag == "input" and name == "value" and ("type", "submit") in attrs and value:
                self.found.append(value)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "code", "pre") and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        text = " ".join(data.split())
        if text and not self._skip:
            self.found.append(text)


def english_left(html: str, known: set[str]) -> list[str]:
    parser = Words()
    parser.feed(html)
    left = []
    for text in parser.found:
        bare = text.strip(" :·,.()[]–—")
        if bare in known or any(len(label) > 12 and label in text for label in known):
            left.append(text)
    return left


@pytest.fixture
def world(demo: Namespace, alice_client: Client, settings: Any) -> Demo:
    return build_world(demo, alice_client, settings)


def test_every_page_is_listed_or_set_aside(world: Demo) -> None:
    listed = set(page_kwargs(world)) | set(NOT_PAGES)
    assert url_names() - listed == set(), "a page this test does not open"
    assert listed - url_names() == set(), "a listed page that no longer exists"


def test_every_page_speaks_chinese_only(world: Demo, alice_client: Client) -> None:
    known = choice_labels() | PRODUCT_WORDS
    portal = Client()
    link = portal_link_create(
        actor=demo_actor(name="tests"),
        namespace=world.namespace,
        subject=world.subject,
        base_url="http://testserver",
        locale="zh-hans",
    )
    entered = portal.get(link.url.removeprefix("http://testserver"))
    assert entered.status_code == 303, entered.status_code
    problems: dict[str, list[str]] = {}
    for name, kwargs in sorted(page_kwargs(world).items()):
        client = portal if name.startswith("privacy:") else alice_client
        for query in queries(world).get(name, [""]):
            url = reverse(name, kwargs=kwargs) + query
            response = client.get(url, HTTP_ACCEPT_LANGUAGE=ZH, follow=True)
            if name == "dashboard:account:login":
                response = Client().get(url, HTTP_ACCEPT_LANGUAGE=ZH)
            html = response.content.decode()
            if response.status_code != 200 or '<html lang="zh-hans">' not in html:
                problems[url] = [f"status {response.status_code}"]
            elif left := english_left(html, known):
                problems[url] = sorted(set(left))
    for compare in ("", "on"):
        answer = alice_client.post(
            "/playground/", {**PLAYGROUND, "compare": compare}, HTTP_ACCEPT_LANGUAGE=ZH
        )
        assert answer.status_code == 200
        assert "摘要 + 缓冲" in answer.content.decode()
        if left := english_left(answer.content.decode(), known):
            problems[f"/playground/ (assembled, compare={compare!r})"] = sorted(set(left))
    assert problems == {}, "\n".join(f"{url}: {words}" for url, words in problems.items())


def test_the_check_finds_english_on_a_page() -> None:
    assert english_left("<p>决定: <b>supersede</b></p><span title='ok'></span>", PRODUCT_WORDS) == [
        "supersede",
        "ok",
    ]
    assert english_left("<p>The user lives in Shanghai.</p>", PRODUCT_WORDS) == []
