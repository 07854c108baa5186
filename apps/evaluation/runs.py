"""A run's work: ask every case of the set through recall with the run's configuration, one
committed result per case, then the run's figures. Celery's task (`tasks.py`), the
in-process path without a broker and `recall_eval` all call `run_work`.

How a case is scored: recall returns memories; each stands for its *answer unit*, the turn
it was made from (a fact extracted from a turn counts as that turn, as its episodic memory
does) or else itself. Ranking metrics are computed over the distinct units, best first,
against the expected memories' units, at a depth of at least 10 (recall@10 is always
defined); the first `k` are what an app would be served. A case with no expected memory is
unanswerable: it is right when recall returned nothing (abstention).
"""

from __future__ import annotations

import statistics
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps.audit.actors import Actor
from apps.context import assembly
from apps.context.services import model_info
from apps.evaluation import metrics
from apps.evaluation.models import CaseResult, EvalCase, EvalRun, RunStatus
from apps.memories.models import Memory
from apps.memories.row_encryption import KeyCache, open_memory, open_row
from apps.recall import config as recall_config
from apps.recall.search import RecallHit, RecallRequest, recall_memories
from apps.tokens.tokenizers import tokenizer_for

DEPTH = 10  # ranking metrics look at least this deep
SKIPPED = "skipped"  # a case whose expected memories are all gone (deleted, erased)


def unit_of(memory_id: uuid.UUID, source: dict[str, Any] | None) -> str:
    message = (source or {}).get("message")
    return f"turn:{message}" if message else f"memory:{memory_id}"


def run_work(*, run_id: str, after_case: Callable[[int], None] | None = None) -> EvalRun:
    """Work a run to its end. Each case's result commits with the run's progress, so a
    worker killed part-way leaves a run the next delivery finishes from where it stopped,
    asking no case twice. A finished run is left as it is. `after_case` (tests) is called
    with the number of results committed so far."""
    with transaction.atomic():
        run = EvalRun.objects.select_for_update().select_related("namespace").get(pk=run_id)
        if run.status in (RunStatus.SUCCEEDED, RunStatus.FAILED):
            return run
        run.status = RunStatus.RUNNING
        run.attempts += 1
        run.save(update_fields=["status", "attempts"])
    config = recall_config.config_of(run.config)
    keys = KeyCache()
    tokenizer = tokenizer_for(model_info(name=settings.MEMORYHUB_DEFAULT_MODEL).tokenizer)
    actor = Actor.system(f"eval run {run.pk}")
    pending = (
        EvalCase.objects.filter(eval_set_id=run.eval_set_id)
        .exclude(pk__in=CaseResult.objects.filter(run=run).values("case_id"))
        .select_related("subject")
        .order_by("position")
    )
    cases = list(pending)
    units = _expected_units(cases)
    try:
        for case in cases:
            result = _ask(run, case, config, keys, tokenizer, actor, units)
            with transaction.atomic():
                locked = EvalRun.objects.select_for_update().get(pk=run.pk)
                if CaseResult.objects.filter(run=locked, case=case).exists():
                    continue  # another delivery of this run got here first
                result.save()
                EvalRun.objects.filter(pk=run.pk).update(done=F("done") + 1)
            if after_case is not None:
                after_case(CaseResult.objects.filter(run=run).count())
    except Exception as error:
        EvalRun.objects.filter(pk=run.pk).update(
            status=RunStatus.FAILED, error=type(error).__name__, finished_at=timezone.now()
        )
        raise
    with transaction.atomic():
        run = EvalRun.objects.select_for_update().get(pk=run.pk)
        if run.status != RunStatus.SUCCEEDED:
            results = list(run.results.select_related("case"))
            run.metrics = summarize(
                (r.scores, r.case.category, r.latency_ms, r.tokens, r.ranked) for r in results
            )
            run.done = len(results)
            run.status = RunStatus.SUCCEEDED
            run.finished_at = timezone.now()
            run.save(update_fields=["metrics", "done", "status", "finished_at"])
    return run


def _expected_units(cases: list[EvalCase]) -> dict[uuid.UUID, str]:
    wanted = {memory_id for case in cases for memory_id in case.expected}
    return {
        memory_id: unit_of(memory_id, source)
        for memory_id, source in Memory.objects.filter(pk__in=wanted).values_list("pk", "source")
    }


def _ask(
    run: EvalRun,
    case: EvalCase,
    config: recall_config.RecallConfig,
    keys: KeyCache,
    tokenizer: Any,
    actor: Actor,
    units: dict[uuid.UUID, str],
) -> CaseResult:
    question = open_row(keys, case, case.namespace_id, case.subject_id)
    expected = {memory_id: units[memory_id] for memory_id in case.expected if memory_id in units}
    result = CaseResult(run=run, case=case, namespace_id=run.namespace_id, latency_ms=0.0)
    if case.expected and not expected:
        result.scores = {SKIPPED: 1.0}
        return result
    outcome = recall_memories(
        RecallRequest(
            actor=actor,
            namespace=run.namespace,
            subject_external_id=case.subject.external_id if case.subject is not None else None,
            query=question,
            k=max(config.k, DEPTH),
            config=config,
            log=False,
            keys=keys,
        )
    )
    hits = outcome.hits
    served = hits[: config.k]
    ranked_units = list(dict.fromkeys(unit_of(h.memory.pk, h.memory.source) for h in hits))
    relevant = set(expected.values())
    result.ranked = [hit.memory.pk for hit in hits]
    result.components = [{**hit.components, "score": hit.score} for hit in hits]
    result.latency_ms = outcome.timings_ms["total"]
    result.tokens = _tokens(question, served, run.token_budget, keys, tokenizer)
    if relevant:
        ks = sorted(set(metrics.RANK_KS) | {config.k})
        result.scores = metrics.case_scores(ranked_units, relevant, ks)
        position = {unit: rank for rank, unit in enumerate(ranked_units, start=1)}
        result.ranks = {str(m): position.get(unit) for m, unit in expected.items()}
    result.scores["returned_nothing"] = 0.0 if served else 1.0
    return result


