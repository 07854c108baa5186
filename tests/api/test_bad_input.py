"""Bad input gets a clear error in the one error shape, and loses nothing.

After every refused write no Memory, MemoryVersion, Subject, DataKey or AuditEvent row has
been added (counted after the fixtures, whose own setup writes audit rows), and the memory
that was already there reads back exactly as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import cache

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.memories import services
from apps.memories.models import DataKey, Memory, MemoryVersion, Subject
from tests.conftest import Tenant

LIMIT = 100  # bytes, set for every test below


@pytest.fixture(autouse=True)
def small_limit(settings: Any) -> Iterator[None]:
    settings.MEMORYHUB_MAX_CONTENT_BYTES = LIMIT
    cache.clear()  # a fresh throttle window: some tests here send many requests
    yield
    cache.clear()


@pytest.fixture
def existing(acme: Tenant) -> dict[str, Any]:
    """One memory of subject "u1", created before the counting starts."""
    memory = services.memory_create(
        actor=Actor.system("tests"),
        namespace=acme.namespace,
        item=services.NewMemory(
            subject_external_id="u1",
            content="Prefers tea over coffee",
            tags=["drinks"],
            metadata={"source": "chat"},
        ),
    )
    response = acme.client.get(acme.url(f"memories/{memory.id}"))
    assert response.status_code == 200
    return response.json()


def row_counts() -> dict[str, int]:
    return {
        "memories": Memory.objects.count(),
        "versions": MemoryVersion.objects.count(),
        "subjects": Subject.objects.count(),
        "data_keys": DataKey.objects.count(),
        "audit_events": AuditEvent.objects.count(),
    }


def assert_error(response: Any, status: int, code: str, field: str | None = None) -> None:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "details"}, body
    assert body["error"]["code"] == code, body
    assert body["error"]["message"], body
    if field is not None:
        assert field in body["error"]["details"], body


def post(tenant: Tenant, body: Any) -> Any:
    return tenant.client.post(tenant.url("memories"), body, format="json")


def patch(tenant: Tenant, memory_id: str, body: Any) -> Any:
    return tenant.client.patch(tenant.url(f"memories/{memory_id}"), body, format="json")


VALID = {"subject": "u2", "content": "Lives in Lisbon"}


@pytest.mark.django_db
def test_it_answers_in_english_whatever_the_client_s_language(acme: Tenant) -> None:
    response = acme.client.post(
        acme.url("memories"),
        {**VALID, "content": "x" * (LIMIT + 1)},
        format="json",
        HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9",
    )
    assert_error(response, 413, "content_too_large", "content")
    message = response.json()["error"]["message"]
    assert message == f"Content is {LIMIT + 1} bytes; the limit is {LIMIT}."


# --- refused creates ---------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("changes", "status", "code", "field"),
    [
        ({"content": "x" * (LIMIT + 1)}, 413, "content_too_large", "content"),
        ({"content": "é" * (LIMIT // 2 + 1)}, 413, "content_too_large", "content"),  # bytes
        ({"content": "before\x00after"}, 400, "validation_error", "content"),
        ({"content": ""}, 400, "validation_error", "content"),
        ({"content": "   \n\t "}, 400, "validation_error", "content"),
        ({"content": None}, 400, "validation_error", "content"),
        ({"content": ["a list"]}, 400, "validation_error", "content"),
        ({"kind": "gossip"}, 400, "validation_error", "kind"),
        ({"colour": "blue"}, 400, "validation_error", "colour"),
        ({"id": "00000000-0000-0000-0000-000000000001"}, 400, "validation_error", "id"),
        ({"expires_at": "next tuesday"}, 400, "validation_error", "expires_at"),
        ({"expires_at": "2030-02-30T00:00:00Z"}, 400, "validation_error", "expires_at"),
        ({"occurred_at": "yesterday"}, 400, "validation_error", "occurred_at"),
        ({"importance": 1.5}, 400, "validation_error", "importance"),
        ({"importance": -0.1}, 400, "validation_error", "importance"),
        ({"importance": "very"}, 400, "validation_error", "importance"),
        ({"confidence": 2}, 400, "validation_error", "confidence"),
        ({"tags": "drinks"}, 400, "validation_error", "tags"),
        ({"tags": {"a": 1}}, 400, "validation_error", "tags"),
        ({"tags": ["x" * 65]}, 400, "validation_error", "tags"),
        ({"tags": [f"t{i}" for i in range(51)]}, 400, "validation_error", "tags"),
        ({"tags": ["nul\x00tag"]}, 400, "validation_error", "tags"),
        ({"metadata": ["not", "an", "object"]}, 400, "validation_error", "metadata"),
        ({"metadata": "text"}, 400, "validation_error", "metadata"),
        ({"metadata": {"note": "nul\x00"}}, 400, "validation_error", "metadata"),
        ({"metadata": {"blob": "x" * 20_000}}, 400, "validation_error", "metadata"),
        ({"subject": "s" * 256}, 400, "validation_error", "subject"),
        ({"subject": "nul\x00subject"}, 400, "validation_error", "subject"),
        ({"subject": ""}, 400, "validation_error", "subject"),
        ({"source": {"app": "a", "channel": "sms"}}, 400, "validation_error", "source"),
        ({"source": "chat"}, 400, "validation_error", "source"),
        ({"source": {"app": "nul\x00"}}, 400, "validation_error", "source"),
    ],
    ids=lambda value: value if isinstance(value, str) and len(value) < 30 else None,
)
def test_a_refused_create_names_the_problem_and_stores_nothing(
    acme: Tenant,
    existing: dict[str, Any],
    changes: dict[str, Any],
    status: int,
    code: str,
    field: str,
) -> None:
    before = row_counts()
    response = post(acme, {**VALID, **changes})
    assert_error(response, status, code, field)
    assert row_counts() == before


@pytest.mark.django_db
def test_content_over_the_limit_reports_size_and_limit(acme: Tenant) -> None:
    response = post(acme, {**VALID, "content": "x" * (LIMIT + 5)})
    assert_error(response, 413, "content_too_large", "content")
    assert response.json()["error"]["details"]["content"] == {"bytes": LIMIT + 5, "limit": LIMIT}


@pytest.mark.django_db
def test_content_of_exactly_the_limit_is_accepted(acme: Tenant) -> None:
    response = post(acme, {**VALID, "content": "x" * LIMIT})
    assert response.status_code == 201, response.json()
    assert len(response.json()["content"]) == LIMIT


@pytest.mark.django_db
def test_an_unknown_field_is_named_in_the_error(acme: Tenant) -> None:
    response = post(acme, {**VALID, "colour": "blue", "size": 3})
    assert_error(response, 400, "validation_error")
    assert set(response.json()["error"]["details"]) == {"colour", "size"}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "raw",
    ['{"content": ', "{content: 'x'}", '{"content": "x",}', '{"importance": NaN}', "\x00"],
    ids=["truncated", "unquoted", "trailing-comma", "nan", "nul"],
)
def test_malformed_json_is_a_parse_error_and_stores_nothing(
    acme: Tenant, existing: dict[str, Any], raw: str
) -> None:
    before = row_counts()
    response = acme.client.post(acme.url("memories"), raw, content_type="application/json")
    assert_error(response, 400, "parse_error")
    assert row_counts() == before


@pytest.mark.django_db
@pytest.mark.parametrize("raw", ["", "{}", "[]", '["content"]', '"content"', "42", "null"])
def test_a_json_body_that_is_not_an_object_is_refused(
    acme: Tenant, existing: dict[str, Any], raw: str
) -> None:
    before = row_counts()
    response = acme.client.post(acme.url("memories"), raw, content_type="application/json")
    assert_error(response, 400, "validation_error")
    assert row_counts() == before


@pytest.mark.django_db
def test_a_form_encoded_body_is_an_unsupported_media_type(
    acme: Tenant, existing: dict[str, Any]
) -> None:
    before = row_counts()
    response = acme.client.post(acme.url("memories"), VALID)  # multipart, not JSON
    assert_error(response, 415, "unsupported_media_type")
    assert row_counts() == before


# --- refused updates ---------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "status", "code", "field"),
    [
        ({"content": "x" * (LIMIT + 1)}, 413, "content_too_large", "content"),
        ({"content": "nul\x00"}, 400, "validation_error", "content"),
        ({"content": ""}, 400, "validation_error", "content"),
        ({"content": "  "}, 400, "validation_error", "content"),
        ({"colour": "blue"}, 400, "validation_error", "colour"),
        ({"subject": "u2"}, 400, "validation_error", "subject"),
        ({"version": 7}, 400, "validation_error", "version"),
        ({"valid_to": "2030-01-01T00:00:00Z"}, 400, "validation_error", "valid_to"),
        ({"kind": "gossip"}, 400, "validation_error", "kind"),
        ({"status": "deleted"}, 400, "validation_error", "status"),
        ({"importance": 1.5}, 400, "validation_error", "importance"),
        ({"tags": "drinks"}, 400, "validation_error", "tags"),
        ({"metadata": [1, 2]}, 400, "validation_error", "metadata"),
        ({"expires_at": "soon"}, 400, "validation_error", "expires_at"),
        ({"reason": "r" * 201, "content": "new"}, 400, "validation_error", "reason"),
        ({"reason": "nul\x00", "content": "new"}, 400, "validation_error", "reason"),
        ({"content": "new text", "importance": 7}, 400, "validation_error", "importance"),
    ],
    ids=lambda value: value if isinstance(value, str) and len(value) < 30 else None,
)
def test_a_refused_update_names_the_problem_and_changes_nothing(
    acme: Tenant,
    existing: dict[str, Any],
    body: dict[str, Any],
    status: int,
    code: str,
    field: str,
) -> None:
    before = row_counts()
    response = patch(acme, existing["id"], body)
    assert_error(response, status, code, field)
    assert row_counts() == before
    assert acme.client.get(acme.url(f"memories/{existing['id']}")).json() == existing


@pytest.mark.django_db
def test_malformed_json_in_an_update_changes_nothing(
    acme: Tenant, existing: dict[str, Any]
) -> None:
    before = row_counts()
    response = acme.client.patch(
        acme.url(f"memories/{existing['id']}"), '{"content": "x"', content_type="application/json"
    )
    assert_error(response, 400, "parse_error")
    assert row_counts() == before
    assert acme.client.get(acme.url(f"memories/{existing['id']}")).json() == existing


# --- refused reads -----------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"since": "last week"}, "since"),
        ({"until": "2024-13-01"}, "until"),
        ({"kind": "gossip"}, "kind"),
        ({"status": "deleted"}, "status"),
        ({"page_size": "0"}, "page_size"),
        ({"page_size": "201"}, "page_size"),
        ({"page_size": "many"}, "page_size"),
        ({"colour": "blue"}, "colour"),
    ],
    ids=lambda value: "=".join(*value.items()) if isinstance(value, dict) else value,
)
def test_a_bad_list_query_is_refused_naming_the_parameter(
    acme: Tenant, existing: dict[str, Any], query: dict[str, str], field: str
) -> None:
    response = acme.client.get(acme.url("memories"), query)
    assert_error(response, 400, "validation_error", field)


@pytest.mark.django_db
def test_a_garbled_cursor_is_refused(acme: Tenant, existing: dict[str, Any]) -> None:
    response = acme.client.get(acme.url("memories"), {"cursor": "not-a-cursor"})
    assert_error(response, 400, "validation_error", "cursor")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"outcome": "maybe"}, "outcome"),
        ({"subject_id": "not-a-uuid"}, "subject_id"),
        ({"since": "last week"}, "since"),
        ({"colour": "blue"}, "colour"),
    ],
    ids=lambda value: "=".join(*value.items()) if isinstance(value, dict) else value,
)
def test_a_bad_audit_query_is_refused_naming_the_parameter(
    acme: Tenant, query: dict[str, str], field: str
) -> None:
    response = acme.client.get(acme.url("audit"), query)
    assert_error(response, 400, "validation_error", field)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "memories/{id}"),
        ("PATCH", "memories/{id}"),
        ("DELETE", "memories/{id}"),
        ("GET", "memories/{id}/versions"),
    ],
)
@pytest.mark.parametrize("memory_id", ["not-a-uuid", "1", "00000000-0000-0000-0000-00000000000g"])
def test_a_non_uuid_memory_id_is_404_and_changes_nothing(
    acme: Tenant, existing: dict[str, Any], method: str, path: str, memory_id: str
) -> None:
    before = row_counts()
    call = getattr(acme.client, method.lower())
    body = {"content": "x"} if method == "PATCH" else None
    response = call(acme.url(path.format(id=memory_id)), body, format="json")
    assert_error(response, 404, "not_found")
    assert row_counts() == before


# --- successful changes: versions and deletion -------------------------------------------------


@pytest.mark.django_db
def test_an_update_of_content_creates_version_2(acme: Tenant, existing: dict[str, Any]) -> None:
    response = patch(acme, existing["id"], {"content": "Prefers coffee now", "reason": "chat"})
    assert response.status_code == 200, response.json()
    assert response.json()["version"] == 2
    assert response.json()["content"] == "Prefers coffee now"
    assert MemoryVersion.objects.filter(memory_id=existing["id"]).count() == 2


@pytest.mark.django_db
def test_versions_lists_both_contents_newest_first(acme: Tenant, existing: dict[str, Any]) -> None:
    patch(acme, existing["id"], {"content": "Prefers coffee now", "reason": "chat"})
    response = acme.client.get(acme.url(f"memories/{existing['id']}/versions"))
    assert response.status_code == 200
    versions = response.json()["results"]
    assert [(v["version"], v["content"]) for v in versions] == [
        (2, "Prefers coffee now"),
        (1, "Prefers tea over coffee"),
    ]
    assert versions[0]["reason"] == "chat"


@pytest.mark.django_db
def test_an_update_without_content_change_keeps_version_1(
    acme: Tenant, existing: dict[str, Any]
) -> None:
    response = patch(acme, existing["id"], {"content": existing["content"], "tags": ["tea"]})
    assert response.status_code == 200, response.json()
    assert response.json()["version"] == 1
    assert response.json()["tags"] == ["tea"]
    assert MemoryVersion.objects.filter(memory_id=existing["id"]).count() == 1


@pytest.mark.django_db
def test_delete_removes_the_memory_and_its_versions(acme: Tenant, existing: dict[str, Any]) -> None:
    patch(acme, existing["id"], {"content": "Prefers coffee now"})
    response = acme.client.delete(acme.url(f"memories/{existing['id']}"))
    assert response.status_code == 204
    assert not Memory.objects.filter(pk=existing["id"]).exists()
    assert not MemoryVersion.objects.filter(memory_id=existing["id"]).exists()
    for path in (f"memories/{existing['id']}", f"memories/{existing['id']}/versions"):
        assert_error(acme.client.get(acme.url(path)), 404, "not_found")


@pytest.mark.django_db
def test_delete_writes_one_memory_delete_audit_event(
    acme: Tenant, existing: dict[str, Any]
) -> None:
    patch(acme, existing["id"], {"content": "Prefers coffee now"})
    since = AuditEvent.objects.order_by("-id").values_list("id", flat=True).first()
    acme.client.delete(acme.url(f"memories/{existing['id']}"))
    events = list(AuditEvent.objects.filter(id__gt=since))
    assert [(e.action, e.outcome, e.object_id) for e in events] == [
        ("memory.delete", "success", existing["id"])
    ]
    assert events[0].details == {"versions": 2, "kind": "semantic"}
    assert events[0].namespace_slug == "acme"


@pytest.mark.django_db
def test_deleting_twice_is_404_the_second_time(acme: Tenant, existing: dict[str, Any]) -> None:
    assert acme.client.delete(acme.url(f"memories/{existing['id']}")).status_code == 204
    before = row_counts()
    assert_error(acme.client.delete(acme.url(f"memories/{existing['id']}")), 404, "not_found")
    assert row_counts() == before
