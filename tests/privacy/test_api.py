"""POST /api/v1/namespaces/{ns}/subjects/{external_id}/portal-sessions: who may ask, what
it answers, and what it refuses (in the one error shape, storing nothing)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from apps.audit.models import AuditEvent
from apps.memories.models import Subject
from apps.privacy.links import secret_hash
from apps.privacy.models import PortalLink
from tests.conftest import api_client, make_api_key
from tests.privacy.conftest import allow_return, link_for

pytestmark = pytest.mark.django_db


def path(tenant, external_id="u1"):
    return tenant.url(f"subjects/{external_id}/portal-sessions")


def test_a_portal_key_gets_a_single_use_link_valid_fifteen_minutes(portal_key) -> None:
    before = timezone.now()
    response = portal_key.client.post(
        path(portal_key, "u9"), {"flow": "export", "locale": "zh-CN"}, format="json"
    )
    assert response.status_code == 201, response.json()
    # A subject with nothing remembered yet is created (they may want to pause first).
    assert list(AuditEvent.objects.order_by("id").values_list("action", "actor_name"))[-2:] == [
        ("subject.create", "support desk"),
        ("portal.link.create", "support desk"),
    ]
    body = response.json()
    assert set(body) == {"url", "expires_at"}
    expires = parse_datetime(body["expires_at"])
    assert timedelta(minutes=14) < expires - before <= timedelta(minutes=15, seconds=5)
    token = body["url"].rsplit("/", 1)[1]
    assert body["url"].startswith("http://testserver/portal/enter/")
    # Stored only as a hash, for the subject (created: nothing remembered yet is fine).
    link = PortalLink.objects.get()
    assert link.token_hash == secret_hash(token)
    assert token not in link.token_hash
    assert link.subject == Subject.objects.get(external_id="u9")
    assert (link.flow, link.locale) == ("export", "zh-hans")


def test_subjects_admin_includes_the_portal_and_other_permissions_do_not(acme) -> None:
    assert acme.client.post(path(acme), {}, format="json").status_code == 201
    raw = make_api_key([acme.namespace], ["memories:read", "memories:write", "context"])
    response = api_client(raw).post(path(acme), {}, format="json")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "permission_denied"
    assert PortalLink.objects.count() == 1


def test_another_namespace_is_not_found(acme, globex) -> None:
    response = globex.client.post(path(acme), {}, format="json")
    assert response.status_code == 404
    assert not PortalLink.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"flow": "delete-everything"}, "flow"),
        ({"locale": "fr"}, "locale"),
        ({"return_url": "https://evil.example/phish"}, "return_url"),
        ({"return_url": "javascript:alert(1)"}, "return_url"),
        ({"return_url": "https://app.example.com.evil.example/"}, "return_url"),
    ],
)
def test_bad_input_is_refused_in_the_one_error_shape(acme, body, field) -> None:
    allow_return(acme, "https://app.example.com")
    response = acme.client.post(path(acme), body, format="json")
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert field in error["details"]
    assert not PortalLink.objects.exists()


def test_a_return_url_at_an_allowed_origin_is_kept(acme) -> None:
    allow_return(acme, "https://app.example.com")
    link_for(acme, "u1", return_url="https://APP.example.com:443/account?tab=privacy")
    assert PortalLink.objects.get().return_url == "https://APP.example.com:443/account?tab=privacy"


def test_a_too_long_subject_id_is_refused(acme) -> None:
    response = acme.client.post(path(acme, "x" * 300), {}, format="json")
    assert response.status_code == 400
    assert "external_id" in response.json()["error"]["details"]
    assert not Subject.objects.exists()


def test_the_api_reports_a_paused_subject(acme, story) -> None:
    subject = Subject.objects.get(external_id="u1")
    response = acme.client.get(acme.url("subjects/u1"))
    assert response.json()["paused"] is False
    assert response.json()["memories"] == subject.memories.count()
    Subject.objects.filter(pk=subject.pk).update(paused=True)
    assert acme.client.get(acme.url("subjects/u1")).json()["paused"] is True
    assert acme.client.get(acme.url("subjects/nobody")).status_code == 404
