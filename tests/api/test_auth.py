"""API key authentication: missing, malformed, wrong, revoked, expired and leaked keys are
refused with 401 in the one error shape (and audited); requests are throttled per key."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.core.cache import cache
from django.utils import timezone
from rest_framework.test import APIClient

from apps.accounts.models import ApiKey
from apps.accounts.selectors import api_key_prefix_of
from apps.accounts.services import api_key_revoke
from apps.audit.actors import Actor
from apps.audit.models import AuditEvent, Outcome
from apps.memories.models import Memory
from tests.conftest import ALL_PERMISSIONS, Tenant, api_client, make_api_key


def list_url(tenant: Tenant) -> str:
    return tenant.url("memories")


def assert_error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "details"}, body
    assert body["error"]["code"] == code, body
    assert body["error"]["message"]
    return body


def key_of(raw: str) -> ApiKey:
    return ApiKey.objects.get(prefix=api_key_prefix_of(raw))


def last_audit_event() -> AuditEvent:
    event = AuditEvent.objects.order_by("-id").first()
    assert event is not None
    return event


# --- missing and malformed credentials ----------------------------------------------------------


@pytest.mark.django_db
def test_it_answers_401_in_the_error_shape_without_an_authorization_header(
    acme: Tenant,
) -> None:
    response = api_client(None).get(list_url(acme))
    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.django_db
def test_it_answers_401_to_an_unauthenticated_write_and_stores_nothing(acme: Tenant) -> None:
    response = api_client(None).post(
        list_url(acme), {"subject": "u1", "content": "hello"}, format="json"
    )
    assert_error(response, 401, "not_authenticated")
    assert not Memory.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "header",
    [
        "Bearer",
        "Bearer ",
        "Token {raw}",
        "Basic {raw}",
        "Bearer {raw} extra",
        "{raw}",
        "Bearer not-a-memoryhub-key",
        "Bearer mh_short_x",
        "Bearer {raw}x",
    ],
)
def test_it_answers_401_to_a_malformed_authorization_header(acme: Tenant, header: str) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header.format(raw=acme.raw_key))
    response = client.get(list_url(acme))
    assert_error(response, 401, "authentication_failed")


@pytest.mark.django_db
def test_it_accepts_the_bearer_scheme_in_any_case(acme: Tenant) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"bearer {acme.raw_key}")
    assert client.get(list_url(acme)).status_code == 200


# --- wrong, revoked and expired keys -----------------------------------------------------------


@pytest.mark.django_db
def test_it_answers_401_to_a_wrong_secret_for_an_existing_prefix(acme: Tenant) -> None:
    prefix = api_key_prefix_of(acme.raw_key)
    wrong = f"mh_{prefix}_{'A' * 43}"
    assert wrong != acme.raw_key
    response = api_client(wrong).get(list_url(acme))
    assert_error(response, 401, "authentication_failed")


@pytest.mark.django_db
def test_a_wrong_secret_and_an_unknown_prefix_get_the_same_answer(acme: Tenant) -> None:
    """No oracle: the answer does not tell whether the prefix exists."""
    prefix = api_key_prefix_of(acme.raw_key)
    wrong_secret = api_client(f"mh_{prefix}_{'A' * 43}").get(list_url(acme))
    unknown_prefix = api_client(f"mh_{'0' * 12}_{'A' * 43}").get(list_url(acme))
    assert wrong_secret.status_code == unknown_prefix.status_code == 401
    assert wrong_secret.json() == unknown_prefix.json()


@pytest.mark.django_db
def test_it_answers_401_to_a_revoked_key(acme: Tenant) -> None:
    assert acme.client.get(list_url(acme)).status_code == 200
    api_key_revoke(actor=Actor.system("tests"), api_key=key_of(acme.raw_key))
    response = acme.client.get(list_url(acme))
    assert_error(response, 401, "authentication_failed")


@pytest.mark.django_db
def test_it_answers_401_to_an_expired_key(acme: Tenant) -> None:
    assert acme.client.get(list_url(acme)).status_code == 200
    ApiKey.objects.filter(prefix=api_key_prefix_of(acme.raw_key)).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    response = acme.client.get(list_url(acme))
    assert_error(response, 401, "authentication_failed")


@pytest.mark.django_db
def test_it_accepts_a_key_that_expires_in_the_future(acme: Tenant) -> None:
    ApiKey.objects.filter(prefix=api_key_prefix_of(acme.raw_key)).update(
        expires_at=timezone.now() + timedelta(hours=1)
    )
    assert acme.client.get(list_url(acme)).status_code == 200


@pytest.mark.django_db
def test_a_revoked_key_cannot_write(acme: Tenant) -> None:
    api_key_revoke(actor=Actor.system("tests"), api_key=key_of(acme.raw_key))
    response = acme.client.post(
        list_url(acme), {"subject": "u1", "content": "hello"}, format="json"
    )
    assert_error(response, 401, "authentication_failed")
    assert not Memory.objects.exists()


# --- keys in the URL ---------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query",
    [
        "api_key={raw}",
        "token={raw}",
        "access_token={raw}",
        "API_KEY={raw}",
        "subject={raw}",
        "anything={raw}",
        "api_key=not-even-a-key",
        "key=",
        "subject=u1&tag={raw}",
        "subject=%20{raw}",
        "subject=u1%20{raw}%20u2",
        "tag=a&tag=b,{raw}",
        "{raw}=1",
        "%20api_key=x",
    ],
)
def test_it_refuses_a_key_in_the_url_even_with_a_correct_header(acme: Tenant, query: str) -> None:
    response = acme.client.get(f"{list_url(acme)}?{query.format(raw=acme.raw_key)}")
    body = assert_error(response, 401, "key_in_url")
    assert acme.raw_key not in response.content.decode()
    assert "Authorization: Bearer" in body["error"]["message"]


@pytest.mark.django_db
def test_it_refuses_a_key_in_the_url_of_a_write_and_stores_nothing(acme: Tenant) -> None:
    response = acme.client.post(
        f"{list_url(acme)}?api_key={acme.raw_key}",
        {"subject": "u1", "content": "hello"},
        format="json",
    )
    assert_error(response, 401, "key_in_url")
    assert not Memory.objects.exists()


@pytest.mark.django_db
def test_it_refuses_a_key_in_the_url_without_any_header(acme: Tenant) -> None:
    response = api_client(None).get(f"{list_url(acme)}?token={acme.raw_key}")
    assert_error(response, 401, "key_in_url")


@pytest.mark.django_db
def test_an_ordinary_query_value_is_not_mistaken_for_a_key(acme: Tenant) -> None:
    response = acme.client.get(list_url(acme), {"subject": "mh_customer_42"})
    assert response.status_code == 200, response.json()


# --- denied attempts are audited -------------------------------------------------------------


@pytest.mark.django_db
def test_a_wrong_secret_is_audited_as_denied_without_the_secret(acme: Tenant) -> None:
    prefix = api_key_prefix_of(acme.raw_key)
    secret = "S" * 43
    api_client(f"mh_{prefix}_{secret}").get(list_url(acme))
    event = last_audit_event()
    assert event.outcome == Outcome.DENIED
    assert event.action == "api.authenticate"
    assert event.actor_type == "anonymous"
    assert event.actor_id == prefix
    assert event.details == {"reason": "invalid_revoked_or_expired_key"}
    stored = " ".join(str(value) for value in AuditEvent.objects.values().get(pk=event.pk).values())
    assert secret not in stored


@pytest.mark.django_db
def test_a_revoked_key_is_audited_as_denied(acme: Tenant) -> None:
    api_key_revoke(actor=Actor.system("tests"), api_key=key_of(acme.raw_key))
    acme.client.get(list_url(acme))
    event = last_audit_event()
    assert (event.outcome, event.action) == (Outcome.DENIED, "api.authenticate")
    assert event.actor_id == api_key_prefix_of(acme.raw_key)


@pytest.mark.django_db
def test_an_expired_key_is_audited_as_denied(acme: Tenant) -> None:
    ApiKey.objects.filter(prefix=api_key_prefix_of(acme.raw_key)).update(
        expires_at=timezone.now() - timedelta(minutes=5)
    )
    acme.client.get(list_url(acme))
    event = last_audit_event()
    assert (event.outcome, event.action) == (Outcome.DENIED, "api.authenticate")
    assert event.details == {"reason": "invalid_revoked_or_expired_key"}


@pytest.mark.django_db
def test_a_key_in_the_url_is_audited_as_denied_without_the_key(acme: Tenant) -> None:
    acme.client.get(f"{list_url(acme)}?api_key={acme.raw_key}")
    event = last_audit_event()
    assert (event.outcome, event.action) == (Outcome.DENIED, "api.authenticate")
    assert event.details == {"reason": "key_in_url"}
    stored = " ".join(str(value) for value in AuditEvent.objects.values().get(pk=event.pk).values())
    assert acme.raw_key.split("_", 2)[2] not in stored


@pytest.mark.django_db
def test_a_successful_read_writes_no_denied_event(acme: Tenant) -> None:
    before = AuditEvent.objects.filter(outcome=Outcome.DENIED).count()
    assert acme.client.get(list_url(acme)).status_code == 200
    assert AuditEvent.objects.filter(outcome=Outcome.DENIED).count() == before


# --- throttling --------------------------------------------------------------------------------


@pytest.fixture
def three_per_minute(settings: Any) -> Iterator[None]:
    settings.MEMORYHUB_API_RATE = "3/min"
    cache.clear()
    yield
    cache.clear()


@pytest.mark.django_db
@pytest.mark.usefixtures("three_per_minute")
def test_it_throttles_the_fourth_request_in_the_error_shape_with_retry_after(
    acme: Tenant,
) -> None:
    statuses = [acme.client.get(list_url(acme)).status_code for _ in range(3)]
    assert statuses == [200, 200, 200]
    response = acme.client.get(list_url(acme))
    assert_error(response, 429, "throttled")
    assert 0 < int(response["Retry-After"]) <= 60


@pytest.mark.django_db
@pytest.mark.usefixtures("three_per_minute")
def test_a_throttled_write_stores_nothing(acme: Tenant) -> None:
    for _ in range(3):
        acme.client.get(list_url(acme))
    response = acme.client.post(
        list_url(acme), {"subject": "u1", "content": "hello"}, format="json"
    )
    assert_error(response, 429, "throttled")
    assert not Memory.objects.exists()


@pytest.mark.django_db
@pytest.mark.usefixtures("three_per_minute")
def test_throttling_one_key_leaves_another_key_alone(acme: Tenant) -> None:
    other = api_client(make_api_key([acme.namespace], ALL_PERMISSIONS, name="second app"))
    for _ in range(4):
        acme.client.get(list_url(acme))
    assert acme.client.get(list_url(acme)).status_code == 429
    assert [other.get(list_url(acme)).status_code for _ in range(3)] == [200, 200, 200]


# --- last use --------------------------------------------------------------------------------


@pytest.mark.django_db
def test_it_records_last_use_after_a_successful_request(acme: Tenant) -> None:
    assert key_of(acme.raw_key).last_used_at is None
    before = timezone.now()
    assert acme.client.get(list_url(acme)).status_code == 200
    last_used = key_of(acme.raw_key).last_used_at
    assert last_used is not None
    assert before <= last_used <= timezone.now()


@pytest.mark.django_db
def test_a_wrong_secret_does_not_mark_the_key_as_used(acme: Tenant) -> None:
    prefix = api_key_prefix_of(acme.raw_key)
    api_client(f"mh_{prefix}_{'A' * 43}").get(list_url(acme))
    assert key_of(acme.raw_key).last_used_at is None


@pytest.mark.django_db
def test_it_refuses_a_key_pasted_into_the_path(acme: Tenant) -> None:
    response = acme.client.get(acme.url(f"memories/{acme.raw_key}"))
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "key_in_url"


@pytest.mark.django_db
def test_it_stops_auditing_and_answers_429_after_too_many_failed_attempts(
    acme: Tenant, settings
) -> None:
    from django.core.cache import cache

    cache.clear()
    settings.MEMORYHUB_AUTH_FAILURES_PER_MINUTE = 3
    bad = api_client(acme.raw_key[:-4] + "xxxx")
    before = AuditEvent.objects.filter(outcome="denied").count()
    statuses = [bad.get(acme.url("memories")).status_code for _ in range(5)]
    assert statuses == [401, 401, 401, 429, 429]
    assert AuditEvent.objects.filter(outcome="denied").count() - before == 3
    cache.clear()


@pytest.mark.django_db
def test_refused_requests_count_against_the_key_rate(acme: Tenant, settings) -> None:
    from django.core.cache import cache

    cache.clear()
    settings.MEMORYHUB_API_RATE = "2/min"
    statuses = [
        acme.client.get("/api/v1/namespaces/not-mine/memories").status_code for _ in range(3)
    ]
    assert statuses == [404, 404, 429]
    cache.clear()
