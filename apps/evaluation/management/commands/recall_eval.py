"""Measure recall quality on LoCoMo-format conversations through the real write and recall paths:
the conversations go in as an app sends them (the service of `POST /messages`: extraction,
consolidation, summaries), questions go to the recall of `POST /recall`.

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
from apps.namespaces.models import Namespace
from apps.namespaces.services import namespace_create, namespace_delete
from apps.pipeline import jobs
from apps.pipeline.ingestion import IncomingMessage, messages_ingest
from apps.pipeline.models import JobStatus
from apps.recall.search import recall_memories
from apps.tokens.tokenizers import prompt_line_tokens

ACTOR = Actor.system("manage.py recall_eval")
SUBJECT = "locomo-subject"
MESSAGES_PER_REQUEST = 100


class Command(BaseCommand):
    help = "Evaluate recall on LoCoMo-format files (each in a temporary namespace, deleted after)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--format", choices=["locomo"], default="locomo")
        parser.add_argument("--k", nargs="+", type=int, default=[5, 10])
        parser.add_argument("--json", action="store_true", help="end with one JSON line of metrics")

    def handle(
        self,
        *args: Any,
        paths: list[Path],
        k: list[int],
        json: bool,
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
                seconds, dia_of = _ingest(namespace, conversation)
                ingest_seconds += seconds
                ingested += len(conversation.turns)
                scores = _ask(namespace, conversation, ks, latencies, dia_of)
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


def _ingest(namespace: Namespace, conversation: Conversation) -> tuple[float, dict[str, str]]:
    """Send the conversation as an app would: each session to the service behind
    `POST /messages`, its turns as user messages with the speaker as `name` and the
    session's date as `created_at`; extraction and consolidation as configured. Returns the
    time taken and, for scoring, each stored message's LoCoMo turn id."""
    dia_of: dict[str, str] = {}
    started = time.perf_counter()
    sessions: dict[int, list[Any]] = {}
    for turn in conversation.turns:
        sessions.setdefault(turn.session, []).append(turn)
    for number, turns in sorted(sessions.items()):
        for start in range(0, len(turns), MESSAGES_PER_REQUEST):
            batch = turns[start : start + MESSAGES_PER_REQUEST]
            job, _ = messages_ingest(
                actor=ACTOR,
                namespace=namespace,
                subject_external_id=SUBJECT,
                session_external_id=f"session-{number}",
                messages=[
                    IncomingMessage(
                        "user",
                        turn.text + (f" [shared a photo: {turn.caption}]" if turn.caption else ""),
                        name=turn.speaker[:64],
                        created_at=turn.occurred_at,
                    )
                    for turn in batch
                ],
            )
            if job.status == JobStatus.QUEUED:  # a broker is configured: do it here, now
                jobs.run_ingest_job_inline(str(job.id))
            for message_id, turn in zip(job.payload["messages"], batch, strict=True):
                dia_of[message_id] = turn.dia_id
    return time.perf_counter() - started, dia_of


def _ask(
    namespace: Namespace,
    conversation: Conversation,
    ks: list[int],
    latencies: list[float],
    dia_of: dict[str, str],
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
        ranked = list(
            dict.fromkeys(
                dia_of.get(str(hit.memory.source.get("message")), "") for hit in outcome.hits
            )
        )
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
