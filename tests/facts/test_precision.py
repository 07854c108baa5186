"""Precision first, rule by rule (no database): a health fact only for a known drug, allergen
or condition; work and home only from sure cues."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.facts.rules import facts_of

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)


def stated(text: str) -> list[tuple[str, str]]:
    return [(f.statement, f.slot) for f in facts_of(text, NOW) if f.statement]


@pytest.mark.parametrize(
    "text",
    [
        "I started taking notes",  # "notes" is no drug
        "I'm on someone else's side",  # "-one" is no drug suffix any more
        "I'm at Home Depot looking for paint",  # being somewhere is not working there
        "I'm allergic to Mondays",
        "我对加班过敏",
        "我在学钢琴",  # 在 + an activity is not a home
        "我在开会",
        "I basically live at the gym",
        "I'm in Rome for the weekend",
        "要是我住在海边就好了",
        "如果我是医生，我肯定天天劝人早睡",
    ],
)
def test_ordinary_words_make_no_fact(text: str) -> None:
    assert stated(text) == []


@pytest.mark.parametrize(
    ("text", "statement"),
    [
        ("I take metformin twice a day", "The user takes metformin."),
        ("I'm allergic to peanuts", "The user is allergic to peanuts."),
        ("I have diabetes", "The user has diabetes."),
        ("我在服用二甲双胍", "用户在服用二甲双胍。"),
        ("我对花生过敏", "用户对花生过敏。"),
        ("I left Spotify, I'm at Shopify now", "The user works at Shopify."),
        ("I live in a small town near Leeds", "The user lives in a small town near Leeds."),
        ("moved to leeds last weekend", "The user lives in Leeds."),
    ],
)
def test_a_sure_cue_with_a_known_value_makes_its_fact(text: str, statement: str) -> None:
    assert statement in [s for s, _ in stated(text)]


def test_a_chinese_drug_name_is_known_by_its_pharmacological_morphemes() -> None:
    # 非布司他 (febuxostat) is in no list: 司他 marks it, as 唑 marks 甲巯咪唑.
    assert stated("医生给我换成非布司他了")[0][0] == "用户在服用非布司他。"
