"""Measure recall quality on LoCoMo-format conversations through the real write and recall
paths, with the code of the dashboard's eval sets and runs: each conversation is imported as
an eval set into a temporary namespace (sent as an app sends it, through the service of
`POST /messages`), and the set is run against the recall configuration.

python manage.py recall_eval --format locomo ../shared/data/locomo-dev/ [--k 5 10] [--json]
    [--abstention] [--min-relevance X] [--config '{"weights": {...}}']

`--abstention` adds unanswerable cases: each conversation is also asked the questions of the
other conversations, and its own adversarial (category 5) ones. `--min-relevance X` also
scores the same answers as recall would serve them at that threshold (it drops results after
ranking, so nothing is asked twice).
"""

from __future__ import annotations

import json
import secrets
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.audit.actors import Actor
from apps.evaluation import locomo
from apps.evaluation.models import CaseResult, EvalRun
from apps.evaluation.runs import SKIPPED, at_threshold, run_work, summarize
from apps.evaluation.services import eval_set_import_locomo
from apps.memories.embeddings import get_provider
from apps.namespaces.models import Namespace
from apps.namespaces.services import namespace_create, namespace_delete
from apps.recall import config as recall_config
from apps.tokens.tokenizers import prompt_line_tokens

ACTOR = Actor.system("manage.py recall_eval")
SUBJECT = "locomo-subject"
# A scored case as `runs.summarize` takes it: scores, category, latency, tokens, ranked.
Row = tuple[dict[str, float], str, float, int, list[Any]]


class Command(BaseCommand):
    help = "Evaluate recall on LoCoMo-format files (each in a temporary namespace, deleted after)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--format", choices=["locomo"], default="locomo")
        parser.add_argument("--k", nargs="+", type=int, default=[5, 10])
        parser.add_argument("--json", action="store_true", help="end with one JSON line of metrics")
        parser.add_argument(
            "--abstention",
            action="store_true",
            help="also ask each conversation the others' questions and its adversarial ones",
        )
        parser.add_argument("--min-relevance", type=float, default=None)
        parser.add_argument("--config", default="", help="a recall configuration (JSON)")

    def handle(self, *args: Any, **options: Any) -> None:
        files = list(locomo.conversation_files(options["paths"]))
        missing = [str(p) for p in files if not p.exists()]
        if missing or not files:
            paths = missing or map(str, options["paths"])
            raise CommandError(f"No LoCoMo files found at: {', '.join(paths)}")
        config, abstaining = _configs(options["config"], options["min_relevance"])
        conversations = [locomo.read_conversation(path) for path in files]
        # Load the model (both paths) and the prompt tokenizers before the clock starts:
        # one-time costs of a process, not ingest throughput.
        get_provider().embed_query("warm-up")
        get_provider().embed_documents(["warm-up"])
        prompt_line_tokens("warm-up")
        tally = _Tally()
        created: list[Namespace] = []
        try:
            for conversation in conversations:
                namespace = namespace_create(
                    actor=ACTOR, slug=f"eval-{secrets.token_hex(6)}", name="recall_eval"
                )
                created.append(namespace)
                self._evaluate(namespace, conversation, conversations, config, options, tally)
        finally:
            for namespace in created:
                namespace_delete(actor=ACTOR, namespace=namespace)
        figures = summarize(tally.rows)
        summary = _summary(figures, options, tally)
        if abstaining is not None:
            summary["with_min_relevance"] = _at_threshold(abstaining, summarize(tally.abstained))
        self._report(figures, summary, _by_language(tally.rows, tally.languages, options["k"]))
        if options["json"]:
            self.stdout.write(json.dumps(summary, sort_keys=True))

    def _evaluate(
        self,
        namespace: Namespace,
        conversation: locomo.Conversation,
        conversations: list[locomo.Conversation],
        config: recall_config.RecallConfig,
        options: dict[str, Any],
        tally: _Tally,
    ) -> None:
        """One conversation: imported as an eval set (timed), run, its rows tallied."""
        others = (
            [
                (question.question, "other conversation")
                for other in conversations
                if other is not conversation
                for question in other.questions + other.adversarial
            ]
            if options["abstention"]
            else []
        )
        started = time.perf_counter()
        eval_set = _import(namespace, conversation, others, options["abstention"])
        seconds = time.perf_counter() - started
        tally.ingest_seconds += seconds
        tally.ingested += len(conversation.turns)
        run = _run(eval_set, config)
        mine, their_languages = _rows(run)
        tally.rows.extend(mine)
        tally.languages.extend(their_languages)
        if options["min_relevance"] is not None:  # the same answers, at the threshold
            tally.abstained.extend(at_threshold(run, options["min_relevance"]))
        answered = [s for s, *_ in mine if "recall@10" in s]
        self.stdout.write(
            f"{conversation.name}: {len(conversation.turns)} turns in {seconds:.1f}s, "
            f"{len(answered)} questions, "
            f"recall@10 {statistics.fmean(s['recall@10'] for s in answered):.3f}"
        )

    def _report(
        self, figures: dict[str, Any], summary: dict[str, Any], by_language: dict[str, Any]
    ) -> None:
        for category, values in figures["categories"].items():
            if category == "adversarial":
                continue
            self.stdout.write(
                f"category {category}: {values['cases']} questions, "
                f"recall@5 {values['recall@5']:.3f}, recall@10 {values['recall@10']:.3f}"
            )
        for language, values in by_language.items():
            ranks = ", ".join(f"{name} {values[name]:.3f}" for name in values if "@" in name)
            self.stdout.write(
                f"language {language}: {values['questions']} questions, {ranks}, "
                f"mrr {values['mrr']:.3f}"
            )
        for key, value in summary.items():
            self.stdout.write(f"{key:>20}  {value}")
        if by_language:
            summary["languages"] = by_language


