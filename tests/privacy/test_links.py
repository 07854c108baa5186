"""Portal links and sessions: single use, short-lived, unforgeable, bound to one subject of
one namespace. A session cookie used against any other subject's portal URL finds nothing."""

from __future__ import annotations

import time
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.core.checks import run_checks
from django.test import Client
from django.urls import URLPattern, get_resolver, reverse
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.memories.models import Memory, Subject
from apps.privacy import urls as portal_urls
from apps.privacy.links import secret_hash, secret_namespace
from apps.privacy.models import PortalLink, PortalSession
from apps.privacy.views import COOKIE
from tests.conftest import run_python
from tests.privacy.conftest import link_for, open_portal

pytestmark = pytest.mark.django_db


@pytest.fixture
def one_rate_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """django-ratelimit counts in fixed windows: a test whose requests straddle the end of
    one would see its count start again. Its clock stands still here."""
    import django_ratelimit.core

    now = time.time()
    monkeypatch.setattr(django_ratelimit.core, "time", SimpleNamespace(time=lambda: now))


def test_the_link_opens_a_session_once_and_leaves_the_address_bar(acme, story) -> None:
    link = link_for(acme, "u1", flow="memories")
    browser = Client()
    response = browser.get(link["url"])
    assert response.status_code == 303
    subject = Subject.objects.get(external_id="u1")
    assert response["Location"] == f"/portal/{subject.pk}/memories/"
    assert response["Referrer-Policy"] == "no-referrer"
    cookie = response.cookies[COOKIE]
    assert cookie["httponly"]
    assert cookie["path"] == "/portal/"
    assert cookie["samesite"] == "Lax"
    session = PortalSession.objects.get()
    assert cookie.value not in session.key_hash  # stored as a hash only
    assert browser.get(response["Location"]).status_code == 200
    event = AuditEvent.objects.get(action="portal.session.start", outcome="success")
    assert (event.actor_type, event.subject_id) == ("subject", subject.pk)


def test_a_replayed_link_gets_a_clear_page_and_nothing_else(acme, story) -> None:
    link = link_for(acme, "u1", locale="zh-hans")
    assert Client().get(link["url"]).status_code == 303
    replay = Client()
    response = replay.get(link["url"])
    assert response.status_code == 410
    assert COOKIE not in response.cookies
    assert "这个链接已经用过了" in response.content.decode()  # in the link's language
    assert PortalSession.objects.count() == 1
    denied = AuditEvent.objects.get(action="portal.session.start", outcome="denied")
    assert denied.details == {"reason": "used_link"}


def test_an_expired_link_is_refused(acme, story) -> None:
    link = link_for(acme, "u1")
    PortalLink.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    response = Client().get(link["url"])
    assert response.status_code == 410
    assert "This link has expired" in response.content.decode()
    assert not PortalSession.objects.exists()


@pytest.mark.parametrize("token", ["forged", "A" * 43, "x" * 500, "\u00b2." + "A" * 43])
def test_a_forged_token_is_refused(acme, story, token) -> None:
    link_for(acme, "u1")
    response = Client(headers={"accept-language": "zh-hans"}).get(f"/portal/enter/{token}")
    assert response.status_code == 404
    assert "这个链接无效" in response.content.decode()  # the browser's language
    assert not PortalSession.objects.exists()
    assert PortalLink.objects.get().used_at is None


def test_a_link_of_another_namespace_opens_only_its_own_subject(acme, globex, story) -> None:
    other = open_portal(globex, "u1")  # the same external id, in globex
    mine = Subject.objects.get(namespace=acme.namespace, external_id="u1")
    assert other.subject != mine
    assert other.client.get(other.url()).status_code == 200
    assert other.client.get(f"/portal/{mine.pk}/").status_code == 404
    page = other.client.get(other.url("memories/")).content.decode()
    assert "Shanghai" not in page  # acme's u1 lives in Shanghai; globex's u1 has nothing


