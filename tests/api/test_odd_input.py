"""Odd input that once made 500s (a black-box probe found them): each is now a 400 or 413 in
the one error shape, and nothing is written."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from apps.audit.models import AuditEvent
from apps.memories.models import Memory, MemoryVersion, Subject
from apps.pipeline.models import Message
from tests.api.test_bad_input import assert_error
from tests.conftest import Tenant

DEEP_LIST = "[" * 5000 + "]" * 5000  # RecursionError in the JSON decoder
NESTED_800 = json.loads("[" * 800 + "]" * 800)  # parses, then recursed out of stack later


def counts() -> dict[str, int]:
    return {
        "memories": Memory.objects.count(),
        "versions": MemoryVersion.objects.count(),
        "subjects": Subject.objects.count(),
        "messages": Message.objects.count(),
        "audit": AuditEvent.objects.count(),
    }


def send(tenant: Tenant, method: str, path: str, raw: str) -> Any:
    tenant.client.raise_request_exception = False
    return tenant.client.generic(method, tenant.url(path), raw, content_type="application/json")


# Surrogates are written as JSON escapes: a lone one is valid JSON, and invalid Unicode.
SURROGATE_BODIES = [
    ("POST", "memories", '{"subject": "u", "content": "x", "metadata": {"\\ud800": 1}}'),
    ("POST", "memories", '{"subject": "u", "content": "x", "metadata": {"k": "\\udfff"}}'),
    ("POST", "memories", '{"subject": "u", "content": "caf\\ud800e"}'),
    ("PATCH", "memories/{id}", '{"metadata": {"k": ["\\ud800"]}}'),
    ("POST", "documents", '{"subject": "u", "text": "Hello there.", "metadata": {"\\ud800": 1}}'),
    ("POST", "recall", '{"query": "tea", "filters": {"metadata": {"k": "\\ud800"}}}'),
    ("POST", "messages", '{"subject": "u", "session": "s", "messages": [{"role": "user", '
                         '"content": "\\ud800"}]}'),
]  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "path", "raw"), SURROGATE_BODIES)
def test_a_lone_surrogate_anywhere_in_a_body_is_a_400_and_writes_nothing(
    acme: Tenant, memory_id: str, method: str, path: str, raw: str
) -> None:
    before = counts()
    response = send(acme, method, path.format(id=memory_id), raw)
    assert_error(response, 400, "parse_error")
    assert "surrogate" in response.json()["error"]["message"]
    assert counts() == before


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["memories", "recall", "documents", "messages", "context"])
def test_a_body_nested_thousands_deep_is_a_400(acme: Tenant, path: str) -> None:
    before = counts()
    response = send(acme, "POST", path, DEEP_LIST)
    assert_error(response, 400, "parse_error")
    assert counts() == before


@pytest.mark.django_db
def test_metadata_nested_800_deep_is_a_400_and_writes_nothing(acme: Tenant) -> None:
    before = counts()
    raw = json.dumps({"subject": "u", "content": "x", "metadata": {"a": NESTED_800}})
    response = send(acme, "POST", "memories", raw)
    assert_error(response, 400, "parse_error")
    assert "nested deeper than 64 levels" in response.json()["error"]["message"]
    assert counts() == before


@pytest.mark.django_db
def test_metadata_nested_within_the_bound_is_stored(acme: Tenant) -> None:
    nested: Any = "leaf"
    for _ in range(60):
        nested = {"n": nested}
    raw = json.dumps({"subject": "u", "content": "x", "metadata": nested})
    response = send(acme, "POST", "memories", raw)
    assert response.status_code == 201, response.content
    assert response.json()["metadata"] == nested


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "suffix"), [("GET", "export"), ("POST", "erase")])
def test_a_nul_in_a_subject_id_in_the_url_is_a_400(
    acme: Tenant, memory_id: str, method: str, suffix: str
) -> None:
    before = counts()
    acme.client.raise_request_exception = False
    response = acme.client.generic(method, acme.url(f"subjects/u%001/{suffix}"))
    assert_error(response, 400, "validation_error", "external_id")
    assert counts() == before


@pytest.mark.django_db
@pytest.mark.parametrize("position", ["abc", "1; DROP TABLE x", "-5", "1e3"])
def test_a_well_encoded_audit_cursor_with_a_position_that_is_no_id_is_a_400(
    acme: Tenant, position: str
) -> None:
    cursor = base64.b64encode(f"p={position}&r=0".encode()).decode()
    acme.client.raise_request_exception = False
    response = acme.client.get(acme.url("audit"), {"cursor": cursor})
    assert_error(response, 400, "validation_error", "cursor")


@pytest.mark.django_db
def test_a_body_over_the_limit_is_a_413_in_the_error_shape(acme: Tenant, settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    before = counts()
    raw = json.dumps({"subject": "u", "content": "x" * 20_000})
    response = send(acme, "POST", "memories", raw)
    assert_error(response, 413, "body_too_large")
    assert response.json()["error"]["details"] == {"body": {"limit_bytes": 10_000}}
    assert counts() == before


@pytest.mark.django_db
def test_a_page_body_over_the_limit_is_a_400_page_not_a_crash(
    alice_client: Any, settings: Any
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    alice_client.raise_request_exception = False
    response = alice_client.post("/playground/", {"query": "x" * 5000})
    assert response.status_code == 400
    assert b"Bad request" in response.content


@pytest.mark.django_db
def test_the_documented_batch_of_100_messages_of_32_kb_is_accepted(acme: Tenant) -> None:
    # The JSON escapes of non-ASCII text make the body larger than its text: still accepted.
    content = ("é" * 16_000)[: 32_768 // 2]
    assert len(content.encode()) <= 32_768
    body = {
        "subject": "u",
        "session": "s",
        "extract": False,
        "messages": [{"role": "user", "content": content} for _ in range(100)],
    }
    raw = json.dumps(body)  # ensure_ascii: every é is six bytes, \u00e9
    assert len(raw) > 3_000_000
    response = send(acme, "POST", "messages", raw)
    assert response.status_code == 201, response.content[:300]
    assert Message.objects.count() == 100