@dataclass
class _Tally:
    rows: list[Row] = field(default_factory=list)
    languages: list[str] = field(default_factory=list)  # each row's question's ("" unnamed)
    abstained: list[Row] = field(default_factory=list)
    ingest_seconds: float = 0.0
    ingested: int = 0


def _configs(
    given: str, min_relevance: float | None
) -> tuple[recall_config.RecallConfig, recall_config.RecallConfig | None]:
    """The recall configuration to run, and the same at `min_relevance` if one is given."""
    changes = json.loads(given) if given else {}
    try:
        config = recall_config.parse(changes)
        abstaining = (
            recall_config.parse({**changes, "min_relevance": min_relevance})
            if min_relevance is not None
            else None
        )
    except recall_config.ConfigError as error:
        raise CommandError(f"Bad configuration: {error}") from None
    return config, abstaining


def _summary(figures: dict[str, Any], options: dict[str, Any], tally: _Tally) -> dict[str, Any]:
    summary: dict[str, Any] = {
        key: figures[key]
        for key in sorted(figures)
        if key.startswith(("recall@", "hit@")) and int(key.split("@")[1]) in options["k"]
    }
    seconds = tally.ingest_seconds
    summary.update(
        {
            "recall@5": figures.get("recall@5", 0.0),
            "recall@10": figures.get("recall@10", 0.0),
            "hit@5": figures.get("hit@5", 0.0),
            "hit@10": figures.get("hit@10", 0.0),
            "mrr": figures.get("mrr", 0.0),
            "ndcg@10": figures.get("ndcg@10", 0.0),
            "questions": figures["answerable"],
            "recall_p50_ms": figures.get("latency_p50_ms", 0.0),
            "recall_p95_ms": figures.get("latency_p95_ms", 0.0),
            "ingest_per_s": round(tally.ingested / seconds, 1) if seconds else 0.0,
        }
    )
    if options["abstention"]:
        summary["unanswerable"] = figures["unanswerable"]
        summary["unanswerable_empty"] = figures.get("abstention_recall", 0.0)
    return summary


def _at_threshold(
    abstaining: recall_config.RecallConfig, with_threshold: dict[str, Any]
) -> dict[str, Any]:
    return {
        "min_relevance": abstaining.min_relevance,
        "recall@5": with_threshold.get("recall@5", 0.0),
        "recall@10": with_threshold.get("recall@10", 0.0),
        "unanswerable_empty": with_threshold.get("abstention_recall", 0.0),
        "abstention_precision": with_threshold.get("abstention_precision", 0.0),
        "recall_p95_ms": with_threshold.get("latency_p95_ms", 0.0),
    }


def _import(
    namespace: Namespace,
    conversation: locomo.Conversation,
    others: list[tuple[str, str]],
    abstention: bool,
) -> Any:
    return eval_set_import_locomo(
        actor=ACTOR,
        namespace=namespace,
        name=conversation.name,
        data=conversation,
        subject_external_id=SUBJECT,
        unanswerable=others,
        adversarial=abstention,
    )


def _run(eval_set: Any, config: recall_config.RecallConfig) -> EvalRun:
    """The set's run with `config`, worked here (not queued): the command waits for it."""
    run = EvalRun.objects.create(
        namespace=eval_set.namespace,
        eval_set=eval_set,
        label="recall_eval",
        config=config.as_dict(),
        k=config.k,
        total=eval_set.cases.count(),
        created_by=ACTOR.name,
    )
    return run_work(run_id=str(run.pk))


def _rows(run: EvalRun) -> tuple[list[Row], list[str]]:
    """The run's scored cases as `summarize` takes them, and each one's language case."""
    results = [
        r
        for r in CaseResult.objects.filter(run=run).select_related("case")
        if SKIPPED not in r.scores
    ]
    rows = [(r.scores, r.case.category, r.latency_ms, r.tokens, r.ranked) for r in results]
    return rows, [r.case.language for r in results]


def _by_language(rows: list[Row], languages: list[str], ks: list[int]) -> dict[str, Any]:
    """recall@k, hit@k and MRR of the answerable questions of each language case, for sets
    whose questions name one (none: an empty table)."""
    groups: dict[str, list[Row]] = {}
    for row, language in zip(rows, languages, strict=True):
        if language:
            groups.setdefault(language, []).append(row)
    table: dict[str, Any] = {}
    for language in sorted(groups):
        figures = summarize(groups[language])
        if not figures["answerable"]:
            continue
        table[language] = {
            "questions": figures["answerable"],
            **{f"recall@{k}": figures.get(f"recall@{k}", 0.0) for k in ks},
            **{f"hit@{k}": figures.get(f"hit@{k}", 0.0) for k in ks},
            "mrr": figures.get("mrr", 0.0),
        }
    return table