def test_an_idle_session_ends(acme, story, settings) -> None:
    portal = open_portal(acme)
    PortalSession.objects.update(
        last_seen_at=timezone.now() - timedelta(minutes=settings.MEMORYHUB_PORTAL_IDLE_MINUTES + 1)
    )
    assert portal.client.get(portal.url()).status_code == 404


def test_leaving_ends_the_session(acme, story) -> None:
    portal = open_portal(acme)
    response = portal.client.post(portal.url("leave/"))
    assert response.status_code == 200
    assert PortalSession.objects.get().ended_at is not None
    assert portal.client.get(portal.url()).status_code == 404


def _portal_routes() -> list[URLPattern]:
    return [p for p in portal_urls.urlpatterns if "subject_id" in p.pattern.converters]


def _urls_for(subject_id, memory_id) -> list[tuple[str, str]]:
    found = []
    for pattern in _portal_routes():
        kwargs = {"subject_id": subject_id}
        if "memory_id" in str(pattern.pattern):
            kwargs["memory_id"] = memory_id
        url = reverse(f"privacy:{pattern.name}", kwargs=kwargs)
        found.extend((method, url) for method in ("get", "post"))
    return found


def test_every_portal_url_is_in_the_matrix() -> None:
    names = {p.name for p in _portal_routes()}
    assert names == {
        "overview", "memories", "memory", "correct", "confirm", "delete", "forget", "export",
        "export_json", "export_print", "erase", "erase_cancel", "pause", "activity",
        "blocked", "language", "leave",
    }  # fmt: skip
    # Every portal page is routed under /portal/ and nothing else is.
    portal = [p for p in get_resolver().url_patterns if getattr(p, "app_name", "") == "privacy"]
    assert portal


def test_a_session_cookie_finds_nothing_at_another_subjects_urls(acme, story) -> None:
    """The matrix: every portal URL of subject u2 (its own memory's too), GET and POST, with
    u1's session cookie, answers 404 and changes nothing."""
    portal = open_portal(acme, "u1")
    other = Subject.objects.get(external_id="u2")
    before = (Memory.objects.filter(subject=other).count(), other.paused)
    urls = _urls_for(other.pk, story.other.pk)
    assert len(urls) == 2 * len(_portal_routes())
    for method, url in urls:
        body = {"q": "bees", "content": "x", "confirmation": "erase everything", "paused": "1",
                "confirm": "1", "memory": str(story.other.pk), "language": "zh-hans"}  # fmt: skip
        response = getattr(portal.client, method)(url, body if method == "post" else None)
        assert response.status_code == 404, (method, url, response.status_code)
        assert b"bees" not in response.content
    other.refresh_from_db()
    assert (Memory.objects.filter(subject=other).count(), other.paused) == before
    # Each probe left a trace: the session's own subject, denied.
    probes = AuditEvent.objects.filter(action="portal.access", outcome="denied")
    assert probes.count() == len(urls)
    assert {e.subject_id for e in probes} == {portal.subject.pk}
    # And u1's own memory id under u1's URLs is found, while u2's is not.
    assert portal.client.get(portal.url(f"memories/{story.fact.pk}/")).status_code == 200
    assert portal.client.get(portal.url(f"memories/{story.other.pk}/")).status_code == 404
    assert portal.client.post(portal.url(f"memories/{story.other.pk}/delete/")).status_code == 404
    assert Memory.objects.filter(pk=story.other.pk).exists()


def test_without_a_cookie_every_portal_url_is_not_found(acme, story) -> None:
    subject = Subject.objects.get(external_id="u1")
    client = Client()
    for method, url in _urls_for(subject.pk, story.fact.pk):
        assert getattr(client, method)(url).status_code == 404, (method, url)


