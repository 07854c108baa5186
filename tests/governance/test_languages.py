"""The governance pages in Simplified Chinese: chosen by the browser's language or by the
switch in the header; English stays the default."""

from __future__ import annotations

import re

import pytest

from tests.governance.conftest import Cast

CJK = re.compile(r"[\u4e00-\u9fff]")


def pages(cast: Cast) -> list[str]:
    return [
        "/n/acme/memories/",
        f"/n/acme/memories/{cast.fact.pk}/",
        f"/n/acme/memories/{cast.fact.pk}/edit/",
        f"/n/acme/memories/{cast.fact.pk}/delete/",
        "/n/acme/review/",
        "/n/acme/subjects/",
        f"/n/acme/subjects/{cast.subject_id}/",
        f"/n/acme/subjects/{cast.subject_id}/erase/",
        "/n/acme/memories/purge/?kind=semantic",
    ]


def heading(html: str) -> str:
    found = re.search(r"<h1>(.*?)</h1>", html, re.S)
    assert found is not None
    return found.group(1)


@pytest.mark.parametrize("index", range(9))
def test_it_speaks_chinese_to_a_chinese_browser(cast: Cast, index: int) -> None:
    response = cast.client("olive").get(pages(cast)[index], HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    html = response.content.decode()
    assert '<html lang="zh-hans">' in html
    assert CJK.search(heading(html)), heading(html)
    assert CJK.search(re.search(r"<title>(.*?)</title>", html, re.S).group(1))  # type: ignore[union-attr]


def test_it_speaks_english_by_default(cast: Cast) -> None:
    html = cast.client("olive").get("/n/acme/review/").content.decode()
    assert '<html lang="en">' in html
    assert "<h1>Review queue" in html


def test_it_switches_language_from_the_header(cast: Cast) -> None:
    client = cast.client("olive")
    response = client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/n/acme/review/"})
    assert response.status_code == 302
    assert response["Location"] == "/n/acme/review/"
    html = client.get("/n/acme/review/").content.decode()
    assert CJK.search(heading(html))


def test_it_refuses_in_chinese_to_a_chinese_browser(cast: Cast) -> None:
    response = cast.client("olive").post(
        "/n/acme/memories/purge/?kind=semantic",
        {"reason": "r", "confirmation": "acm", "expected": 1},
        HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9",
    )
    html = response.content.decode()
    assert "请输入命名空间的标识（slug）以确认。" in html
    assert "Type the namespace" not in html
