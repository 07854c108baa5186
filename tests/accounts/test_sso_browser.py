"""Single sign-on end to end in headless Chromium, against a real OpenID Connect provider
process on loopback (oidc-provider-mock): "Sign in with …", the provider's form, the roles
its groups grant ("*" included), a group removed at the provider taking its role away at
the next sign-in while a hand-granted one stays, sign-out at the provider, password login
off, a person no group maps, and a code issued to another client refused. In English and
Chinese, with axe on each page."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.contrib.auth.models import User

from apps.accounts.models import SsoIdentity
from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.namespaces.models import Membership, Namespace
from apps.namespaces.services import membership_set, namespace_create
from tests.accounts.oidc_provider import Provider, provider_process, sso_settings
from tests.browser import PASSWORD, axe_problems, csp_refusals, watch_console


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    with provider_process() as running:
        yield running


@pytest.fixture
def namespaces(transactional_db: None) -> dict[str, Namespace]:
    """support, sales and archive, owned by hand by olive."""
    olive = User.objects.create_user("olive", "olive@example.com", PASSWORD)
    actor = Actor.for_user(olive)
    return {
        slug: namespace_create(actor=actor, slug=slug) for slug in ("support", "sales", "archive")
    }


def sign_in_with_sso(page: Any, base: str, sub: str, button: str = "Sign in with Corp SSO") -> None:
    page.goto(f"{base}/accounts/login/")
    page.get_by_role("link", name=button).click()
    page.wait_for_url("**/oauth2/authorize?**")
    page.fill("input[name=sub]", sub)
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_load_state()


def visible_namespaces(page: Any, base: str) -> list[str]:
    page.goto(f"{base}/memories/")
    return sorted(page.locator("main ul.plain a").all_inner_texts())


def test_roles_follow_the_groups_at_the_provider_and_hand_granted_ones_stay(
    provider: Provider, namespaces: dict[str, Namespace], live_server: Any, context: Any
) -> None:
    base = live_server.url
    provider.set_claims("ann", email="ann@example.com", groups=["memoryhub-admins"])
    page = context.new_page()
    said = watch_console(page)
    with sso_settings(provider):
        page.goto(f"{base}/accounts/login/")
        problems = axe_problems(page)
        sign_in_with_sso(page, base, "ann")
        page.wait_for_url(f"{base}/")
        assert visible_namespaces(page, base) == ["archive", "sales", "support"]
        ann = SsoIdentity.objects.get(subject="ann").user
        page.goto(f"{base}/n/support/members/")
        row = page.locator("tr", has_text="ann@example.com")
        assert "from single sign-on: follows their groups" in row.inner_text()
        assert page.locator("tr", has_text="olive").locator("[data-sso]").count() == 0
        problems += axe_problems(page)
        # olive gives ann a role in the archive by hand; the admins' group goes at the provider.
        membership_set(
            actor=Actor.system("test"), namespace=namespaces["archive"], user=ann, role="viewer"
        )
        provider.set_claims("ann", email="ann@example.com", groups=["support"])

        page.get_by_role("button", name="Log out").click()
        page.wait_for_url("**/oauth2/end_session?**")
        assert parse_qs(urlsplit(page.url).query)["post_logout_redirect_uri"] == [
            f"{base}/accounts/login/"
        ]
        page.get_by_role("button", name="End session").click()
        page.wait_for_url(f"{base}/accounts/login/")

        sign_in_with_sso(page, base, "ann")
        page.wait_for_url(f"{base}/")
        assert visible_namespaces(page, base) == ["archive", "support"]
        page.goto(f"{base}/n/sales/")
        assert page.locator("h1").first.inner_text() != "sales"
        problems += axe_problems(page)
    held = {
        m.namespace.slug: (m.role, m.granted_by_sso) for m in Membership.objects.filter(user=ann)
    }
    assert held == {"support": ("viewer", True), "archive": ("viewer", False)}
    assert AuditEvent.objects.filter(action="membership.remove", namespace_slug="sales").exists()
    assert problems == []
    assert csp_refusals(said) == []


def test_with_password_login_off_the_page_offers_only_sso_in_chinese(
    provider: Provider, namespaces: dict[str, Namespace], live_server: Any, browser: Any
) -> None:
    base = live_server.url
    provider.set_claims("cy", email="cy@example.com", groups=["marketing"])
    context = browser.new_context(locale="zh-CN")
    page = context.new_page()
    with sso_settings(provider, MEMORYHUB_PASSWORD_LOGIN=False):
        page.goto(f"{base}/accounts/login/")
        assert page.locator("#id_password").count() == 0
        problems = axe_problems(page)
        sign_in_with_sso(page, base, "cy", button="使用 Corp SSO 登录")
        page.wait_for_url(f"{base}/accounts/sso/no-namespace/")
        text = page.locator("main").inner_text()
        assert "你已通过 Corp SSO 登录" in text
        assert "没有任何一个给予你" in text
        problems += axe_problems(page)
    context.close()
    assert problems == []


def test_a_code_issued_to_another_client_signs_nobody_in(
    provider: Provider, namespaces: dict[str, Namespace], live_server: Any, context: Any
) -> None:
    """The browser is sent to the provider as another client (another audience), with this
    server's callback: the code that comes back is not this client's, and no one signs in."""
    base = live_server.url
    callback = f"{base}/accounts/sso/callback/"
    other_id, _ = provider.register_client(callback)
    provider.set_claims("mal", email="mal@example.com", groups=["memoryhub-admins"])
    page = context.new_page()

    def as_other_client(route: Any) -> None:
        parts = urlsplit(route.request.url)
        query = {name: values[0] for name, values in parse_qs(parts.query).items()}
        query["client_id"] = other_id
        route.continue_(url=f"{parts.scheme}://{parts.netloc}{parts.path}?{urlencode(query)}")

    with sso_settings(provider):
        page.route("**/oauth2/authorize?**", as_other_client)
        sign_in_with_sso(page, base, "mal")
        page.wait_for_url(f"{base}/accounts/login/?sso=failed")
        assert "Signing in with Corp SSO did not succeed" in page.locator("main").inner_text()
        page.goto(f"{base}/")
        assert "/accounts/login/" in page.url
    assert not SsoIdentity.objects.filter(subject="mal").exists()
    refusal = AuditEvent.objects.get(action="login.sso")
    assert refusal.details == {"reason": "provider_error"}