def test_csrf_is_enforced(acme, story) -> None:
    link = link_for(acme, "u1")
    browser = Client(enforce_csrf_checks=True)
    landing = browser.get(link["url"])["Location"]
    response = browser.post(landing.replace("/portal/", "/portal/", 1) + "pause/", {"paused": "1"})
    assert response.status_code == 403
    assert Subject.objects.get(external_id="u1").paused is False


@pytest.mark.usefixtures("one_rate_window")
def test_portal_requests_are_rate_limited_per_session(acme, story, settings) -> None:
    settings.MEMORYHUB_PORTAL_SESSION_RATE = "5/m"
    portal = open_portal(acme)
    codes = [portal.client.get(portal.url()).status_code for _ in range(7)]
    assert codes[:5] == [200] * 5
    assert codes[5:] == [429, 429]
    # Another session (another person at the same address) is not held back by it.
    assert (
        open_portal(acme, "u2").client.get(f"/portal/{story.other.subject_id}/").status_code == 200
    )


@pytest.mark.usefixtures("one_rate_window")
def test_portal_requests_are_rate_limited_per_address(acme, story, settings) -> None:
    settings.MEMORYHUB_PORTAL_ADDRESS_RATE = "3/m"
    link = link_for(acme, "u1")
    browser = Client()
    landing = browser.get(link["url"])["Location"]  # 1
    codes = [browser.get(landing).status_code for _ in range(3)]  # 2, 3, 4
    assert codes == [200, 200, 429]
    assert Client().get("/portal/enter/whatever").status_code == 429  # same address


def test_pages_are_never_cached_nor_framed(acme, story) -> None:
    portal = open_portal(acme)
    response = portal.client.get(portal.url("memories/"))
    assert "no-store" in response["Cache-Control"]
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]
    assert response["X-Frame-Options"] == "DENY"


def test_a_namespace_may_allow_embedding_origins(acme, story, settings) -> None:
    from apps.audit.actors import Actor
    from apps.namespaces.services import namespace_update

    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True
    namespace_update(
        actor=Actor.system("t"),
        namespace=acme.namespace,
        portal_frame_origins=["https://app.example.com"],
    )
    link = link_for(acme, "u1")
    browser = Client()
    entered = browser.get(link["url"])
    assert entered.cookies[COOKIE]["samesite"] == "None"
    assert entered.cookies[COOKIE]["secure"]
    response = browser.get(entered["Location"])
    assert "frame-ancestors https://app.example.com" in response["Content-Security-Policy"]
    assert "X-Frame-Options" not in response
    # In another site's frame the forms still work: the CSRF cookie crosses sites too.
    csrf = response.cookies[settings.CSRF_COOKIE_NAME]
    assert csrf["samesite"] == "None"
    assert csrf["secure"]


def test_without_embedding_origins_cookies_stay_same_site(acme, story, settings) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True
    link = link_for(acme, "u1")
    browser = Client()
    entered = browser.get(link["url"])
    assert entered.cookies[COOKIE]["samesite"] == "Lax"
    response = browser.get(entered["Location"])
    assert response.cookies[settings.CSRF_COOKIE_NAME]["samesite"] == "Lax"


@pytest.mark.usefixtures("one_rate_window")
def test_a_token_never_reaches_the_logs(acme, story, caplog, settings) -> None:
    link = link_for(acme, "u1")
    token = link["url"].rsplit("/", 1)[1]
    settings.MEMORYHUB_PORTAL_ADDRESS_RATE = "1/m"
    with caplog.at_level("INFO"):
        assert Client().get("/portal/enter/not-a-real-token-at-all").status_code == 404
        assert Client().get(link["url"]).status_code == 429  # refused before it is spent
    assert "/portal/enter/[token]" in caplog.text
    assert token not in caplog.text
    assert "not-a-real-token-at-all" not in caplog.text
    assert PortalLink.objects.get().used_at is None


