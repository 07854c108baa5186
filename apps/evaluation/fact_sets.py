"""Fact-recall sets: stored facts, and questions that each need one of them at rank 1.

A conversation set (LoCoMo format) measures whether recall finds the turns that answer a
question among a whole conversation. A fact set measures the step an app relies on most:
a subject's facts are stored as memories ("用户住在深圳。"), and a question asked in either
language ("Where does the user live?") must bring the right one first.

A file (one subject):

    {"subject": "zhang-wei",
     "facts": [{"id": "f1", "text": "用户住在深圳。"}, ...],
     "questions": [{"question": "你住在哪里", "fact": "f1", "lang": "zh"}, ...]}

`lang` is the language case: "zh", "en" (question and fact in one language), "en->zh",
"zh->en" (question -> fact).
"""

from __future__ import annotations

import json
import secrets
import statistics
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apps.audit.actors import Actor
from apps.memories.models import Kind
from apps.memories.services import NewMemory, memories_create_bulk
from apps.namespaces.services import namespace_create, namespace_delete
from apps.recall.search import RecallRequest, recall_memories

ACTOR = Actor.system("manage.py fact_eval")
DEPTH = 10


class FactSetError(ValueError):
    """A file that is not a fact set (the message says where)."""


@dataclass(frozen=True)
class Question:
    text: str
    fact: str
    language: str


@dataclass(frozen=True)
class FactSet:
    name: str
    subject: str
    facts: dict[str, str]  # id -> text
    questions: list[Question]


def read(path: Path) -> FactSet:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        facts = {str(f["id"]): str(f["text"]) for f in raw["facts"]}
        questions = [
            Question(str(q["question"]), str(q["fact"]), str(q.get("lang", "")))
            for q in raw["questions"]
        ]
        subject = str(raw["subject"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise FactSetError(f"{path.name}: not a fact set ({error})") from None
    unknown = sorted({q.fact for q in questions} - set(facts))
    if unknown:
        raise FactSetError(f"{path.name}: questions name unknown facts {unknown}")
    return FactSet(path.stem, subject, facts, questions)


def files(paths: Iterable[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        found.extend(sorted(path.glob("*.json")) if path.is_dir() else [path])
    return found


@dataclass(frozen=True)
class Answer:
    language: str
    rank: int | None  # 1-based rank of the right fact within DEPTH, None beyond
    milliseconds: float


def evaluate(sets: list[FactSet]) -> list[Answer]:
    """Store each set's facts for its subject in a temporary namespace (deleted after), ask
    its questions through recall, and give the right fact's rank for each."""
    namespace = namespace_create(
        actor=ACTOR, slug=f"facts-{secrets.token_hex(6)}", name="fact_eval"
    )
    answers: list[Answer] = []
    try:
        for fact_set in sets:
            items = [
                NewMemory(content=text, subject_external_id=fact_set.subject, kind=Kind.SEMANTIC)
                for text in fact_set.facts.values()
            ]
            stored = memories_create_bulk(actor=ACTOR, namespace=namespace, items=items)
            ids = {
                fact_id: memory.pk for fact_id, memory in zip(fact_set.facts, stored, strict=True)
            }
            for question in fact_set.questions:
                started = time.perf_counter()
                outcome = recall_memories(
                    RecallRequest(
                        actor=ACTOR,
                        namespace=namespace,
                        subject_external_id=fact_set.subject,
                        query=question.text,
                        k=DEPTH,
                        log=False,
                    )
                )
                milliseconds = (time.perf_counter() - started) * 1000
                ranked = [hit.memory.pk for hit in outcome.hits]
                wanted = ids[question.fact]
                rank = ranked.index(wanted) + 1 if wanted in ranked else None
                answers.append(Answer(question.language, rank, milliseconds))
    finally:
        namespace_delete(actor=ACTOR, namespace=namespace)
    return answers


def summarize(answers: list[Answer]) -> dict[str, dict[str, Any]]:
    """hit@1, hit@3, MRR and the count, per language case and for all ("all")."""
    groups: dict[str, list[Answer]] = defaultdict(list)
    for answer in answers:
        groups[answer.language or "-"].append(answer)
        groups["all"].append(answer)
    table = {}
    for language, group in sorted(groups.items()):
        ranks = [a.rank for a in group]
        table[language] = {
            "questions": len(group),
            "hit@1": round(sum(r == 1 for r in ranks) / len(group), 4),
            "hit@3": round(sum(r is not None and r <= 3 for r in ranks) / len(group), 4),
            "mrr": round(statistics.fmean(1 / r if r else 0.0 for r in ranks), 4),
            "p50_ms": round(statistics.median(a.milliseconds for a in group), 2),
        }
    return table
