"""Who may do what on every governance URL: a role-and-tenant matrix, CSRF, and content that
tries to be markup rendering inert on every page."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.test import Client
from django.urls import URLPattern, reverse

from apps.audit.actors import Actor
from apps.dashboard.members import urls as members_urls
from apps.dashboard.memories import urls as memories_urls
from apps.dashboard.overview import urls as overview_urls
from apps.dashboard.policies import urls as policies_urls
from apps.dashboard.review import urls as review_urls
from apps.dashboard.subjects import urls as subjects_urls
from apps.memories.services import NewMemory, memory_create
from tests.governance.conftest import Cast


@dataclass(frozen=True)
class Call:
    name: str  # the URL's name
    method: str
    role: str  # the least role that may
    url: Callable[[Cast], str]
    data: Callable[[Cast], dict[str, str]] = lambda cast: {}

    def __str__(self) -> str:
        return f"{self.method} {self.name}"


def _url(name: str, **kwargs: Callable[[Cast], str]) -> Callable[[Cast], str]:
    def build(cast: Cast) -> str:
        return reverse(
            f"dashboard:{name}",
            kwargs={"slug": "acme", **{key: value(cast) for key, value in kwargs.items()}},
        )

    return build


def fact(cast: Cast) -> str:
    return str(cast.fact.pk)


def subject(cast: Cast) -> str:
    return cast.subject_id


def job(cast: Cast) -> str:
    return str(cast.job.pk)


CALLS = [
    Call("overview:namespace", "get", "viewer", _url("overview:namespace")),
    Call("policies:settings", "get", "owner", _url("policies:settings")),
    Call("policies:settings", "post", "owner", _url("policies:settings"),
         lambda c: {"name": "Acme", "pii_policy": "allow", "recency_half_life_days": "90"}),
    Call("members:list", "get", "owner", _url("members:list")),
    Call("members:change", "post", "owner", _url("members:change"),
         lambda c: {"action": "role", "user": str(c.users["vera"].pk), "role": "viewer"}),
    Call("memories:list", "get", "viewer", _url("memories:list")),
    Call("memories:list", "post", "viewer", _url("memories:list"), lambda c: {"q": "tea"}),
    Call("memories:bulk", "post", "editor", _url("memories:bulk"),
         lambda c: {"action": "archive", "ids": str(c.fact.pk), "confirm": "1", "reason": "x"}),
    Call("memories:bulk", "post", "owner", _url("memories:bulk"),
         lambda c: {"action": "delete", "ids": str(c.fact.pk), "confirm": "1", "reason": "x"}),
    Call("memories:purge", "get", "owner", lambda c: _url("memories:purge")(c) + "?kind=semantic"),
    Call("memories:purge", "post", "owner", lambda c: _url("memories:purge")(c) + "?kind=semantic",
         lambda c: {"reason": "x", "confirmation": "acme", "expected": "1"}),
    Call("memories:job", "get", "owner", _url("memories:job", job_id=job)),
    Call("memories:detail", "get", "viewer", _url("memories:detail", memory_id=fact)),
    Call("memories:edit", "get", "editor", _url("memories:edit", memory_id=fact)),
    Call("memories:edit", "post", "editor", _url("memories:edit", memory_id=fact),
         lambda c: {"content": "New.", "kind": "semantic", "tags": "", "importance": "0.5",
                    "reason": "x"}),
    Call("memories:action", "post", "editor", _url("memories:action", memory_id=fact),
         lambda c: {"action": "archive"}),
    Call("memories:delete", "get", "editor", _url("memories:delete", memory_id=fact)),
    Call("memories:delete", "post", "editor", _url("memories:delete", memory_id=fact)),
    Call("review:queue", "get", "viewer", _url("review:queue")),
    Call("review:merge", "post", "editor", _url("review:merge"),
         lambda c: {"keep": str(c.fact.pk), "other": str(c.pii.pk)}),
    Call("memories:feedback", "post", "editor", _url("memories:feedback", memory_id=fact),
         lambda c: {"recall": str(c.recall.pk), "relevant": "1"}),
    Call("subjects:list", "get", "viewer", _url("subjects:list")),
    Call("subjects:detail", "get", "viewer", _url("subjects:detail", subject_id=subject)),
    Call("subjects:export", "get", "editor", _url("subjects:export", subject_id=subject)),
    Call("subjects:pause", "post", "editor", _url("subjects:pause", subject_id=subject),
         lambda c: {"paused": "1"}),
    Call("subjects:portal_link", "post", "owner", _url("subjects:portal_link", subject_id=subject),
         lambda c: {"flow": "memories", "locale": "zh-hans"}),
    Call("subjects:erase", "get", "owner", _url("subjects:erase", subject_id=subject)),
    Call("subjects:erase", "post", "owner", _url("subjects:erase", subject_id=subject),
         lambda c: {"confirmation": "u1"}),
]  # fmt: skip
# The areas of a namespace's pages (quality has its own test: tests/evaluation).
AREAS = (overview_urls, memories_urls, review_urls, subjects_urls, policies_urls, members_urls)
RANK = {"viewer": 1, "editor": 2, "owner": 3}
USERS = {"vera": "viewer", "eddie": "editor", "olive": "owner"}


def _send(client: Client, call: Call, cast: Cast) -> int:
    send = client.get if call.method == "get" else client.post
    return send(call.url(cast), call.data(cast)).status_code


def test_it_covers_every_namespaced_memory_page_url() -> None:
    names = {
        f"{area.app_name}:{pattern.name}"
        for area in AREAS
        for pattern in area.urlpatterns
        if isinstance(pattern, URLPattern) and "<slug:slug>" in str(pattern.pattern)
    }
    assert names == {call.name for call in CALLS}


@pytest.mark.parametrize("call", CALLS, ids=str)
def test_it_answers_404_to_an_outsider(cast: Cast, call: Call) -> None:
    assert _send(cast.client("oscar"), call, cast) == 404


@pytest.mark.parametrize("call", CALLS, ids=str)
@pytest.mark.parametrize("user", sorted(USERS))
def test_it_allows_each_role_only_its_own_actions(cast: Cast, call: Call, user: str) -> None:
    status = _send(cast.client(user), call, cast)
    if RANK[USERS[user]] >= RANK[call.role]:
        assert status in (200, 302), status
    else:
        assert status == 403


@pytest.mark.parametrize("call", CALLS, ids=str)
def test_it_sends_anonymous_visitors_to_the_login(cast: Cast, call: Call) -> None:
    response = (
        Client().get(call.url(cast)) if call.method == "get" else Client().post(call.url(cast))
    )
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("dashboard:account:login"))


def test_it_answers_404_for_another_namespaces_memory_and_job(cast: Cast) -> None:
    client = cast.client("olive")  # owner of acme, not of globex
    other = cast.other_tenant_memory.pk
    assert client.get(f"/n/acme/memories/{other}/").status_code == 404
    assert client.get(f"/n/globex/memories/{other}/").status_code == 404
    assert client.get("/n/acme/jobs/not-a-uuid/").status_code == 404
    assert client.get("/n/acme/subjects/not-a-uuid/").status_code == 404


@pytest.mark.parametrize("call", [c for c in CALLS if c.method == "post"], ids=str)
def test_it_refuses_a_post_without_the_csrf_token(cast: Cast, call: Call) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(cast.users["olive"])
    assert client.post(call.url(cast), call.data(cast)).status_code == 403


HOSTILE = '<script>alert(1)</script> "><img src=x onerror=alert(2)> <a hx-get="/evil">x</a>'


def test_it_renders_hostile_content_inert_on_every_page(cast: Cast) -> None:
    actor = Actor.system("tests")
    hostile = memory_create(
        actor=actor,
        namespace=cast.acme,
        item=NewMemory(
            subject_external_id='"><img src=y onerror=alert(3)>',
            content=HOSTILE,
            tags=['"><b hx-get="/tag">'],
            metadata={"note": HOSTILE},
        ),
    )
    assert hostile.subject is not None
    client = cast.client("olive")
    pages = [
        "/n/acme/memories/",
        f"/n/acme/memories/{hostile.pk}/",
        f"/n/acme/memories/{hostile.pk}/edit/",
        f"/n/acme/memories/{hostile.pk}/delete/",
        "/n/acme/review/",
        "/n/acme/subjects/",
        f"/n/acme/subjects/{hostile.subject.pk}/",
        f"/n/acme/subjects/{hostile.subject.pk}/erase/",
        "/n/acme/memories/purge/?subject=%22%3E%3Cimg%20src%3Dy%20onerror%3Dalert(3)%3E",
    ]
    searched = client.post("/n/acme/memories/", {"q": "alert script evil"})
    for response in [*(client.get(page) for page in pages), searched]:
        assert response.status_code == 200
        html = response.content.decode()
        for raw in ("<script>alert", "<img src=x", "<img src=y", 'hx-get="/evil"',
                    'hx-get="/tag"', "<b hx-get"):  # fmt: skip
            assert raw not in html, (response.request["PATH_INFO"], raw)
    detail = client.get(f"/n/acme/memories/{hostile.pk}/").content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in detail