def test_opening_a_link_rotates_a_csrf_token_planted_before_it(acme, story, settings) -> None:
    """A token planted in the browser before the link is opened (a shared computer, a
    cookie set from a sibling domain) no longer passes once the portal session starts."""
    planted = "P" * 32
    browser = Client(enforce_csrf_checks=True)
    browser.cookies[settings.CSRF_COOKIE_NAME] = planted
    entered = browser.get(link_for(acme, "u1")["url"])
    rotated = entered.cookies[settings.CSRF_COOKIE_NAME].value
    assert rotated
    assert rotated != planted
    page = f"/portal/{Subject.objects.get(external_id='u1').pk}/memories/"
    search = {"q": "tea"}
    refused = browser.post(page, {**search, "csrfmiddlewaretoken": planted})
    assert refused.status_code == 403
    accepted = browser.post(page, {**search, "csrfmiddlewaretoken": rotated})
    assert accepted.status_code == 200


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_deploy_checks_fail_when_the_portal_cookie_would_not_be_secure() -> None:
    """`manage.py check --deploy` with production settings but SESSION_COOKIE_SECURE off."""
    production = {
        "DEBUG": "0",
        "SECRET_KEY": "s" * 60,
        "MEMORYHUB_KEK": "1:" + "A" * 43 + "=",
        "SESSION_COOKIE_SECURE": "0",
    }
    result = run_python(
        "from django.core.management import execute_from_command_line\n"
        "execute_from_command_line(['manage.py', 'check', '--deploy'])",
        env=production,
    )
    assert result.returncode != 0
    assert "privacy.E001" in result.stderr


def test_deploy_checks_pass_the_portal_cookie_when_it_is_secure(settings) -> None:
    settings.SESSION_COOKIE_SECURE = True
    found = {message.id for message in run_checks(include_deployment_checks=True)}
    assert "privacy.E001" not in found
    settings.SESSION_COOKIE_SECURE = False
    found = {message.id for message in run_checks(include_deployment_checks=True)}
    assert "privacy.E001" in found


def test_a_link_and_its_session_key_name_their_namespace(acme, globex, story) -> None:
    link = link_for(acme, "u1")
    token = link["url"].rsplit("/", 1)[1]
    assert token.split(".")[0] == str(acme.namespace.pk)
    # The same random part under another namespace's id is another secret: it opens nothing.
    forged = f"{globex.namespace.pk}.{token.split('.', 1)[1]}"
    assert Client().get(f"/portal/enter/{forged}").status_code == 404
    browser = Client()
    assert browser.get(link["url"]).status_code == 303
    assert browser.cookies[COOKIE].value.split(".")[0] == str(acme.namespace.pk)


def test_a_link_and_a_session_key_from_before_secrets_named_a_namespace_still_work(
    acme, story
) -> None:
    subject = Subject.objects.get(namespace=acme.namespace, external_id="u1")
    old = "an-older-token-without-its-namespace-0123456789ab"
    PortalLink.objects.create(
        namespace=acme.namespace,
        subject=subject,
        token_hash=secret_hash(old),
        created_by="tests",
        expires_at=timezone.now() + timedelta(minutes=5),
    )
    browser = Client()
    assert browser.get(f"/portal/enter/{old}").status_code == 303
    session = PortalSession.objects.get()
    old_key = "an-older-session-key-without-its-namespace-0123456"
    PortalSession.objects.filter(pk=session.pk).update(key_hash=secret_hash(old_key))
    browser.cookies[COOKIE] = old_key
    assert browser.get(f"/portal/{subject.pk}/").status_code == 200


@pytest.mark.parametrize(
    ("secret", "namespace_id"),
    [
        ("12.abc", 12),
        ("0.x", 0),
        ("abc", None),
        (".abc", None),
        ("12abc", None),
        ("-1.abc", None),
        ("\u00b2.abc", None),  # a digit to str.isdigit, not to int()
        ("1" * 19 + ".abc", None),
        ("12.", 12),
    ],
)
def test_the_namespace_a_secret_names(secret: str, namespace_id: int | None) -> None:
    assert secret_namespace(secret) == namespace_id