def at_threshold(
    run: EvalRun, min_relevance: float
) -> list[tuple[dict[str, float], str, float, int, list[Any]]]:
    """The run's cases scored as a run at `min_relevance` would score them (rows for
    `summarize`), without asking again: recall leaves out the results below the threshold
    after ranking them, so what it keeps is the same results in the same order. Tokens and
    latency stay the run's (the threshold only serves less)."""
    config = recall_config.config_of(run.config)
    results = list(CaseResult.objects.filter(run=run).select_related("case"))
    wanted = {m for r in results for m in [*r.ranked, *r.case.expected]}
    sources = dict(Memory.objects.filter(pk__in=wanted).values_list("pk", "source"))
    ks = sorted(set(metrics.RANK_KS) | {config.k})
    rows: list[tuple[dict[str, float], str, float, int, list[Any]]] = []
    for result in results:
        if SKIPPED in result.scores:
            continue
        kept = [
            memory_id
            for memory_id, parts in zip(result.ranked, result.components, strict=True)
            if parts.get("relevance", 0.0) >= min_relevance
        ]
        ranked_units = list(dict.fromkeys(unit_of(m, sources.get(m)) for m in kept))
        relevant = {unit_of(m, sources[m]) for m in result.case.expected if m in sources}
        scores = metrics.case_scores(ranked_units, relevant, ks) if relevant else {}
        scores["returned_nothing"] = 0.0 if kept[: config.k] else 1.0
        rows.append((scores, result.case.category, result.latency_ms, result.tokens, kept))
    return rows


def _tokens(
    question: str, hits: list[RecallHit], budget: int, keys: KeyCache, tokenizer: Any
) -> int:
    """The prompt tokens of the served memories packed for the question at `budget` (the
    memories section of context assembly, no system prompt or conversation)."""
    items = [
        assembly.Item(
            str(hit.memory.pk),
            open_memory(keys, hit.memory),
            hit.score,
            line_tokens=(hit.memory.prompt_tokens or {}).get(tokenizer.name),
        )
        for hit in hits
    ]
    try:
        packed = assembly.assemble(
            system_prompt="",
            query=question,
            candidates={assembly.MEMORIES: items},
            budget=budget,
            tokenizer=tokenizer,
        )
    except assembly.BudgetTooSmall:
        return 0
    return packed.total_tokens


def summarize(
    rows: Iterable[tuple[dict[str, float], str, float, int, list[Any]]],
) -> dict[str, Any]:
    """A run's figures from its cases' (scores, category, latency, tokens, ranked): means of
    the ranking metrics over answerable cases, each category's, abstention over every case,
    latency percentiles and tokens per query."""
    answerable: list[dict[str, float]] = []
    categories: dict[str, list[dict[str, float]]] = {}
    nothing: list[bool] = []
    unanswerable: list[bool] = []
    latencies: list[float] = []
    tokens: list[int] = []
    skipped = 0
    for scores, category, latency, used, _ in rows:
        if SKIPPED in scores:
            skipped += 1
            continue
        latencies.append(latency)
        tokens.append(used)
        is_unanswerable = "mrr" not in scores
        nothing.append(bool(scores.get("returned_nothing")))
        unanswerable.append(is_unanswerable)
        if not is_unanswerable:
            answerable.append(scores)
            categories.setdefault(category or "", []).append(scores)
    out: dict[str, Any] = {
        "cases": len(latencies) + skipped,
        "answerable": len(answerable),
        "unanswerable": sum(unanswerable),
        "skipped": skipped,
    }
    names = sorted({name for scores in answerable for name in scores} - {"returned_nothing"})
    for name in names:
        out[name] = round(statistics.fmean(s.get(name, 0.0) for s in answerable), 4)
    out.update(
        {key: round(value, 4) for key, value in metrics.abstention(nothing, unanswerable).items()}
    )
    if latencies:
        out["latency_p50_ms"] = round(metrics.percentile(latencies, 0.50), 2)
        out["latency_p95_ms"] = round(metrics.percentile(latencies, 0.95), 2)
        out["tokens_per_query"] = round(statistics.fmean(tokens), 1)
    out["categories"] = {
        category or "—": {
            "cases": len(rows_),
            **{
                name: round(statistics.fmean(s.get(name, 0.0) for s in rows_), 4)
                for name in ("recall@5", "recall@10", "hit@10", "mrr")
            },
        }
        for category, rows_ in sorted(categories.items())
        if category
    }
    return out
