"""Health changes read around known values (`apps.facts.changes`): each cue, with what it
must read and what it must not. Pure: no database."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.facts.changes import Change, changes_of
from apps.facts.rules import facts_of

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def stop(group: str, value: str) -> Change:
    return Change(group, value, holds=False)


def start(group: str, value: str) -> Change:
    return Change(group, value, holds=True)


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # a stop cue before a drug, and what holds instead
        (
            "They took me off metoprolol and put me on amlodipine.",
            [stop("medication", "metoprolol"), start("medication", "amlodipine")],
        ),
        ("I stopped my montelukast.", [stop("medication", "montelukast")]),
        (
            "Switched from sertraline to fluoxetine last month.",
            [stop("medication", "sertraline"), start("medication", "fluoxetine")],
        ),
        (
            "Taking lisinopril instead of losartan now.",
            [stop("medication", "losartan"), start("medication", "lisinopril")],
        ),
        # allergies: a denial, with a modifier before the allergen, then what it was
        (
            "I'm not allergic to tree nuts after all, it was sesame.",
            [stop("allergy", "nuts"), start("allergy", "sesame")],
        ),
        ("I've outgrown my egg allergy.", [stop("allergy", "egg")]),
        # conditions: what it was not, what it is
        (
            "They weren't migraines at all, they're tension headaches.",
            [stop("condition", "migraines"), start("condition", "tension headaches")],
        ),
        (
            "医生说不是哮喘，就是过敏性鼻炎闹的",
            [stop("condition", "哮喘"), start("condition", "过敏性鼻炎")],
        ),
        (
            "把氨氯地平换成缬沙坦了",
            [stop("medication", "氨氯地平"), start("medication", "缬沙坦")],
        ),
        ("让我把二甲双胍停了", [stop("medication", "二甲双胍")]),
        # a switch: what comes before it stops, what follows it holds
        (
            "医生说可能是氨氯地平的副作用，给我换成缬沙坦了",
            [stop("medication", "氨氯地平"), start("medication", "缬沙坦")],
        ),
        (
            "so they switched me to insulin, the metformin wasn't enough",
            [start("medication", "insulin")],
        ),
        ("the rheumatologist pulled the ibuprofen", [stop("medication", "ibuprofen")]),
        # a prescription starts a value with nothing stopped
        ("开了氯雷他定让我每天吃一片", [start("medication", "氯雷他定")]),
        ("the doctor started me on lisinopril", [start("medication", "lisinopril")]),
        # a test result
        ("the shellfish allergy test came back totally negative", [stop("allergy", "shellfish")]),
        ("过敏原检测结果芒果是阴性", [stop("allergy", "芒果")]),
        (
            "根本不是溃疡，是幽门螺杆菌感染",
            [stop("condition", "溃疡"), start("condition", "幽门螺杆菌")],
        ),
        ("its celiac, not ibs at all", [stop("condition", "ibs"), start("condition", "celiac")]),
        ("我对青霉素不过敏", [stop("allergy", "青霉素")]),
    ],
)
def test_a_cue_beside_a_known_value_reads_a_change(sentence: str, expected: list[Change]) -> None:
    assert changes_of(sentence) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "I read an article about amlodipine.",  # a start cue alone starts nothing
        "I take metformin with breakfast.",
        "My dad stopped his warfarin last week.",  # somebody else's
        "My wife is not allergic to peanuts.",
        "If I stopped metformin, would my sugar go up?",  # what might be
        "I get side effects from the metformin.",  # "from" is no switch
        "The recipe has no peanuts.",  # no allergy spoken of
        "I have allergic rhinitis.",  # "allergic rhinitis" is a condition, no allergy
        "我妈不吃二甲双胍了",
        "如果停了二甲双胍会怎么样",
        "Is it normal to feel tired on metoprolol?",
        "他在吃氯雷他定，他说换成别的药了",  # 他 the pronoun, not the 他 of a drug's name
        "my doctor says it's probably asthma",  # a start cue with nothing stopped
    ],
)
def test_no_change_without_a_cue_about_the_speaker(sentence: str) -> None:
    assert changes_of(sentence) == []


def test_a_turn_ends_the_old_value_and_states_the_new_one() -> None:
    facts = facts_of(
        "Update: the cardiologist took me off metoprolol and put me on amlodipine.", NOW
    )
    assert [f.statement for f in facts if f.statement] == ["The user takes amlodipine."]
    ends = [e for f in facts for e in f.ends]
    assert [(e.group, e.value) for e in ends] == [("medication", "metoprolol")]
    assert not any(f.disputes for f in facts)


def test_a_stop_with_nothing_instead_and_a_change_cue_is_left_to_a_person() -> None:
    facts = facts_of("My doctor took me off the metformin.", NOW)
    assert not any(f.ends for f in facts)
    assert [d.value for f in facts for d in f.disputes] == ["metformin"]


def test_a_chinese_turn_states_what_it_was() -> None:
    facts = facts_of("医生说不是哮喘，就是过敏性鼻炎闹的", NOW)
    assert [f.statement for f in facts if f.statement] == ["用户患有过敏性鼻炎。"]
    assert [(e.group, e.value) for f in facts for e in f.ends] == [("condition", "哮喘")]


def test_a_later_sentence_of_the_turn_says_what_holds_instead() -> None:
    text = "The allergist ran a full panel and shellfish came back negative. It's peanuts."
    facts = facts_of(text, NOW)
    assert [f.statement for f in facts if f.statement] == ["The user is allergic to peanuts."]
    assert [(e.group, e.value) for f in facts for e in f.ends] == [("allergy", "shellfish")]


@pytest.mark.parametrize(
    ("text", "group"),
    [
        ("sorry, the metformin is my mom's. i dont take anything myself", "medication"),
        ("turns out I'm not allergic to anything", "allergy"),
        ("我自己啥药都不吃", "medication"),
        ("我自己啥都不过敏", "allergy"),
    ],
)
def test_saying_there_is_nothing_ends_the_whole_group(text: str, group: str) -> None:
    ends = [e for f in facts_of(text, NOW) for e in f.ends]
    assert any(e.group == group and not e.value for e in ends)


def test_a_known_condition_the_speaker_treats_is_theirs() -> None:
    facts = facts_of("I take montelukast every night for my asthma", NOW)
    assert [f.statement for f in facts] == ["The user takes montelukast.", "The user has asthma."]
    assert all(f.slot != "condition:cold" for f in facts_of("I'm done with my cold", NOW))
