"""Extractors side by side: the rules, the LLM and both, on the same data.

Three parts, each run through every extractor:

- **knowledge-update scenarios** (tests/knowledge/<set>.json), sent request by request
  through the write pipeline of a scratch namespace that runs the extractor: scenarios fully
  right, and the stale phrases of the critical (allergy, medical) scenarios still stated by
  a current fact: corrected health facts left current;
- **the ordinary-sentence corpus** (tests/facts/data/ordinary_sentences.txt), a sentence
  at a time: facts about the speaker's health, work or home found in sentences that state
  none;
- **a LoCoMo sample** (the dev conversations, when ../shared/data is there), a session's
  turns a batch: how often the LLM is asked, and how many facts it keeps.

The LLM's calls, failures, refusals by reason and latencies are read from its counters
(`apps.pipeline.llm_health`), reset before each extractor.
"""

from __future__ import annotations

import secrets
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction

from apps.evaluation import locomo
from apps.evaluation.knowledge import (
    ACTOR,
    Outcome,
    Scenario,
    current_facts,
    judge,
    send_request,
)
from apps.facts.rules import slot_group
from apps.namespaces.models import Namespace
from apps.namespaces.services import namespace_create, namespace_delete, namespace_update
from apps.pipeline import extraction, llm_health
from apps.pipeline.extractors import extract_with_fallback, get_extractor

SENSITIVE = frozenset({"medication", "allergy", "condition", "job", "employer", "home"})
MODES = ("offline", "llm", "both")


@dataclass
class Figures:
    mode: str
    scenarios: int = 0
    right: int = 0
    health_left_current: int = 0
    sentences: int = 0
    invented: list[tuple[str, str]] = field(default_factory=list)
    invented_by_llm: int = 0  # of those, proposed by the LLM (the others are the rules')
    turns: int = 0  # user turns extracted, in all three parts
    locomo_turns: int = 0
    locomo_facts: int = 0
    calls: int = 0
    failures: int = 0
    fallbacks: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    p50_seconds: float | None = None
    seconds: float = 0.0
    failed: list[str] = field(default_factory=list)  # the scenarios not fully right


def _scenario(namespace: Namespace, scenario: Scenario, subject: str) -> Outcome:
    for number, turns in enumerate(scenario.requests):
        send_request(namespace, subject, turns, f"{scenario.id}: request {number}")
    return judge(scenario, current_facts(namespace, subject))


def run_scenarios(mode: str, scenarios: list[Scenario], figures: Figures) -> None:
    with transaction.atomic():
        namespace = namespace_create(
            actor=ACTOR, slug=f"extractor-eval-{secrets.token_hex(4)}", name="Extractor eval"
        )
        namespace = namespace_update(actor=ACTOR, namespace=namespace, extractor=mode)
    try:
        for number, scenario in enumerate(scenarios):
            outcome = _scenario(namespace, scenario, f"ee-{number}")
            figures.scenarios += 1
            figures.right += outcome.right
            figures.turns += sum(len(turns) for turns in scenario.requests)
            if scenario.critical:
                figures.health_left_current += len(outcome.kept)
            if not outcome.right:
                figures.failed.append(scenario.id)
    finally:
        namespace_delete(actor=ACTOR, namespace=namespace)


def _extractor(mode: str) -> extraction.Extractor:
    return get_extractor(Namespace(slug="eval", extractor=mode))


SENTENCES_PER_CALL = 5


def run_ordinary(mode: str, sentences: list[str], figures: Figures) -> None:
    """The sentences SENTENCES_PER_CALL at a time, each a user turn of its own (the rules
    read each alone; the LLM is asked once for the batch)."""
    for start in range(0, len(sentences), SENTENCES_PER_CALL):
        batch = sentences[start : start + SENTENCES_PER_CALL]
        turns = [extraction.Turn("user", s, number) for number, s in enumerate(batch)]
        found = extract_with_fallback(_extractor(mode), turns).candidates
        figures.sentences += len(batch)
        figures.turns += len(batch)
        invented = [
            c
            for c in found
            if c.kind == "semantic"
            and c.content
            and "|" not in c.slot
            and slot_group(c.slot) in SENSITIVE
        ]
        figures.invented += [(batch[c.position], c.slot) for c in invented]
        figures.invented_by_llm += sum(1 for c in invented if c.model)


def run_locomo(
    mode: str, conversations: list[locomo.Conversation], turns: int, figures: Figures
) -> None:
    """The first `turns` turns of the conversations, a session at a time, each speaker's
    turns as the user's."""
    batch: list[extraction.Turn] = []
    session = None
    left = turns
    for conversation in conversations:
        for turn in conversation.turns:
            if left == 0:
                break
            if turn.session != session and batch:
                _locomo_batch(mode, batch, figures)
                batch = []
            session = turn.session
            batch.append(extraction.Turn("user", turn.text, len(batch), turn.speaker))
            left -= 1
    if batch:
        _locomo_batch(mode, batch, figures)


def _locomo_batch(mode: str, batch: list[extraction.Turn], figures: Figures) -> None:
    found = extract_with_fallback(_extractor(mode), batch).candidates
    figures.locomo_turns += len(batch)
    figures.turns += len(batch)
    figures.locomo_facts += sum(1 for c in found if c.kind == "semantic" and c.content)


def compare(
    *,
    modes: tuple[str, ...],
    scenarios: list[Scenario],
    sentences: list[str],
    conversations: list[locomo.Conversation],
    locomo_turns: int,
) -> list[Figures]:
    results = []
    for mode in modes:
        llm_health.counters_reset()
        figures = Figures(mode)
        started = time.monotonic()
        run_scenarios(mode, scenarios, figures)
        run_ordinary(mode, sentences, figures)
        run_locomo(mode, conversations, locomo_turns, figures)
        figures.seconds = time.monotonic() - started
        counts = llm_health.counters()
        figures.calls, figures.failures = counts.calls, counts.failures
        figures.fallbacks, figures.p50_seconds = counts.fallbacks, counts.p50_seconds
        figures.refused = dict(Counter(counts.refused).most_common())
        results.append(figures)
    return results


def read_sentences(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]
