"""Recall quality review: eval sets (imported, from feedback, by hand; questions encrypted at
rest), runs (figures, per-case ranks, resumable), comparisons with a paired bootstrap
interval, variants and their promotion, and who may do what on the quality pages."""

from __future__ import annotations

import json
import uuid

import pytest
from django.urls import reverse

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.evaluation import metrics, selectors
from apps.evaluation.models import CaseResult, EvalCase, EvalRun, EvalSet, RunStatus, Variant
from apps.evaluation.runs import run_work
from apps.evaluation.services import (
    eval_case_from_recall,
    eval_set_create_empty,
    eval_set_from_feedback,
    eval_set_import_jsonl,
    run_start,
    variant_promote,
    variant_save,
)
from apps.memories.models import Memory
from apps.namespaces.models import Namespace
from apps.recall import config as recall_config
from apps.recall.models import RecallLog
from apps.recall.search import RecallRequest, recall_memories
from apps.recall.services import recall_feedback_give, recall_queries_forget, recall_query
from memoryhub.exceptions import ApplicationError
from tests.governance.conftest import Cast
from tests.scanning import columns_containing

ACTOR = Actor.system("tests")
CANARY = "okapi-canary-5120"


def jsonl(*cases: dict) -> str:
    return "\n".join(json.dumps(case) for case in cases)


def demo_set(cast: Cast, name: str = "acme questions") -> EvalSet:
    return eval_set_import_jsonl(
        actor=ACTOR,
        namespace=cast.acme,
        name=name,
        text=jsonl(
            {"question": "Which tea does the user like?", "subject": "u1",
             "expected_contains": ["green tea"], "category": "preference"},
            {"question": f"Where did the user move? {CANARY}", "subject": "u1",
             "expected_memory_ids": [str(cast.turn.pk)], "category": "place"},
            {"question": "What is the user's favourite volcano?", "subject": "u1"},
        ),
    )  # fmt: skip


# --- the pure parts ---------------------------------------------------------------------------


def test_a_constant_difference_has_a_zero_width_interval() -> None:
    interval = metrics.paired_bootstrap([0.2] * 40, [0.5] * 40)
    assert interval.delta == pytest.approx(0.3)
    assert (interval.low, interval.high) == (pytest.approx(0.3), pytest.approx(0.3))
    assert interval.significant


def test_the_bootstrap_interval_matches_the_normal_approximation() -> None:
    """100 cases, half won (b - a = 1) and half unchanged: the mean is 0.5, its standard
    error sqrt(0.25 / 100) = 0.05, so the 95% interval is about 0.5 +- 0.098."""
    a = [0.0] * 100
    b = [1.0] * 50 + [0.0] * 50
    interval = metrics.paired_bootstrap(a, b, samples=4000, seed=7)
    assert interval.delta == pytest.approx(0.5)
    assert interval.low == pytest.approx(0.402, abs=0.02)
    assert interval.high == pytest.approx(0.598, abs=0.02)
    assert metrics.paired_bootstrap(a, b, samples=4000, seed=7) == interval  # seeded


def test_noise_is_not_called_a_win() -> None:
    a = [1.0, 0.0] * 20
    b = [0.0, 1.0] * 20  # as many lost as won
    interval = metrics.paired_bootstrap(a, b)
    assert interval.low < 0 < interval.high
    assert not interval.significant


def test_a_configuration_keeps_only_what_differs_and_names_every_bad_field() -> None:
    config = recall_config.parse({"weights": {"vector": 0.8}, "k": 5, "min_relevance": 0.3})
    assert config.as_dict() == {"weights": {"vector": 0.8}, "k": 5, "min_relevance": 0.3}
    assert recall_config.parse(config.as_dict()) == config
    with pytest.raises(recall_config.ConfigError) as raised:
        recall_config.parse({"k": 0, "weights": {"vector": -1, "bogus": 1}, "colour": "red"})
    assert set(raised.value.errors) == {"k", "weights.vector", "weights.bogus", "colour"}


def test_abstention_precision_and_recall() -> None:
    figures = metrics.abstention([True, True, False, False], [True, False, True, False])
    assert figures == {"abstention_precision": 0.5, "abstention_recall": 0.5}


