"""The API's error shape raised as the SDK's typed exceptions, from the live server."""

from __future__ import annotations

import pytest
from memoryhub_client import (
    NO_RETRIES,
    AuthenticationFailed,
    MemoryHub,
    MemoryHubError,
    Namespace,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    RateLimited,
    RetryPolicy,
    Unprocessable,
    ValidationError,
)

from tests.conftest import Tenant


def test_it_raises_not_found_for_another_namespaces_memory(
    ns: Namespace, globex_ns: Namespace
) -> None:
    memory = ns.memories.create("Acme's secret", subject="u1")
    with pytest.raises(NotFound) as raised:
        globex_ns.memories.get(memory.id)
    assert (raised.value.status_code, raised.value.code) == (404, "not_found")
    assert raised.value.request_id


def test_it_raises_not_found_for_a_namespace_outside_the_keys_scope(
    hub: MemoryHub, globex: Tenant
) -> None:
    with pytest.raises(NotFound):
        list(hub.namespace(globex.slug).memories.list())


def test_it_raises_permission_denied_for_a_missing_permission(reader_ns: Namespace) -> None:
    with pytest.raises(PermissionDenied) as raised:
        reader_ns.memories.create("Not allowed", subject="u1")
    assert raised.value.status_code == 403
    assert "memories:write" in raised.value.message


def test_it_raises_a_validation_error_with_its_details(ns: Namespace) -> None:
    with pytest.raises(ValidationError) as raised:
        ns.memories.create("Too important", subject="u1", importance=2.0)
    assert raised.value.code == "validation_error"
    assert set(raised.value.details) == {"importance"}


def test_it_raises_authentication_failed_for_a_bad_key(server_url: str, acme: Tenant) -> None:
    with MemoryHub(server_url, "not-a-key") as hub, pytest.raises(AuthenticationFailed) as raised:
        hub.namespace(acme.slug).memories.get("anything")
    assert raised.value.status_code == 401


def test_it_raises_payload_too_large_for_oversized_content(ns: Namespace, settings) -> None:
    settings.MEMORYHUB_MAX_CONTENT_BYTES = 100
    with pytest.raises(PayloadTooLarge) as raised:
        ns.memories.create("x" * 101, subject="u1")
    assert raised.value.code == "content_too_large"


def test_it_raises_unprocessable_for_a_budget_too_small(ns: Namespace) -> None:
    with pytest.raises(Unprocessable) as raised:
        ns.context("What now?", model="gpt-4o", max_context_tokens=5, reserve_tokens=0)
    assert raised.value.code == "budget_too_small"


def test_it_raises_rate_limited_with_the_servers_retry_after(
    server_url: str, acme: Tenant, settings
) -> None:
    settings.MEMORYHUB_API_RATE = "2/min"
    with MemoryHub(server_url, acme.raw_key, retries=NO_RETRIES) as hub:
        memories = hub.namespace(acme.slug).memories
        list(memories.list())
        list(memories.list())
        with pytest.raises(RateLimited) as raised:
            list(memories.list())
    assert raised.value.status_code == 429
    assert raised.value.retry_after is not None
    assert 0 < raised.value.retry_after <= 60


def test_it_does_not_wait_longer_than_its_policy_allows(
    server_url: str, acme: Tenant, settings
) -> None:
    settings.MEMORYHUB_API_RATE = "1/min"
    policy = RetryPolicy(attempts=5, max_retry_after=0.5)
    with MemoryHub(server_url, acme.raw_key, retries=policy) as hub:
        hub.namespace(acme.slug).subjects.portal_session("u1")
        with pytest.raises(RateLimited):
            hub.namespace(acme.slug).subjects.portal_session("u1")


def test_it_names_status_and_code_in_the_message(ns: Namespace) -> None:
    with pytest.raises(MemoryHubError) as raised:
        ns.memories.get("00000000-0000-0000-0000-000000000000")
    assert str(raised.value).startswith("404 not_found: ")
