"""The knowledge-update suite: do a person's current facts stay true as they change?

Each scenario is a short conversation sent as a new user would, one request after another
(`requests`: lists of user turns), to a fresh subject in a scratch namespace, through the
same write pipeline as the API (extraction and consolidation, run inline). Afterwards every
phrase of `current` must appear (case-insensitively) in one of the subject's current
semantic facts, and no phrase of `stale` in any. A scenario is fully right when all hold.
Scenarios marked `critical` (a corrected allergy or medical fact) must never fail.

Summaries are judged the same way: the offline summary of a scenario's turns must state
every current phrase, and no stale one outside its history ("(previously: ...)"); its size is
reported against the turns' tokens.

The scenarios live with the tests (tests/knowledge/scenarios.json); `manage.py
knowledge_eval` prints the per-category table, and a test holds the floor.
"""

from __future__ import annotations

import json
import re
import secrets
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.audit.actors import Actor
from apps.memories.models import Kind, Memory, Status
from apps.memories.row_encryption import KeyCache, open_memory
from apps.namespaces.models import Namespace
from apps.namespaces.services import namespace_create, namespace_delete
from apps.pipeline.extraction import OfflineSummarizer, Turn
from apps.pipeline.ingestion import IncomingMessage, messages_ingest
from apps.pipeline.jobs import ingest_job_run
from apps.pipeline.models import JobStatus
from apps.tokens.tokenizers import count_tokens

ACTOR = Actor.system("knowledge-eval")


@dataclass(frozen=True)
class Scenario:
    id: str
    language: str
    categories: tuple[str, ...]
    requests: tuple[tuple[str, ...], ...]
    current: tuple[str, ...]
    stale: tuple[str, ...]
    critical: bool = False

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Scenario:
        return cls(
            id=data["id"],
            language=data["language"],
            categories=tuple(data["categories"]),
            requests=tuple(tuple(turns) for turns in data["requests"]),
            current=tuple(data.get("current", [])),
            stale=tuple(data.get("stale", [])),
            critical=bool(data.get("critical", False)),
        )


@dataclass
class Outcome:
    scenario: Scenario
    facts: list[str]
    missing: list[str] = field(default_factory=list)  # current phrases no fact states
    kept: list[str] = field(default_factory=list)  # stale phrases still stated

    @property
    def right(self) -> bool:
        return not self.missing and not self.kept


def read_scenarios(path: Path) -> list[Scenario]:
    return [Scenario.from_data(item) for item in json.loads(path.read_text())["scenarios"]]


def current_facts(namespace: Namespace, subject_external_id: str) -> list[str]:
    """The subject's current semantic facts, decrypted: active, still valid, not expired."""
    now = timezone.now()
    keys = KeyCache()
    memories = (
        Memory.objects.filter(
            namespace=namespace,
            subject__external_id=subject_external_id,
            kind=Kind.SEMANTIC,
            status=Status.ACTIVE,
            valid_to__isnull=True,
        )
        .exclude(expires_at__lte=now)
        .order_by("created_at")
    )
    return [open_memory(keys, memory) for memory in memories]


def mentions(fact: str, phrase: str) -> bool:
    """Whether `fact` says `phrase`: whole words in alphabetic text ("son" is not in
    "Jackson", "tea" not in "steak"), any substring in text without spaces (Chinese)."""
    fact, phrase = fact.lower(), phrase.lower().strip()
    if re.search(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]", phrase):
        return phrase in fact
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", fact) is not None


def judge(scenario: Scenario, facts: list[str]) -> Outcome:
    return Outcome(
        scenario=scenario,
        facts=facts,
        missing=[p for p in scenario.current if not any(mentions(f, p) for f in facts)],
        kept=[p for p in scenario.stale if any(mentions(f, p) for f in facts)],
    )


def run_scenario(namespace: Namespace, scenario: Scenario, subject: str) -> Outcome:
    for number, turns in enumerate(scenario.requests):
        job, _ = messages_ingest(
            actor=ACTOR,
            namespace=namespace,
            subject_external_id=subject,
            session_external_id=f"{subject}-s",
            messages=[IncomingMessage(role="user", content=turn) for turn in turns],
        )
        job.refresh_from_db()
        if job.status != JobStatus.SUCCEEDED:
            job = ingest_job_run(job_id=str(job.id))
        if job.status != JobStatus.SUCCEEDED:
            raise RuntimeError(f"{scenario.id}: request {number} ended {job.status}")
    return judge(scenario, current_facts(namespace, subject))


def run_suite(scenarios: list[Scenario]) -> list[Outcome]:
    """Every scenario in one scratch namespace (a subject each), deleted afterwards."""
    with transaction.atomic():
        namespace = namespace_create(
            actor=ACTOR, slug=f"knowledge-eval-{secrets.token_hex(4)}", name="Knowledge eval"
        )
    try:
        return [run_scenario(namespace, s, f"ku-{i}") for i, s in enumerate(scenarios)]
    finally:
        namespace_delete(actor=ACTOR, namespace=namespace)


def table(outcomes: list[Outcome]) -> list[tuple[str, int, int]]:
    """(category, scenarios, fully right) per category and language, then in total."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for outcome in outcomes:
        names = [*outcome.scenario.categories, f"language:{outcome.scenario.language}", "total"]
        for name in names:
            counts[name][0] += 1
            counts[name][1] += int(outcome.right)
    order = sorted(counts, key=lambda n: (n == "total", n.startswith("language:"), n))
    return [(name, counts[name][0], counts[name][1]) for name in order]


# A summary's history of replaced values, and what it quotes of sentences that state no fact.
_HISTORY = re.compile(
    r'\s*\(previously: [^)]*\)|（此前：[^）]*）|The user said: "[^"]*"|用户说：“[^”]*”'
)


@dataclass
class SummaryOutcome:
    outcome: Outcome  # judged on the summary's text, its history left out for stale phrases
    summary: str
    summary_tokens: int
    turn_tokens: int

    @property
    def share(self) -> float:
        return self.summary_tokens / max(self.turn_tokens, 1)


def summary_outcome(scenario: Scenario, words: int = 150) -> SummaryOutcome:
    """The offline summary of the scenario's turns (all its requests as one session)."""
    texts = [turn for request in scenario.requests for turn in request]
    turns = [Turn("user", text, position) for position, text in enumerate(texts)]
    summary = OfflineSummarizer(words=words).summarize(turns)
    lowered = summary.lower()
    current = _HISTORY.sub("", summary).lower()
    outcome = Outcome(
        scenario=scenario,
        facts=[summary],
        missing=[p for p in scenario.current if p.lower() not in lowered],
        kept=[p for p in scenario.stale if p.lower() in current],
    )
    return SummaryOutcome(
        outcome=outcome,
        summary=summary,
        summary_tokens=count_tokens(summary),
        turn_tokens=sum(count_tokens(text) for text in texts),
    )
