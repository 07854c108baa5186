"""Reads of recall quality review, scoped to a namespace (another namespace's set, run, case
or variant is not found). Questions are decrypted only where a page shows them; the views
record those reads."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, QuerySet
from django.utils.translation import gettext_noop

from apps.audit.models import AuditEvent
from apps.evaluation import metrics
from apps.evaluation.models import CaseResult, EvalCase, EvalRun, EvalSet, RunStatus, Variant
from apps.memories.models import SEARCH_FIELDS, Memory, Subject
from apps.memories.row_encryption import KeyCache, open_memory, open_row
from apps.namespaces.models import Namespace
from memoryhub.cursor_pages import PageOrder, cursor_page
from memoryhub.exceptions import NotFound

# The figures a run's page and a comparison show, in order: (key, higher is better).
HEADLINE = [
    ("recall@5", True),
    ("recall@10", True),
    ("hit@10", True),
    ("mrr", True),
    ("ndcg@10", True),
    ("abstention_precision", True),
    ("abstention_recall", True),
    ("latency_p50_ms", False),
    ("latency_p95_ms", False),
    ("tokens_per_query", False),
]
# The per-case metrics a comparison resamples (paired bootstrap).
PAIRED = ["recall@5", "recall@10", "hit@10", "mrr", "ndcg@10"]


def _get(queryset: QuerySet[Any], namespace: Namespace, pk: Any, refusal: str) -> Any:
    try:
        return queryset.get(namespace=namespace, pk=uuid.UUID(str(pk)))
    except (ValueError, queryset.model.DoesNotExist):
        raise NotFound(refusal) from None


def eval_set_get(*, namespace: Namespace, set_id: Any) -> EvalSet:
    return _get(
        EvalSet.objects.select_related("namespace"),
        namespace,
        set_id,
        gettext_noop("No such eval set."),
    )


def run_get(*, namespace: Namespace, run_id: Any) -> EvalRun:
    return _get(
        EvalRun.objects.select_related("namespace", "eval_set", "variant"),
        namespace,
        run_id,
        gettext_noop("No such run."),
    )


def variant_get(*, namespace: Namespace, variant_id: Any) -> Variant:
    return _get(
        Variant.objects.select_related("namespace"),
        namespace,
        variant_id,
        gettext_noop("No such variant."),
    )


def case_get(*, namespace: Namespace, case_id: Any) -> EvalCase:
    return _get(
        EvalCase.objects.select_related("subject", "eval_set"),
        namespace,
        case_id,
        gettext_noop("No such case."),
    )


def variants(*, namespace: Namespace) -> list[Variant]:
    return list(Variant.objects.filter(namespace=namespace).order_by("name"))


@dataclass
class SetSummary:
    eval_set: EvalSet
    cases: int
    latest: EvalRun | None
    history: list[EvalRun] = field(default_factory=list)  # finished runs, oldest first


def sets_overview(*, namespace: Namespace, history: int = 20) -> list[SetSummary]:
    """Each set with its case count, its latest finished run and the last `history`
    finished runs (for the trend)."""
    sets = list(
        EvalSet.objects.filter(namespace=namespace)
        .annotate(case_count=Count("cases"))
        .order_by("name")
    )
    out = []
    for eval_set in sets:
        runs = list(
            EvalRun.objects.filter(eval_set=eval_set, status=RunStatus.SUCCEEDED)
            .select_related("variant")
            .order_by("-created_at")[:history]
        )
        out.append(
            SetSummary(
                eval_set=eval_set,
                cases=eval_set.case_count,
                latest=runs[0] if runs else None,
                history=list(reversed(runs)),
            )
        )
    return out


def runs_of(*, eval_set: EvalSet) -> list[EvalRun]:
    return list(eval_set.runs.select_related("variant").order_by("-created_at")[:100])


@dataclass
class CaseRow:
    case: EvalCase
    question: str
    subject: str  # the subject's external id, "" for shared-only


# A set's cases in their order in the set, the id breaking ties.
CASES_IN_ORDER = PageOrder("cases", "position", descending=False)


@dataclass(frozen=True)
class CasePage:
    rows: list[CaseRow]
    total: int
    start: int  # the number of the first row (1-based); 0 on an empty page
    end: int
    next_cursor: str | None
    previous_cursor: str | None


def cases_page(
    *,
    eval_set: EvalSet,
    after: str = "",
    before: str = "",
    size: int = 50,
    keys: KeyCache | None = None,
) -> CasePage:
    """A page of the set's cases in their order, with their questions decrypted, and the
    total: by keyset (memoryhub/cursor_pages.py), `after` a cursor the next page, `before`
    one the previous; a cursor that does not parse is the first page."""
    keys = keys or KeyCache()
    queryset = eval_set.cases.select_related("subject")
    total = queryset.count()
    page = cursor_page(queryset, order=CASES_IN_ORDER, size=size, after=after, before=before)
    rows = [
        CaseRow(
            case,
            open_row(keys, case, case.namespace_id, case.subject_id),
            case.subject.external_id if case.subject else "",
        )
        for case in page.rows
    ]
    return CasePage(
        rows=rows,
        total=total,
        start=page.start,
        end=page.end,
        next_cursor=page.next_cursor,
        previous_cursor=page.previous_cursor,
    )


@dataclass
class ResultRow:
    result: CaseResult
    question: str
    category: str
    hit: bool | None  # None: unanswerable
    best_rank: int | None
    abstained: bool


def run_results(
    *,
    run: EvalRun,
    misses_only: bool = False,
    category: str = "",
    keys: KeyCache | None = None,
    limit: int = 500,
) -> list[ResultRow]:
    """The run's per-case results (first `limit`), questions decrypted; `misses_only` keeps
    answerable cases whose expected memories were not in the top 10, and unanswerable ones
    that were answered."""
    keys = keys or KeyCache()
    rows = []
    results = run.results.select_related("case").order_by("case__position")
    if category:
        results = results.filter(case__category=category)
    for result in results:
        scores = result.scores
        if "skipped" in scores:
            continue
        answerable = "mrr" in scores
        hit = bool(scores.get("hit@10")) if answerable else None
        abstained = bool(scores.get("returned_nothing"))
        missed = (answerable and not hit) or (not answerable and not abstained)
        if misses_only and not missed:
            continue
        ranks = [rank for rank in result.ranks.values() if rank is not None]
        case = result.case
        rows.append(
            ResultRow(
                result,
                open_row(keys, case, case.namespace_id, case.subject_id),
                case.category,
                hit,
                min(ranks) if ranks else None,
                abstained,
            )
        )
        if len(rows) >= limit:
            break
    return rows


@dataclass
class ServedRow:
    rank: int
    memory_id: str
    text: str | None  # None: the memory is gone since
    expected: bool
    components: dict[str, float]


def case_recall(*, result: CaseResult, keys: KeyCache | None = None) -> list[ServedRow]:
    """What recall returned for a case in a run, with each memory's score components and
    text (decrypted now; a memory deleted since shows as gone)."""
    keys = keys or KeyCache()
    memories = Memory.objects.defer(*SEARCH_FIELDS).in_bulk(result.ranked)
    expected = {str(m) for m in result.case.expected}
    rows = []
    for rank, (memory_id, components) in enumerate(
        zip(result.ranked, result.components, strict=False), start=1
    ):
        memory = memories.get(memory_id)
        rows.append(
            ServedRow(
                rank,
                str(memory_id),
                open_memory(keys, memory) if memory is not None else None,
                str(memory_id) in expected,
                components,
            )
        )
    return rows


def expected_memories(
    *, case: EvalCase, keys: KeyCache | None = None
) -> list[tuple[str, str | None]]:
    keys = keys or KeyCache()
    memories = Memory.objects.defer(*SEARCH_FIELDS).in_bulk(case.expected)
    return [
        (str(m), open_memory(keys, memories[m]) if m in memories else None) for m in case.expected
    ]


@dataclass
class Delta:
    name: str
    a: float | None
    b: float | None
    higher_is_better: bool
    interval: metrics.Interval | None = None  # paired bootstrap, per-case metrics only

    @property
    def difference(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a

    @property
    def verdict(self) -> str:
        """better | worse | noise | "" (no interval: not tested)."""
        if self.interval is None or self.difference is None:
            return ""
        if not self.interval.significant:
            return "noise"
        improved = (self.interval.delta > 0) == self.higher_is_better
        return "better" if improved else "worse"


@dataclass
class Change:
    case: EvalCase
    question: str
    a_rank: int | None
    b_rank: int | None
    won: bool


@dataclass
class Comparison:
    a: EvalRun
    b: EvalRun
    deltas: list[Delta]
    paired: int
    changes: list[Change]


def compare(*, a: EvalRun, b: EvalRun, keys: KeyCache | None = None) -> Comparison:
    """Two finished runs of one set: each headline figure's change, with a paired bootstrap
    95% interval for the per-case ones over the cases both answered; and the cases whose hit
    at 10 changed (won or lost) or whose abstention changed."""
    keys = keys or KeyCache()
    results_a = {r.case_id: r for r in a.results.select_related("case")}
    results_b = {r.case_id: r for r in b.results.select_related("case")}
    common = [
        case_id
        for case_id in results_a
        if case_id in results_b
        and "mrr" in results_a[case_id].scores
        and "mrr" in results_b[case_id].scores
    ]
    deltas = []
    for name, higher in HEADLINE:
        interval = None
        if name in PAIRED and common:
            interval = metrics.paired_bootstrap(
                [results_a[c].scores.get(name, 0.0) for c in common],
                [results_b[c].scores.get(name, 0.0) for c in common],
            )
        deltas.append(Delta(name, a.metrics.get(name), b.metrics.get(name), higher, interval))
    changes = []
    for case_id, before in results_a.items():
        after = results_b.get(case_id)
        if after is None:
            continue
        if "mrr" in before.scores and "mrr" in after.scores:
            was, now = bool(before.scores.get("hit@10")), bool(after.scores.get("hit@10"))
        elif "mrr" not in before.scores and "mrr" not in after.scores:
            was = bool(before.scores.get("returned_nothing"))
            now = bool(after.scores.get("returned_nothing"))
        else:
            continue
        if was != now:
            case = before.case
            changes.append(
                Change(
                    case,
                    open_row(keys, case, case.namespace_id, case.subject_id),
                    _best(before),
                    _best(after),
                    won=now,
                )
            )
    changes.sort(key=lambda change: (not change.won, change.case.position))
    return Comparison(a, b, deltas, len(common), changes)


def _best(result: CaseResult) -> int | None:
    ranks = [rank for rank in result.ranks.values() if rank is not None]
    return min(ranks) if ranks else None


def open_question(case: EvalCase, keys: KeyCache | None = None) -> str:
    return open_row(keys or KeyCache(), case, case.namespace_id, case.subject_id)


def served_memories(
    *, namespace: Namespace, log: Any, keys: KeyCache | None = None
) -> list[tuple[str, str | None]]:
    """The memories a logged recall served, in order, with their text now (None: gone)."""
    keys = keys or KeyCache()
    memories = (
        Memory.objects.filter(namespace=namespace).defer(*SEARCH_FIELDS).in_bulk(log.memory_ids)
    )
    return [
        (str(m), open_memory(keys, memories[m]) if m in memories else None) for m in log.memory_ids
    ]


@dataclass
class Promotion:
    variant: str  # its name, or its id if deleted since
    actor: str
    at: Any


def last_promotion(*, namespace: Namespace) -> Promotion | None:
    """The last time a variant was promoted to the namespace's configuration (audit log)."""
    event = (
        AuditEvent.objects.filter(namespace_id=namespace.pk, action="recall.config_promote")
        .order_by("-id")
        .first()
    )
    if event is None:
        return None
    variant = Variant.objects.filter(namespace=namespace, pk=event.object_id).first()
    return Promotion(
        variant.name if variant else event.object_id, event.actor_name, event.created_at
    )


def subject_eval_cases_export(keys: KeyCache, subject: Subject) -> list[dict[str, Any]]:
    """The eval-set questions asked for the subject (registered as the export's "eval_cases"
    part), decrypted, with the memories expected to answer them."""
    cases = EvalCase.objects.filter(subject=subject).select_related("eval_set")
    return [
        {
            "eval_set": case.eval_set.name,
            "position": case.position,
            "question": open_question(case, keys),
            "expected_memory_ids": [str(memory_id) for memory_id in case.expected],
            "category": case.category,
            "created_at": case.created_at.isoformat(),
        }
        for case in cases.order_by("created_at", "id")
    ]
