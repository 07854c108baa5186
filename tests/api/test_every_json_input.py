"""Every URL that takes a body, found by walking the URL resolver rather than from a list
kept by hand, is sent arrays nested 5,000 and 400,000 levels deep with POST, PUT and PATCH.
The answer is a refusal in the one error shape (400 `parse_error`, JSON-RPC -32700 on /mcp/,
413 when the body-size limit comes first, 405 for a method a view does not take, 403 for a
form's missing CSRF token), never a 500, with no ERROR log record, and nothing is written.
A new endpoint that parsed JSON on its own (outside `memoryhub.json_input`) fails here."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from apps.accounts.models import ApiKey
from apps.audit.actors import Actor
from apps.evaluation.services import eval_set_create_empty
from apps.memories.models import Subject
from apps.pipeline.models import Job
from tests.conftest import Tenant

DEPTHS = [5_000, 400_000]
METHODS = ["post", "put", "patch"]
# Django's own admin: its forms are CSRF-protected and take no JSON.
NOT_WALKED = ("django-admin/",)
CONVERTER = re.compile(r"<(?:(?P<converter>\w+):)?(?P<name>\w+)>")


def routes(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if route.startswith(NOT_WALKED):
            continue
        if isinstance(pattern, URLResolver):
            yield from routes(pattern.url_patterns, route)
        else:
            yield route, pattern


def view_methods(pattern: URLPattern) -> list[str]:
    """The body-taking methods a class-based view defines (a function view may take any)."""
    view_class = getattr(pattern.callback, "cls", None) or getattr(
        pattern.callback, "view_class", None
    )
    if view_class is None:
        return METHODS
    return [method for method in METHODS if hasattr(view_class, method)]


def row_counts() -> dict[str, int]:
    return {model._meta.label: model.objects.count() for model in apps.get_models()}


@pytest.fixture
def path_values(acme: Tenant, alice: User) -> dict[str, str]:
    """A real object for each path parameter (a new parameter name fails the test until a
    value is added here). The key may administer webhooks too, so their routes read bodies."""
    key = ApiKey.objects.get(namespaces=acme.namespace)
    key.permissions = [*key.permissions, "webhooks:admin"]
    key.save(update_fields=["permissions"])
    created = acme.client.post(
        acme.url("memories"), {"subject": "u1", "content": "Likes tea"}, format="json"
    )
    recall = acme.client.post(acme.url("recall"), {"subject": "u1", "query": "tea"}, format="json")
    acme.client.post(
        acme.url("messages"),
        {"subject": "u1", "session": "s1", "messages": [{"role": "user", "content": "Hi"}]},
        format="json",
    )
    eval_set = eval_set_create_empty(
        actor=Actor.system("tests"), namespace=acme.namespace, name="set"
    )
    subject = Subject.objects.get(external_id="u1")
    return {
        "namespace": acme.slug,
        "slug": acme.slug,
        "memory_id": created.json()["id"],
        "external_id": "u1",
        "recall_id": recall.json()["recall_id"],
        "job_id": str(Job.objects.latest("created_at").pk),
        "prefix": ApiKey.objects.get(namespaces=acme.namespace).prefix,
        "subject_id": str(subject.pk),
        "set_id": str(eval_set.pk),
        "case_id": str(uuid.uuid4()),
        "run_id": str(uuid.uuid4()),
        "variant_id": str(uuid.uuid4()),
        "verification_id": "1",
        "event_id": "1",
        "token": "not-a-token",
        "code": "not-a-code",
        "uidb64": urlsafe_base64_encode(force_bytes(alice.pk)),
        "rest": "v1/batch/",
        "endpoint_id": str(uuid.uuid4()),
        "delivery_id": str(uuid.uuid4()),
    }


def url_of(route: str, values: dict[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group("name")
        assert name in values, f"add a real value for the path parameter {name!r} ({route})"
        return values[name]

    return "/" + CONVERTER.sub(value, route)


def is_refusal(response: Any, url: str) -> bool:
    if response.status_code in {405, 413}:
        return True
    if response.status_code == 403:
        return b"CSRF" in response.content
    if response.status_code != 400 or response["Content-Type"] != "application/json":
        return False
    code = response.json().get("error", {}).get("code")
    return code == (-32700 if url == "/mcp/" else "parse_error")


@pytest.mark.django_db
def test_every_body_taking_url_refuses_deeply_nested_json(
    acme: Tenant, alice: User, path_values: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    # A logged-in superuser and a key holding every permission: whichever door a URL has,
    # the caller may use it; a form's CSRF token is missing, as a forged request's would be.
    client = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Bearer {acme.raw_key}")
    client.force_login(alice)
    before = row_counts()
    caplog.clear()
    answered: list[str] = []
    wrong: list[str] = []
    for route, pattern in routes(get_resolver().url_patterns):
        url = url_of(route, path_values)
        for method in view_methods(pattern):
            for depth in DEPTHS:
                body = "[" * depth + "]" * depth
                response = getattr(client, method)(url, body, content_type="application/json")
                answered.append(f"{method.upper()} {url}")
                if not is_refusal(response, url):
                    wrong.append(f"{method.upper()} {url} ({depth} deep): {response.status_code}")
    errors = [record.getMessage() for record in caplog.records if record.levelname == "ERROR"]
    assert wrong == []
    assert errors == []
    assert row_counts() == before
    # The walk reached the API and MCP, not only forms.
    assert {"POST /mcp/", f"POST /api/v1/namespaces/{acme.slug}/memories"} <= set(answered)
