"""Measure recall quality on LoCoMo-format conversations through the real write and recall paths.

python manage.py recall_eval --format locomo ../shared/data/locomo-dev/ [--k 5 10] [--json]
"""

from __future__ import annotations

import json
import secrets
import statistics
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.audit.actors import Actor
from apps.evaluation import metrics
from apps.evaluation.locomo import Conversation, conversation_files, read_conversation
from apps.memories.embeddings import get_provider
from apps.memories.models import Kind
from apps.memories.services import NewMemory, memories_create_bulk
from apps.namespaces.models import Namespace
from apps.namespaces.services import namespace_create, namespace_delete
from apps.pipeline import extraction
from apps.recall.search import recall_memories
from apps.tokens.tokenizers import prompt_line_tokens

ACTOR = Actor.system("manage.py recall_eval")
SUBJECT = "locomo-subject"
BATCH = 256


class Command(BaseCommand):
    help = "Evaluate recall on LoCoMo-format files (each in a temporary namespace, deleted after)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--format", choices=["locomo"], default="locomo")
        parser.add_argument("--k", nargs="+", type=int, default=[5, 10])
        parser.add_argument("--json", action="store_true", help="end with one JSON line of metrics")
        parser.add_argument(
            "--with-facts",
            action="store_true",
            help="also store each turn's atomic facts (the offline extractor's) as semantic"
            " memories, as the write pipeline does; a fact found counts as its turn",
        )

    def handle(
        self,
        *args: Any,
        paths: list[Path],
        k: list[int],
        json: bool,
        with_facts: bool = False,
        **options: Any,
    ) -> None:
        files = list(conversation_files(paths))
        missing = [str(p) for p in files if not p.exists()]
        if missing or not files:
            raise CommandError(f"No LoCoMo files found at: {', '.join(missing or map(str, paths))}")
        ks = sorted(set(k) | {5, 10})
        per_question: list[dict[str, float]] = []
        latencies: list[float] = []
        ingest_seconds = 0.0
        ingested = 0
        created: list[Namespace] = []
        # Load the model (both paths) and the prompt tokenizers before the clock starts:
        # one-time costs of a process, not ingest throughput.
        get_provider().embed_query("warm-up")
        get_provider().embed_documents(["warm-up"])
        prompt_line_tokens("warm-up")
        try:
            for path in files:
                conversation = read_conversation(path)
                namespace = namespace_create(
                    actor=ACTOR, slug=f"eval-{secrets.token_hex(6)}", name="recall_eval"
                )
                created.append(namespace)
                seconds = _ingest(namespace, conversation, with_facts=with_facts)
                ingest_seconds += seconds
                ingested += len(conversation.turns)
                scores = _ask(namespace, conversation, ks, latencies)
                per_question.extend(scores)
                self.stdout.write(
                    f"{conversation.name}: {len(conversation.turns)} turns in {seconds:.1f}s, "
                    f"{len(scores)} questions, "
                    f"recall@10 {statistics.fmean(s['recall@10'] for s in scores):.3f}"
                )
        finally:
            for namespace in created:
                namespace_delete(actor=ACTOR, namespace=namespace)

        summary: dict[str, float | int] = {
            f"{name}@{n}": round(statistics.fmean(s[f"{name}@{n}"] for s in per_question), 4)
            for name in ("recall", "hit")
            for n in ks
        }
        summary.update(
            {
                "mrr": round(statistics.fmean(s["mrr"] for s in per_question), 4),
                "ndcg@10": round(statistics.fmean(s["ndcg@10"] for s in per_question), 4),
                "questions": len(per_question),
                "recall_p50_ms": round(metrics.percentile(latencies, 0.50), 2),
                "recall_p95_ms": round(metrics.percentile(latencies, 0.95), 2),
                "ingest_per_s": round(ingested / ingest_seconds, 1) if ingest_seconds else 0.0,
            }
        )
        for category in sorted({int(s["category"]) for s in per_question}):
            rows = [s for s in per_question if s["category"] == category]
            self.stdout.write(
                f"category {category}: {len(rows)} questions, "
                + ", ".join(
                    f"recall@{n} {statistics.fmean(r[f'recall@{n}'] for r in rows):.3f}" for n in ks
                )
            )
        for key, value in summary.items():
            self.stdout.write(f"{key:>14}  {value}")
        if json:
            self.stdout.write(_json_line(summary))


def _ingest(namespace: Namespace, conversation: Conversation, with_facts: bool = False) -> float:
    items = [
        NewMemory(
            content=turn.content,
            subject_external_id=SUBJECT,
            kind=Kind.EPISODIC,
            metadata={"dia_id": turn.dia_id, "speaker": turn.speaker, "session": turn.session},
            source={"app": "recall_eval", "session": f"session-{turn.session}"},
            occurred_at=turn.occurred_at,
            session_key=f"session-{turn.session}",
            position=turn.position,
        )
        for turn in conversation.turns
    ]
    if with_facts:
        items += [
            NewMemory(
                content=fact.content,
                subject_external_id=SUBJECT,
                kind=Kind.SEMANTIC,
                metadata={"dia_id": turn.dia_id, "speaker": turn.speaker},
                source={"app": "recall_eval", "extractor": "offline"},
                occurred_at=turn.occurred_at,
                importance=fact.importance,
            )
            for turn in conversation.turns
            for fact in extraction.atomic_facts(
                extraction.Turn("user", turn.text, turn.position, created_at=turn.occurred_at)
            )
            if fact.content
        ]
    started = time.perf_counter()
    for start in range(0, len(items), BATCH):
        memories_create_bulk(actor=ACTOR, namespace=namespace, items=items[start : start + BATCH])
    return time.perf_counter() - started


def _ask(
    namespace: Namespace, conversation: Conversation, ks: list[int], latencies: list[float]
) -> list[dict[str, float]]:
    depth = max(max(ks), 10)
    scores = []
    for question in conversation.questions:
        outcome = recall_memories(
            actor=ACTOR,
            namespace=namespace,
            subject_external_id=SUBJECT,
            query=question.question,
            k=depth,
        )
        latencies.append(outcome.timings_ms["total"])
        # A fact found stands for the turn it came from (each turn counted once).
        ranked = list(dict.fromkeys(str(hit.memory.metadata.get("dia_id")) for hit in outcome.hits))
        relevant = set(question.evidence)
        row: dict[str, float] = {"category": question.category}
        for n in ks:
            row[f"recall@{n}"] = metrics.recall_at(ranked, relevant, n)
            row[f"hit@{n}"] = metrics.hit_at(ranked, relevant, n)
        row["mrr"] = metrics.reciprocal_rank(ranked, relevant)
        row["ndcg@10"] = metrics.ndcg_at(ranked, relevant, 10)
        scores.append(row)
    return scores


def _json_line(summary: dict[str, Any]) -> str:
    return json.dumps(summary, sort_keys=True)
