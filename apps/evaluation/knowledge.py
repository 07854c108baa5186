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

What an app is told is judged too (`served_problems`), for each update scenario with a topic
question: a context assembled in a new session must state every current value and no memory
in it an old value alone, and recall as of the moment after the first request must serve the
old values.

The scenarios live with the tests (tests/knowledge/scenarios.json); `manage.py
knowledge_eval` prints the per-category table, and a test holds the floor.
"""

from __future__ import annotations

import json
import re
import secrets
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.audit.actors import Actor
from apps.memories.models import Kind, Memory, Status, Subject
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
    # Where a memory stating a stale value ranked above every one stating the current value
    # (recall, the portal's search), for the scenario's topic question (`ranking_problems`).
    misranked: list[str] = field(default_factory=list)
    # What an app is told (`served_problems`): a prompt assembled in a new session that
    # states a stale value and no current one, or misses a current one; a recall as of the
    # moment after the first request that misses a stale value it said.
    served: list[str] = field(default_factory=list)

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


# The question an app or a person asks about a scenario's topic, by category (English,
# Chinese); the first category of the scenario that has one is asked.
TOPICS = {
    "allergy": ("What is the user allergic to?", "用户对什么过敏？"),
    "health": ("The user's health conditions and medication", "用户的健康状况和用药"),
    "residence": ("Where does the user live?", "用户住在哪里？"),
    "job": ("What is the user's job?", "用户做什么工作？"),
    "employer": ("Which company does the user work for?", "用户在哪家公司工作？"),
    "diet": ("What does the user eat?", "用户的饮食习惯是什么？"),
    "name": ("What is the user's name?", "用户叫什么名字？"),
    "relationship": ("The user's family and relationships", "用户的家人和感情状况"),
    "plan": ("What are the user's plans?", "用户有什么计划？"),
    "preference": ("What does the user like?", "用户喜欢什么？"),
}
# Stale phrases that are time words, not values ("last week" must leave the fact's text).
_TIME_WORDS = re.compile(
    r"^(?:(?:last|next|this)\s+\w+|yesterday|tomorrow|today)$|^(?:上|下|这)(?:周|个月|星期)$|^(?:昨天|明天|今天)$",
    re.I,
)


def _stale_values(scenario: Scenario) -> list[str]:
    return [phrase for phrase in scenario.stale if not _TIME_WORDS.match(phrase.strip())]


def ranked_scenario(scenario: Scenario) -> bool:
    """An update scenario whose ranking is asked: a current and a stale value, and a topic."""
    return bool(scenario.current and _stale_values(scenario) and topic_query(scenario))


def topic_query(scenario: Scenario) -> str | None:
    for category in scenario.categories:
        if category in TOPICS:
            english, chinese = TOPICS[category]
            return chinese if scenario.language == "zh" else english
    return None


def misordered(
    where: str,
    texts: list[str],
    current: tuple[str, ...],
    stale: list[str],
    history: list[bool] | None = None,
) -> list[str]:
    """Each stale phrase whose first memory (one that states no current phrase, and is not
    shown as history: `history`, by rank) ranks above the first memory stating a current
    phrase, or that is found while no current one is."""

    def first(test: Any) -> int | None:
        return next((rank for rank, text in enumerate(texts) if test(rank, text)), None)

    shown_as_history = history or [False] * len(texts)
    found = first(lambda rank, text: any(mentions(text, phrase) for phrase in current))
    problems = []
    for phrase in stale:
        stale_rank = first(
            lambda rank, text, p=phrase: (
                not shown_as_history[rank]
                and mentions(text, p)
                and not any(mentions(text, c) for c in current)
            )
        )
        if stale_rank is not None and (found is None or found > stale_rank):
            problems.append(f"{where}: {phrase!r} at rank {stale_rank + 1}, current at {found}")
    return problems


def ranking_problems(namespace: Namespace, scenario: Scenario, subject: str) -> list[str]:
    """Whether what holds ranks above what held, where memories are served: recall (top 10)
    and the portal's search, for the scenario's topic question. Only scenarios that state
    both a current and a stale value, with a topic question, are asked; in the portal, a
    memory shown as history ("no longer current") or in doubt may rank anywhere."""
    from apps.privacy.selectors import CURRENT, search, standing
    from apps.recall.search import RecallRequest, recall_memories

    query = topic_query(scenario)
    stale = _stale_values(scenario)
    if query is None or not ranked_scenario(scenario):
        return []
    keys = KeyCache()
    outcome = recall_memories(
        RecallRequest(
            actor=ACTOR,
            namespace=namespace,
            subject_external_id=subject,
            query=query,
            k=10,
            log=False,
        )
    )
    recalled = [open_memory(keys, hit.memory) for hit in outcome.hits]
    problems = misordered("recall", recalled, scenario.current, stale)
    person = Subject.objects.get(namespace=namespace, external_id=subject)
    found = search(person, query, keys)
    portal = [item.content for item in found]
    # Shown as history ("no longer current") or as in doubt ("not sure"): not as current.
    history = [standing(item.memory) != CURRENT for item in found]
    return problems + misordered("portal", portal, scenario.current, stale, history)


def served_problems(
    namespace: Namespace, scenario: Scenario, subject: str, before_update: datetime | None
) -> list[str]:
    """What an app is told about the scenario's topic, for an update scenario with a topic
    question (`ranked_scenario`): a context assembled in a new session must state every
    current value, and no memory in it an old value (a stale phrase the first of several
    requests said) alone; asked `as_of` the moment after the first request (`before_update`,
    None: a single request), recall must serve each old value."""
    from apps.context.assembly import MEMORIES
    from apps.context.services import ContextRequest, context_assemble
    from apps.recall.search import RecallRequest, recall_memories
    from apps.recall.statements import RecallFilters

    query = topic_query(scenario)
    if query is None or not ranked_scenario(scenario):
        return []
    # The old values: the stale phrases the first request said (the update comes after).
    said = scenario.requests[0] if len(scenario.requests) > 1 else ()
    stale = [p for p in _stale_values(scenario) if any(mentions(turn, p) for turn in said)]
    keys = KeyCache()
    context = context_assemble(
        actor=ACTOR,
        namespace=namespace,
        spec=ContextRequest(query=query, subject=subject),
        include_text=True,
    )
    items = [item for s in context["sections"] if s["name"] == MEMORIES for item in s["items"]]
    lines = [item["text"] for item in items]
    problems = [
        f"context: {phrase!r} alone in {item['text']!r}"
        for item in items
        for phrase in stale
        if mentions(item["text"], phrase)
        and not any(mentions(item["text"], c) for c in scenario.current)
        and not _states_a_current_value(item["id"], scenario, keys)
    ]
    problems += [
        f"context: {phrase!r} in no memory"
        for phrase in scenario.current
        if not any(mentions(line, phrase) for line in lines)
    ]
    if before_update is None:
        return problems
    then = recall_memories(
        RecallRequest(
            actor=ACTOR,
            namespace=namespace,
            subject_external_id=subject,
            query=query,
            k=10,
            filters=RecallFilters(as_of=before_update),
            log=False,
            keys=keys,
        )
    )
    texts = [hit.text_then or open_memory(keys, hit.memory) for hit in then.hits]
    return problems + [
        f"as_of: {phrase!r} not served"
        for phrase in stale
        if not any(mentions(text, phrase) for text in texts)
    ]


def _states_a_current_value(memory_id: str, scenario: Scenario, keys: KeyCache) -> bool:
    """Whether the memory is a turn that made a current fact stating a current value: a
    correction ("Actually, I'm not allergic to peanuts, it's shellfish") names the old value
    and states the new one."""
    turn = Memory.objects.get(pk=memory_id)
    message = (turn.source or {}).get("message")
    if turn.kind != Kind.EPISODIC or not message or turn.subject_id is None:
        return False
    facts = Memory.objects.filter(
        namespace_id=turn.namespace_id,
        subject_id=turn.subject_id,
        kind=Kind.SEMANTIC,
        valid_to__isnull=True,
        source__message=message,
    )
    return any(
        mentions(open_memory(keys, fact), phrase) for fact in facts for phrase in scenario.current
    )


def send_request(namespace: Namespace, subject: str, turns: tuple[str, ...], label: str) -> None:
    """One request of a scenario's user turns, through the write pipeline, run inline."""
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
        raise RuntimeError(f"{label} ended {job.status}")


def run_scenario(namespace: Namespace, scenario: Scenario, subject: str) -> Outcome:
    before_update = None
    for number, turns in enumerate(scenario.requests):
        if number == 1:
            before_update = timezone.now()
        send_request(namespace, subject, turns, f"{scenario.id}: request {number}")
    outcome = judge(scenario, current_facts(namespace, subject))
    outcome.misranked = ranking_problems(namespace, scenario, subject)
    outcome.served = served_problems(namespace, scenario, subject, before_update)
    return outcome


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
