"""`/metrics`: absent (404) until MEMORYHUB_METRICS_TOKEN is set, then only for a request
bearing it (401 otherwise); Prometheus' text format with MemoryHub's figures, whose labels
name route templates, statuses and namespaces, never a subject or a raw path."""

from __future__ import annotations

import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from apps.audit.services import chain_verification_execute, chain_verification_start
from apps.memories.models import Memory, Status
from memoryhub import metrics
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db

TOKEN = "metrics-token-0123456789abcdef"
CANARY = "canary-subject-4471"


@pytest.fixture
def token(settings) -> str:
    settings.MEMORYHUB_METRICS_TOKEN = TOKEN
    return TOKEN


def scrape(client: Client, token: str = TOKEN) -> str:
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    return response.content.decode()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(text: str, name: str, **labels: str) -> float:
    return samples(text).get((name, tuple(sorted(labels.items()))), 0.0)


def test_it_is_not_found_while_no_token_is_set(client: Client, settings) -> None:
    settings.MEMORYHUB_METRICS_TOKEN = None
    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 404


def test_it_refuses_a_request_without_the_token(client: Client, token: str) -> None:
    response = client.get("/metrics")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert b"memoryhub_" not in response.content


@pytest.mark.parametrize(
    "header", [f"Bearer {TOKEN}x", "Bearer ", f"Basic {TOKEN}", TOKEN, "Bearer wrong"]
)
def test_it_refuses_a_wrong_token(client: Client, token: str, header: str) -> None:
    assert client.get("/metrics", HTTP_AUTHORIZATION=header).status_code == 401


def test_it_serves_every_family_with_the_token(client: Client, token: str) -> None:
    text = scrape(client)
    names = {family.name for family in text_string_to_metric_families(text)}
    assert {
        "memoryhub_http_requests",
        "memoryhub_http_request_duration_seconds",
        "memoryhub_recall_duration_seconds",
        "memoryhub_recall_results",
        "memoryhub_context_duration_seconds",
        "memoryhub_context_memories",
        "memoryhub_ingest_messages",
        "memoryhub_ingest_jobs",
        "memoryhub_celery_tasks",
        "memoryhub_erasures",
        "memoryhub_purged_memories",
        "memoryhub_embedding_model_load_seconds",
        "memoryhub_jobs",
        "memoryhub_review_queue_memories",
        "memoryhub_disputed_facts",
        "memoryhub_audit_verification_intact",
        "memoryhub_audit_verification_timestamp_seconds",
        "memoryhub_llm_calls",
        "memoryhub_llm_failures",
        "memoryhub_llm_fallbacks",
        "memoryhub_llm_refused_facts",
        "memoryhub_llm_breaker_open",
    } <= names


def test_recalls_and_contexts_are_timed_and_their_results_counted(
    client: Client, token: str, acme: Tenant
) -> None:
    before = scrape(client)
    created = acme.client.post(
        acme.url("memories"),
        {"subject": "u1", "content": "Prefers window seats on long flights"},
        format="json",
    )
    assert created.status_code == 201
    recalled = acme.client.post(
        acme.url("recall"), {"subject": "u1", "query": "window seat"}, format="json"
    )
    assert recalled.status_code == 200
    context = acme.client.post(
        acme.url("context"), {"subject": "u1", "query": "window seat"}, format="json"
    )
    assert context.status_code == 200, context.json()
    after = scrape(client)

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew("memoryhub_recall_duration_seconds_count") >= 2  # the API's, the context's
    assert grew("memoryhub_recall_results_total") >= 1
    assert grew("memoryhub_context_duration_seconds_count") == 1
    assert grew("memoryhub_context_memories_total") >= 1
    route = "api/v1/namespaces/<slug:namespace>/recall"
    assert grew("memoryhub_http_requests_total", route=route, status="200") == 1


def test_labels_never_hold_a_subject_or_a_raw_path(
    client: Client, token: str, acme: Tenant, django_capture_on_commit_callbacks
) -> None:
    acme.client.post(
        acme.url("memories"), {"subject": CANARY, "content": "Lives in Lyon"}, format="json"
    )
    acme.client.get(acme.url(f"subjects/{CANARY}"))
    acme.client.get(acme.url(f"subjects/{CANARY}/export"))
    client.get(f"/no-such-page/{CANARY}")
    with django_capture_on_commit_callbacks() as committed:
        erased = acme.client.post(acme.url(f"subjects/{CANARY}/erase"))
    assert erased.status_code == 200
    # The counts' callbacks alone: the data-key VACUUM cannot run in the test's transaction.
    for callback in committed:
        if isinstance(callback, metrics.Increment):
            callback()

    text = scrape(client)
    assert CANARY not in text
    assert f"/api/v1/namespaces/{acme.slug}/" not in text
    assert "api/v1/namespaces/<slug:namespace>/subjects/<str:external_id>/erase" in text
    assert 'route="<unmatched>",status="404"' in text
    assert value(text, "memoryhub_erasures_total", via="api") >= 1


def test_queue_review_and_audit_figures_are_read_at_scrape_time(
    client: Client, token: str, acme: Tenant
) -> None:
    acme.client.post(acme.url("memories"), {"subject": "u1", "content": "A"}, format="json")
    acme.client.post(acme.url("memories"), {"subject": "u1", "content": "B"}, format="json")
    Memory.objects.filter(namespace=acme.namespace).update(status=Status.DISPUTED)
    verification = chain_verification_start(requested_by="beat", full=True)
    chain_verification_execute(verification_id=verification.pk)

    text = scrape(client)
    assert value(text, "memoryhub_disputed_facts", namespace=acme.slug) == 2
    assert value(text, "memoryhub_review_queue_memories", namespace=acme.slug) == 2
    assert value(text, "memoryhub_audit_verification_intact") == 1
    assert value(text, "memoryhub_audit_verification_timestamp_seconds") > 0
    assert 'memoryhub_jobs{status="queued"}' in text