# --- eval sets ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_imported_set_keeps_its_questions_encrypted(cast: Cast) -> None:
    eval_set = demo_set(cast)
    cases = list(eval_set.cases.order_by("position"))
    assert [case.category for case in cases] == ["preference", "place", ""]
    assert cases[0].expected == [cast.fact.pk]  # the current fact, not the superseded one
    assert cases[2].expected == []  # unanswerable
    assert columns_containing(CANARY) == []
    assert selectors.open_question(cases[1]).endswith(CANARY)
    assert AuditEvent.objects.filter(action="eval_set.import", object_id=str(eval_set.pk)).exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("not json", "not JSON"),
        (json.dumps({"question": ""}), "question"),
        (json.dumps({"question": "q", "subject": "nobody"}), "unknown subject"),
        (json.dumps({"question": "q", "subject": "u1", "expected_contains": ["zzz-none"]}),
         "matches nothing"),
        (json.dumps({"question": "q", "expected_memory_ids": ["nope"]}), "expected_memory_ids"),
        (json.dumps({"question": "q", "colour": 1}), "colour"),
    ],
)  # fmt: skip
def test_a_bad_line_is_named_and_nothing_is_kept(cast: Cast, line: str, problem: str) -> None:
    good = json.dumps({"question": "Which tea?", "subject": "u1"})
    with pytest.raises(ApplicationError) as raised:
        eval_set_import_jsonl(actor=ACTOR, namespace=cast.acme, name="bad", text=f"{good}\n{line}")
    assert "line 2" in raised.value.message
    assert problem in json.dumps(raised.value.details)
    assert not EvalSet.objects.filter(name="bad").exists()
    assert not EvalCase.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("item", "message", "problem"),
    [
        ([1], "line 2: not an object.", ["not an object"]),
        ({"question": "q", "colour": 1, "size": 2}, "line 2: unknown fields colour, size.",
         ["colour", "size"]),
        ({"question": " ", "subject": 7, "category": "x" * 41}, "line 2: the question is empty.",
         ["question"]),  # the first problem is the one named
        ({"question": "q", "subject": 7}, "line 2: subject is a string.", ["subject"]),
        ({"question": "q", "expected_memory_ids": "id"}, "line 2: expected_memory_ids is a list.",
         ["expected_memory_ids"]),
        ({"question": "q", "expected_contains": "tea"},
         "line 2: expected_contains is a list of phrases.", ["expected_contains"]),
        ({"question": "q", "category": "x" * 41}, "line 2: category is a short label.",
         ["category"]),
    ],
)  # fmt: skip
def test_each_refusal_of_a_line_says_what_is_wrong_with_it(
    cast: Cast, item: object, message: str, problem: list[str]
) -> None:
    good = json.dumps({"question": "Which tea?", "subject": "u1"})
    text = f"{good}\n{json.dumps(item)}"
    with pytest.raises(ApplicationError) as raised:
        eval_set_import_jsonl(actor=ACTOR, namespace=cast.acme, name="bad", text=text)
    assert raised.value.message == message
    assert raised.value.details == {"line 2": problem}


@pytest.mark.django_db
def test_a_file_of_blank_lines_is_refused_whole(cast: Cast) -> None:
    with pytest.raises(ApplicationError) as raised:
        eval_set_import_jsonl(actor=ACTOR, namespace=cast.acme, name="blank", text=" \n\n\t")
    assert raised.value.message == "The file holds no cases."
    assert raised.value.details == {"file": ["empty"]}
    assert not EvalSet.objects.exists()


@pytest.mark.django_db
def test_another_namespace_s_memory_cannot_be_expected(cast: Cast) -> None:
    line = {
        "question": "q",
        "subject": "u1",
        "expected_memory_ids": [str(cast.other_tenant_memory.pk)],
    }
    with pytest.raises(ApplicationError, match="not the subject"):
        eval_set_import_jsonl(actor=ACTOR, namespace=cast.acme, name="x", text=jsonl(line))


