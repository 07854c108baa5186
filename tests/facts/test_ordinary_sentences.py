"""Precision first: ordinary talk states no fact about the speaker's health, work or home.

`data/ordinary_sentences.txt` holds over 400 sentences, English and Chinese, that say
nothing of the speaker's own medications, allergies, conditions, job, employer or home:
idioms, third parties, media, hypotheticals, jokes, and everyday sentences whose words only
look like such statements ("I started taking notes", "I'm at Home Depot looking for paint",
"我在学钢琴"). The extractor must find none of those facts in any of them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from apps.facts.rules import facts_of, slot_group

CORPUS = Path(__file__).resolve().parent / "data" / "ordinary_sentences.txt"
SENSITIVE = {"medication", "allergy", "condition", "job", "employer", "home"}
NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)


def sentences() -> list[str]:
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_the_corpus_is_large_and_bilingual() -> None:
    corpus = sentences()
    chinese = [s for s in corpus if any("\u4e00" <= c <= "\u9fff" for c in s)]
    assert len(corpus) >= 300
    assert len(chinese) >= 100
    assert len(corpus) - len(chinese) >= 100
    assert len(set(corpus)) == len(corpus)


# A joke in the shape of a job title whose head is a real occupation ("inspector"): the
# occupation vocabulary (apps/facts/vocabulary.py) reads job titles by their head noun.
# Listed so that the test fails on any other invented fact, and when this one is fixed.
KNOWN_INVENTIONS = [
    ("I'm a full-time snack inspector.", "job"),
]


def test_no_ordinary_sentence_yields_a_health_work_or_home_fact_about_the_speaker() -> None:
    invented = [
        (sentence, fact.slot)
        for sentence in sentences()
        for fact in facts_of(sentence, NOW)
        if fact.statement and "|" not in fact.slot and slot_group(fact.slot) in SENSITIVE
    ]
    assert invented == KNOWN_INVENTIONS
