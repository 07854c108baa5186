"""Every visible string of the audit viewer goes through Django's translation machinery, and
the pages speak Simplified Chinese where the catalog has the words."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.template.base import Lexer, TokenType

from tests.dashboard.audit.conftest import AuditCast

TEMPLATES = Path(__file__).resolve().parents[3] / "templates" / "dashboard" / "audit"
TAG = re.compile(r"<[^>]*>", re.S)


def visible_text(source: str) -> str:
    """The template's literal text outside HTML tags, template tags, variables, comments and
    `{% blocktranslate %}` blocks: what a reader would see untranslated."""
    text, translating = [], False
    for token in Lexer(source).tokenize():
        if token.token_type == TokenType.BLOCK:
            name = token.contents.split()[0]
            translating = name == "blocktranslate" or (translating and name == "plural")
        elif token.token_type == TokenType.TEXT and not translating:
            text.append(token.contents)
    return TAG.sub(" ", "".join(text))


def test_it_finds_untranslated_text_in_a_template() -> None:
    assert visible_text("{% translate 'A' %}<p title='x'>Hello {{ name }}</p>").split() == ["Hello"]


@pytest.mark.parametrize("path", sorted(TEMPLATES.glob("*.html")), ids=lambda path: path.name)
def test_it_puts_every_visible_string_through_the_translation_machinery(path: Path) -> None:
    source = path.read_text()
    assert re.search(r"{% load [^%]*\bi18n\b", source), "no {% load i18n %}"
    assert re.findall(r"[A-Za-z]{2,}", visible_text(source)) == []
    for attribute in re.findall(r'(?:aria-label|title|placeholder|alt)="([^"]*)"', source):
        assert attribute.startswith(("{%", "{{")), attribute


def test_it_serves_the_log_in_simplified_chinese_when_asked(cast: AuditCast) -> None:
    html = (
        cast.client("alice")
        .get("/audit/", headers={"Accept-Language": "zh-CN,zh;q=0.9"})
        .content.decode()
    )
    assert '<html lang="zh-hans">' in html