@pytest.mark.django_db
def test_a_set_is_made_from_recalls_with_positive_feedback(cast: Cast) -> None:
    outcome = recall_memories(
        RecallRequest(
            actor=ACTOR, namespace=cast.acme, subject_external_id="u1", query=f"tea {CANARY}"
        )
    )
    assert outcome.recall_id is not None
    log = RecallLog.objects.get(pk=outcome.recall_id)
    assert recall_query(log=log) == f"tea {CANARY}"  # kept, encrypted
    assert columns_containing(CANARY) == []
    served = outcome.hits[0].memory.pk
    recall_feedback_give(
        actor=ACTOR,
        namespace=cast.acme,
        recall_id=str(log.pk),
        memory_id=str(served),
        relevant=True,
    )
    eval_set = eval_set_from_feedback(actor=ACTOR, namespace=cast.acme, name="from feedback")
    (case,) = eval_set.cases.all()
    assert case.expected == [served]
    assert case.recall_id == log.pk
    assert selectors.open_question(case) == f"tea {CANARY}"
    # Past the days they are kept, queries are forgotten, and no set can be made of them.
    RecallLog.objects.filter(pk=log.pk).update(created_at=log.created_at.replace(year=2000))
    assert recall_queries_forget() == 1
    assert recall_query(log=RecallLog.objects.get(pk=log.pk)) is None
    with pytest.raises(ApplicationError, match="No recall"):
        eval_set_from_feedback(actor=ACTOR, namespace=cast.acme, name="again")


@pytest.mark.django_db
def test_a_case_is_added_from_a_recall_log_row(cast: Cast) -> None:
    outcome = recall_memories(
        RecallRequest(
            actor=ACTOR, namespace=cast.acme, subject_external_id="u1", query="Which tea?"
        )
    )
    eval_set = eval_set_create_empty(actor=ACTOR, namespace=cast.acme, name="by hand")
    chosen = str(outcome.hits[0].memory.pk)
    case = eval_case_from_recall(
        actor=ACTOR, eval_set=eval_set, recall_id=str(outcome.recall_id), expected=[chosen]
    )
    assert [str(m) for m in case.expected] == [chosen]
    with pytest.raises(ApplicationError, match="served"):
        eval_case_from_recall(
            actor=ACTOR,
            eval_set=eval_set,
            recall_id=str(outcome.recall_id),
            expected=[str(cast.pending.pk)],
        )


# --- runs -------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_run_scores_each_case_and_the_set(cast: Cast) -> None:
    eval_set = demo_set(cast)
    run = run_start(actor=ACTOR, eval_set=eval_set)  # no broker: runs after commit, here
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED
    assert run.done == run.total == 3
    figures = run.metrics
    assert figures["answerable"] == 2
    assert figures["unanswerable"] == 1
    assert 0 < figures["recall@10"] <= 1
    assert figures["latency_p95_ms"] > 0
    assert figures["tokens_per_query"] > 0
    assert set(figures["categories"]) == {"preference", "place"}
    tea = CaseResult.objects.get(run=run, case__position=1)
    assert tea.ranks[str(cast.fact.pk)] is not None
    assert tea.components
    assert "vector" in tea.components[0]
    # Abstention off: the unanswerable case was answered, so it counts against abstention.
    assert figures["abstention_recall"] == 0.0


@pytest.mark.django_db(transaction=True)
def test_a_stopped_run_resumes_without_asking_a_case_twice(cast: Cast, settings) -> None:  # type: ignore[no-untyped-def]
    settings.CELERY_TASK_ALWAYS_EAGER = False  # nothing runs it on commit: this test does
    eval_set = demo_set(cast)
    run = EvalRun.objects.create(
        namespace=cast.acme, eval_set=eval_set, label="t", config={}, total=3
    )

    class Killed(Exception):
        pass

    def killed(done: int) -> None:
        raise Killed

    with pytest.raises(Killed):
        run_work(run_id=str(run.pk), after_case=killed)
    run.refresh_from_db()
    assert run.done == 1  # in-process: the error is seen
    assert run.status == RunStatus.FAILED
    EvalRun.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING
    )  # as a killed worker leaves it
    asked: list[int] = []
    finished = run_work(run_id=str(run.pk), after_case=asked.append)
    assert asked == [2, 3]
    assert finished.status == RunStatus.SUCCEEDED
    assert finished.done == 3
    assert CaseResult.objects.filter(run=run).count() == 3


@pytest.mark.django_db
def test_a_case_whose_memories_are_gone_is_skipped(cast: Cast) -> None:
    eval_set = demo_set(cast)
    Memory.objects.filter(pk=cast.turn.pk).delete()
    run = EvalRun.objects.create(namespace=cast.acme, eval_set=eval_set, label="t", total=3)
    run = run_work(run_id=str(run.pk))
    assert run.metrics["skipped"] == 1
    assert run.metrics["answerable"] == 1


