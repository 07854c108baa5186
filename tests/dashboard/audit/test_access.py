"""Who may do what on every audit viewer URL: a role-and-tenant matrix, CSRF, and values that
try to be markup rendering inert."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import URLPattern, reverse

from apps.audit.models import AuditEvent
from apps.audit.services import audit_record, chain_verification_run
from apps.dashboard.audit import urls as audit_urls
from apps.namespaces.models import Namespace
from tests.dashboard.audit.conftest import ACTOR, AuditCast, streamed

# The statuses each user gets: alice is a superuser; olive owns acme (the events asked for
# are acme's where a URL names one); eddie edits and vera views acme; oscar owns globex.
OK, REDIRECT, FORBIDDEN, MISSING = 200, 302, 403, 404


@dataclass(frozen=True)
class Call:
    name: str
    method: str
    url: Callable[[AuditCast], str]
    expect: dict[str, int]
    data: dict[str, str] | None = None

    def __str__(self) -> str:
        return f"{self.method} {self.name}"


def _verification(cast: AuditCast) -> str:
    verification = chain_verification_run(requested_by="beat", full=True)
    return reverse("dashboard:audit:verification", kwargs={"verification_id": verification.pk})


MEMBERS_TOO = {"alice": OK, "olive": OK, "oscar": OK, "eddie": OK, "vera": OK}
CALLS = [
    # The log answers everyone signed in (those without audit access see an empty state).
    Call("log", "get", lambda c: reverse("dashboard:audit:log"), MEMBERS_TOO),
    Call("event", "get", lambda c: reverse("dashboard:audit:event", args=[c.acme_event.pk]),
         {"alice": OK, "olive": OK, "oscar": MISSING, "eddie": OK, "vera": OK}),
    Call("export", "get", lambda c: reverse("dashboard:audit:export"), MEMBERS_TOO),
    # The subject filter's suggestions: external ids, which viewers do not see.
    Call("subjects", "get", lambda c: reverse("dashboard:audit:subjects") + "?namespace=acme",
         {"alice": OK, "olive": OK, "oscar": MISSING, "eddie": OK, "vera": FORBIDDEN}),
    Call("verify", "post", lambda c: reverse("dashboard:audit:verify"),
         {"alice": REDIRECT, "olive": FORBIDDEN, "oscar": FORBIDDEN, "eddie": FORBIDDEN,
          "vera": FORBIDDEN}, {"full": "on"}),
    Call("verification", "get", _verification,
         {"alice": OK, "olive": FORBIDDEN, "oscar": FORBIDDEN, "eddie": FORBIDDEN,
          "vera": FORBIDDEN}),
]  # fmt: skip
USERS = ("alice", "olive", "oscar", "eddie", "vera")


def _send(client: Client, call: Call, cast: AuditCast) -> int:
    url = call.url(cast)
    if call.method == "get":
        return client.get(url).status_code
    return client.post(url, call.data or {}).status_code


def test_it_covers_every_audit_viewer_url_and_method() -> None:
    names = {pattern.name for pattern in audit_urls.urlpatterns if isinstance(pattern, URLPattern)}
    assert names == {call.name for call in CALLS}


@pytest.mark.parametrize("call", CALLS, ids=str)
@pytest.mark.parametrize("user", USERS)
def test_it_answers_each_user_as_the_matrix_says(cast: AuditCast, call: Call, user: str) -> None:
    assert _send(cast.client(user), call, cast) == call.expect[user]


@pytest.mark.parametrize("call", CALLS, ids=str)
def test_it_sends_anonymous_visitors_to_the_login(cast: AuditCast, call: Call) -> None:
    client = Client()
    url = call.url(cast)
    response = client.get(url) if call.method == "get" else client.post(url, call.data or {})
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("dashboard:account:login"))


@pytest.mark.parametrize("call", CALLS, ids=str)
def test_it_refuses_the_methods_a_url_does_not_take(cast: AuditCast, call: Call) -> None:
    client = cast.client("alice")
    url = call.url(cast)
    response = client.post(url) if call.method == "get" else client.get(url)
    assert response.status_code == 405


def test_it_refuses_verify_now_without_the_csrf_token(cast: AuditCast) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(cast.users["alice"])
    before = AuditEvent.objects.count()
    assert client.post(reverse("dashboard:audit:verify"), {"full": "on"}).status_code == 403
    assert AuditEvent.objects.count() == before  # nothing started, nothing audited


def _listed_ids(client: Client, query: str = "") -> set[int]:
    html = client.get(reverse("dashboard:audit:log") + query).content.decode()
    return {
        int(part.split("/", 1)[0])
        for part in html.split('href="/audit/')[1:]
        if part.split("/", 1)[0].isdigit()
    }


def test_it_shows_an_owner_only_the_events_of_the_namespaces_they_own(cast: AuditCast) -> None:
    acme = set(AuditEvent.objects.filter(namespace_id=cast.acme.pk).values_list("pk", flat=True))
    assert _listed_ids(cast.client("olive")) == acme
    assert cast.globex_event.pk not in _listed_ids(cast.client("olive"))
    assert cast.global_event.pk not in _listed_ids(cast.client("olive"))
    globex = set(
        AuditEvent.objects.filter(namespace_id=cast.globex.pk).values_list("pk", flat=True)
    )
    assert _listed_ids(cast.client("oscar")) == globex


def test_it_shows_a_superuser_every_event(cast: AuditCast) -> None:
    assert _listed_ids(cast.client("alice")) == set(AuditEvent.objects.values_list("pk", flat=True))


def test_it_keeps_another_namespace_out_of_an_owners_filters(cast: AuditCast) -> None:
    client = cast.client("olive")
    response = client.get(reverse("dashboard:audit:log") + "?namespace=globex")
    html = response.content.decode()
    assert response.status_code == 200
    assert "test.globex" not in html
    assert '<option value="globex"' not in html
    assert "The filters are not valid." in html
    assert client.get(reverse("dashboard:audit:export") + "?namespace=globex").status_code == 400


def test_it_tells_someone_without_audit_access_so(cast: AuditCast) -> None:
    User.objects.create_user("nina", "nina@example.com")  # a member of no namespace
    client = Client()
    client.force_login(User.objects.get(username="nina"))
    html = client.get(reverse("dashboard:audit:log")).content.decode()
    assert "You have no audit access." in html
    assert "test.acme" not in html
    assert 'id="filters"' not in html
    assert (
        client.get(reverse("dashboard:audit:event", args=[cast.acme_event.pk])).status_code == 404
    )
    assert client.get(reverse("dashboard:audit:subjects")).status_code == 404


def test_it_shows_editors_and_viewers_their_namespaces_events(cast: AuditCast) -> None:
    acme = set(AuditEvent.objects.filter(namespace_id=cast.acme.pk).values_list("pk", flat=True))
    assert _listed_ids(cast.client("eddie")) == acme
    assert _listed_ids(cast.client("vera")) == acme


def test_it_hides_events_of_no_namespace_from_owners(cast: AuditCast) -> None:
    assert cast.client("olive").get(f"/audit/{cast.global_event.pk}/").status_code == 404
    assert cast.client("alice").get(f"/audit/{cast.global_event.pk}/").status_code == 200


def test_it_exports_to_an_owner_only_their_namespaces_events(cast: AuditCast) -> None:
    response = cast.client("olive").get(reverse("dashboard:audit:export"))
    lines = [json.loads(line) for line in streamed(response).splitlines()]
    assert lines
    assert {line["namespace_id"] for line in lines} == {cast.acme.pk}


def test_it_keeps_verify_now_and_the_walks_from_members(cast: AuditCast) -> None:
    chain_verification_run(requested_by="beat", full=True)
    html = cast.client("olive").get(reverse("dashboard:audit:log")).content.decode()
    assert "Checked all" in html  # the box about the events listed
    assert "Verify now" not in html
    assert "/audit/verifications/" not in html
    assert "beat" not in html  # who asked for the walk
    admin = cast.client("alice").get(reverse("dashboard:audit:log")).content.decode()
    assert "Verify now" in admin


HOSTILE = ('<script>alert(1)</script> "><img src=x onerror=alert(2)> '
           '<a hx-get="/evil">x</a>')  # fmt: skip
RAW = ("<script>alert", "<img src=x", 'hx-get="/evil"', "<a hx-get")


def test_it_renders_hostile_values_inert_on_every_page(cast: AuditCast) -> None:
    namespace = Namespace.objects.get(pk=cast.acme.pk)
    hostile = audit_record(
        actor=ACTOR.__class__(type="user", id=HOSTILE[:64], name=HOSTILE),
        action=HOSTILE[:64],
        namespace=namespace,
        object_type=HOSTILE[:64],
        object_id=HOSTILE[:64],
        details={"note": HOSTILE, HOSTILE: 1},
    )
    verification = chain_verification_run(requested_by=f"user:{HOSTILE}", full=True)
    client = cast.client("alice")
    quoted = "%3Cscript%3Ealert(1)%3C%2Fscript%3E%20%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert(2)%3E"
    pages = [
        reverse("dashboard:audit:log"),
        reverse("dashboard:audit:log") + f"?action={quoted}&actor={quoted}",
        reverse("dashboard:audit:log") + f"?subject={quoted}&since={quoted}",
        reverse("dashboard:audit:event", args=[hostile.pk]),
        reverse("dashboard:audit:verification", args=[verification.pk]),
    ]
    for page in pages:
        response = client.get(page)
        assert response.status_code == 200, page
        html = response.content.decode()
        for raw in RAW:
            assert raw not in html, (page, raw)
    detail = client.get(reverse("dashboard:audit:event", args=[hostile.pk])).content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in detail
    fragment = client.get(
        reverse("dashboard:audit:log") + f"?actor={quoted}", headers={"HX-Request": "true"}
    ).content.decode()
    for raw in RAW:
        assert raw not in fragment
