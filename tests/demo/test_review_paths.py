"""Every path of the review queue has an example in the demo, made by the write pipeline as an
app's writes would make it: a disputed fact and a near-duplicate pair in English (Tom,
demo-user-2) and in Chinese (Li, demo-user-3), each shown with what a person decides from,
on the English page and the Chinese one. (That the corrected allergy stays corrected, the
playground's answer, is tests/demo/test_load.py's.)"""

from __future__ import annotations

import re

import pytest
from django.test import Client

from apps.governance.selectors import review_queue
from apps.namespaces.models import Namespace

ZH = "zh-CN,zh;q=0.9"
DISPUTED = {
    # subject: (the fact in doubt, the turn that put it in doubt)
    "demo-user-2": (
        "The user takes ferrous sulfate.",
        "My doctor took me off the ferrous sulfate.",
    ),
    "demo-user-3": ("用户对芒果过敏。", "医生说我对芒果过敏可能是误诊。"),
}
PAIRS = {
    "demo-user-2": {
        "Prefers cooking classes on weekday evenings, after work.",
        "Prefers weekday evening cooking classes, after work.",
    },
    "demo-user-3": {"喜欢周末上午上烘焙课。", "喜欢在周末上午上烘焙课。"},
}
LABELS = {
    "en": ("Said in the conversation", "Put in doubt by", "The fact's history", "Looks like"),
    "zh-hans": ("对话中的原话", "引起存疑的对话", "这条事实的历史", "类似于"),
}


def queue_page(client: Client, language: str) -> str:
    headers = {"HTTP_ACCEPT_LANGUAGE": ZH} if language != "en" else {}
    response = client.get("/n/demo/review/", **headers)
    assert response.status_code == 200
    return response.content.decode()


def articles(html: str, reason: str) -> list[str]:
    return re.findall(rf'<article [^>]*data-reason="{reason}".*?</article>', html, re.S)


def text(html: str) -> str:
    """What a person reads of some HTML: its text, entities undone, spaces collapsed."""
    from html import unescape

    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def test_the_pipeline_disputed_a_fact_in_each_language(demo: Namespace) -> None:
    queue = review_queue(namespace=demo)
    found = {
        item.row.memory.subject.external_id: (item.row.content, item.other and item.other.content)
        for item in queue["disputed"]
    }
    assert found == DISPUTED
    for item in queue["disputed"]:
        assert item.history is not None
        assert [step.disputed for step in item.history.steps][-1]
        assert any(turn.is_source for turn in item.turns)


def test_the_app_wrote_a_near_duplicate_pair_in_each_language(demo: Namespace) -> None:
    pairs = {
        item.row.memory.subject.external_id: {item.row.content, item.other.content}
        for item in review_queue(namespace=demo)["duplicate"]
        if item.other is not None
    }
    assert pairs == PAIRS


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_queue_shows_each_path_with_what_to_decide_from(
    demo: Namespace, alice_client: Client, language: str
) -> None:
    said, doubted_by, history, looks_like = LABELS[language]
    html = queue_page(alice_client, language)
    disputed = [text(article) for article in articles(html, "disputed")]
    for fact, turn in DISPUTED.values():
        (shown,) = [item for item in disputed if item.startswith(fact)]
        assert f"{doubted_by}: “{turn}”" in shown
        assert said in shown
        assert history in shown
    (iron,) = [item for item in disputed if item.startswith(DISPUTED["demo-user-2"][0])]
    # Its source turn, between the turns before and after it, speakers named.
    source = iron[iron.index(said) : iron.index(doubted_by)]
    assert "I take ferrous sulfate every morning." in source
    assert "Take it with orange juice" in source
    assert source.index("Three short runs a week") < source.index("ferrous sulfate every morning")
    duplicates = [text(article) for article in articles(html, "duplicate")]
    for pair in PAIRS.values():
        assert any(
            all(memory in item for memory in pair) and looks_like in item for item in duplicates
        ), pair