# --- variants, comparison, promotion ----------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_variants_compare_and_the_promoted_one_serves(cast: Cast) -> None:
    eval_set = demo_set(cast)
    keyword_only = variant_save(
        actor=ACTOR,
        namespace=cast.acme,
        name="keyword only",
        config={"weights": {"vector": 0.0, "context": 0.0}, "k": 3},
    )
    assert keyword_only.config == {"weights": {"vector": 0.0, "context": 0.0}, "k": 3}
    with pytest.raises(ApplicationError):
        variant_save(actor=ACTOR, namespace=cast.acme, name="bad", config={"k": 1000})
    a = run_start(actor=ACTOR, eval_set=eval_set)
    b = run_start(actor=ACTOR, eval_set=eval_set, variant=keyword_only)
    a.refresh_from_db()
    b.refresh_from_db()
    assert b.config == keyword_only.config
    assert b.k == 3
    comparison = selectors.compare(a=a, b=b)
    assert comparison.paired == 2
    recall10 = next(d for d in comparison.deltas if d.name == "recall@10")
    assert recall10.interval is not None
    assert recall10.difference == pytest.approx(b.metrics["recall@10"] - a.metrics["recall@10"])

    variant_promote(actor=ACTOR, variant=keyword_only)
    namespace = Namespace.objects.get(pk=cast.acme.pk)
    assert namespace.recall_config == keyword_only.config
    event = AuditEvent.objects.get(action="recall.config_promote")
    assert event.details["changed"] == ["k", "weights"]
    # The namespace's configuration now serves: three results when a request names no k.
    outcome = recall_memories(
        RecallRequest(
            actor=ACTOR, namespace=namespace, subject_external_id="u1", query="tea", log=False
        )
    )
    assert len(outcome.hits) <= 3
    assert all(hit.components["vector"] >= 0 for hit in outcome.hits)


# --- the pages: roles and tenants -------------------------------------------------------------


def _urls(cast: Cast, eval_set: EvalSet, run: EvalRun, variant: Variant, recall: RecallLog) -> dict:
    slug = cast.acme.slug
    case = eval_set.cases.first()
    assert case is not None
    return {
        "overview": reverse("dashboard:quality:overview", args=[slug]),
        "set": reverse("dashboard:quality:set", args=[slug, eval_set.pk]),
        "run": reverse("dashboard:quality:run", args=[slug, run.pk]),
        "case": reverse("dashboard:quality:case", args=[slug, run.pk, case.pk]),
        "compare": reverse("dashboard:quality:compare", args=[slug]) + f"?a={run.pk}&b={run.pk}",
        "case_from_recall": reverse("dashboard:quality:case_from_recall", args=[slug, recall.pk]),
    }


@pytest.mark.django_db(transaction=True)
def test_who_may_see_and_do_what(cast: Cast) -> None:
    eval_set = demo_set(cast)
    run = run_start(actor=ACTOR, eval_set=eval_set)
    variant = variant_save(actor=ACTOR, namespace=cast.acme, name="v", config={"k": 5})
    recall = RecallLog.objects.create(
        namespace=cast.acme, actor_type="t", memory_ids=[cast.fact.pk]
    )
    urls = _urls(cast, eval_set, run, variant, recall)
    slug = cast.acme.slug
    for name, url in urls.items():
        assert cast.client("oscar").get(url).status_code == 404, name  # another tenant's
        expected = 403 if name == "case_from_recall" else 200
        assert cast.client("vera").get(url).status_code == expected, name
    page = cast.client("vera").get(urls["set"])
    assert page["Cache-Control"].startswith("max-age=0") or "no-store" in page["Cache-Control"]
    assert AuditEvent.objects.filter(action="dashboard.read.eval_cases").exists()
    writes = {
        "set_create": (reverse("dashboard:quality:set_create", args=[slug]), {"name": "new"}),
        "variant_save": (reverse("dashboard:quality:variant_save", args=[slug]), {"name": "x"}),
        "variant_delete": (
            reverse("dashboard:quality:variant_delete", args=[slug, variant.pk]),
            {},
        ),
        "run": (urls["set"], {"token_budget": "2000"}),
    }
    promote = reverse("dashboard:quality:variant_promote", args=[slug, variant.pk])
    for name, (url, data) in writes.items():
        assert cast.client("vera").post(url, data).status_code == 403, name
        assert cast.client("oscar").post(url, data).status_code == 404, name
    assert cast.client("eddie").post(promote).status_code == 403  # promotion is the owner's
    assert cast.client("olive").post(promote).status_code == 302
    assert Namespace.objects.get(pk=cast.acme.pk).recall_config == {"k": 5}
    assert cast.client("eddie").post(*writes["run"]).status_code == 302
    assert cast.client("eddie").post(*writes["set_create"]).status_code == 302
    missing = reverse("dashboard:quality:set", args=[slug, uuid.uuid4()])
    assert cast.client("olive").get(missing).status_code == 404


@pytest.mark.django_db(transaction=True)
def test_the_pages_show_figures_misses_and_changes(cast: Cast) -> None:
    eval_set = demo_set(cast)
    a = run_start(actor=ACTOR, eval_set=eval_set)
    variant = variant_save(
        actor=ACTOR, namespace=cast.acme, name="tiny", config={"k": 1, "keyword_candidates": 1}
    )
    b = run_start(actor=ACTOR, eval_set=eval_set, variant=variant)
    client = cast.client("olive")
    overview = client.get(
        reverse("dashboard:quality:overview", args=[cast.acme.slug])
    ).content.decode()
    assert "acme questions" in overview  # the trend
    assert "data:image/svg+xml" in overview
    run_page = client.get(
        reverse("dashboard:quality:run", args=[cast.acme.slug, a.pk]) + "?misses=1"
    )
    text = run_page.content.decode()
    assert "favourite volcano" in text  # answered though unanswerable: a miss
    assert "Which tea does the user like?" not in text  # a hit
    compare = client.get(
        reverse("dashboard:quality:compare", args=[cast.acme.slug]) + f"?a={a.pk}&b={b.pk}"
    ).content.decode()
    assert "95% interval" in compare
    assert "tiny" in compare


def test_deleting_a_case_or_a_variant_asks_first_naming_it(cast: Cast) -> None:
    eval_set = demo_set(cast)
    case = eval_set.cases.get(position=2)
    variant = variant_save(actor=ACTOR, namespace=cast.acme, name="wider", config={"k": 20})
    slug = cast.acme.slug
    case_url = reverse("dashboard:quality:case_delete", args=[slug, case.pk])
    variant_url = reverse("dashboard:quality:variant_delete", args=[slug, variant.pk])
    editor = cast.client("eddie")

    page = editor.get(case_url)
    assert page.status_code == 200
    assert CANARY in page.content.decode()  # the question, decrypted, names the case
    assert AuditEvent.objects.filter(action="dashboard.read.eval_case").exists()
    assert EvalCase.objects.filter(pk=case.pk).exists()  # asking deleted nothing
    page = editor.get(variant_url)
    assert page.status_code == 200
    assert "wider" in page.content.decode()
    assert Variant.objects.filter(pk=variant.pk).exists()
    assert cast.client("vera").get(case_url).status_code == 403  # a viewer may not
    assert cast.client("oscar").get(variant_url).status_code == 404  # another tenant's

    assert editor.post(case_url).status_code == 302
    assert editor.post(variant_url).status_code == 302
    assert not EvalCase.objects.filter(pk=case.pk).exists()
    assert not Variant.objects.filter(pk=variant.pk).exists()


def test_it_pages_a_sets_cases_by_keyset(cast: Cast) -> None:
    eval_set = demo_set(cast)
    first = selectors.cases_page(eval_set=eval_set, size=2)
    assert (first.start, first.end, first.total) == (1, 2, 3)
    assert [row.case.position for row in first.rows] == sorted(r.case.position for r in first.rows)
    assert first.next_cursor is not None
    second = selectors.cases_page(eval_set=eval_set, size=2, after=first.next_cursor)
    assert (second.start, second.end, second.next_cursor) == (3, 3, None)
    assert second.previous_cursor is not None
    back = selectors.cases_page(eval_set=eval_set, size=2, before=second.previous_cursor)
    assert [row.case.pk for row in back.rows] == [row.case.pk for row in first.rows]
    # A cursor that does not parse is the first page.
    garbled = selectors.cases_page(eval_set=eval_set, size=2, after="not-a-cursor")
    assert garbled.start == 1
