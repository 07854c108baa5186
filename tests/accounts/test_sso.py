"""Single sign-on against a real OpenID Connect provider (oidc-provider-mock, in a thread of
the test process): the code flow with state, nonce and PKCE; identity by issuer and `sub`;
namespace roles from the provider's groups, matched again at every sign-in and audited;
tokens of another audience or issuer, or expired, refused; a provider that can't be reached
said on the login page; sign-out at the provider."""

from __future__ import annotations

import base64
import hashlib
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, RequestFactory, override_settings

from apps.accounts.models import SsoIdentity
from apps.accounts.oidc import SsoBackend, SsoRefused
from apps.audit.actors import Actor
from apps.audit.models import AuditEvent, Outcome
from apps.namespaces.models import EveryNamespaceRole, Membership, Namespace
from apps.namespaces.services import membership_set, namespace_create
from tests.accounts.oidc_provider import (
    CLIENT_ID,
    CLIENT_SECRET,
    Provider,
    provider_in_thread,
    sso_settings,
)

pytestmark = pytest.mark.django_db
START = "/accounts/sso/start/"


@pytest.fixture
def provider() -> Iterator[Provider]:
    with provider_in_thread() as running:
        yield running


@pytest.fixture
def sso(provider: Provider) -> Iterator[Provider]:
    with sso_settings(provider):
        yield provider


@pytest.fixture
def namespaces(db: None) -> dict[str, Namespace]:
    """Two namespaces, owned by hand by olive."""
    olive = User.objects.create_user("olive", "olive@example.com", "pw-olive-1234")
    actor = Actor.for_user(olive)
    return {slug: namespace_create(actor=actor, slug=slug) for slug in ("support", "sales")}


def sign_in(client: Client, provider: Provider, sub: str) -> Any:
    """ "Sign in with …", the provider's form as `sub`, and the callback: the last answer."""
    start = client.get(START)
    assert start.status_code == 302, start.content[:300]
    callback = provider.authorize(start["Location"], sub)
    parts = urlsplit(callback)
    assert parts.path == "/accounts/sso/callback/"
    return client.get(parts.path, parse_qs(parts.query))


def roles(user: User) -> dict[str, tuple[str, bool]]:
    return {
        m.namespace.slug: (m.role, m.granted_by_sso)
        for m in Membership.objects.filter(user=user).select_related("namespace")
    }


def test_it_signs_a_new_person_in_with_the_roles_their_groups_grant(
    sso: Provider, namespaces: dict[str, Namespace]
) -> None:
    sso.set_claims("u-1", email="ann@example.com", preferred_username="ann", groups=["support"])
    client = Client()
    response = sign_in(client, sso, "u-1")
    assert response.status_code == 302
    assert response["Location"] == "/"
    identity = SsoIdentity.objects.get(subject="u-1")
    assert identity.issuer == sso.issuer
    assert identity.user.username == "ann"
    assert not identity.user.has_usable_password()
    assert roles(identity.user) == {"support": ("viewer", True)}
    assert client.get("/n/support/").status_code == 200
    assert client.get("/n/sales/").status_code == 404
    actions = list(
        AuditEvent.objects.filter(object_id=str(identity.user.pk)).values_list("action", "details")
    )
    assert ("sso.identity_link", {"linked_by": "new_user"}) in actions
    assert ("membership.set", {"role": "viewer", "created": True, "via": "sso"}) in actions
    assert (
        "login.sso",
        {"added": 1, "changed": 0, "removed": 0, "groups": 1},
    ) in actions


def test_it_grants_every_namespace_for_a_star_even_those_created_later(
    sso: Provider, namespaces: dict[str, Namespace]
) -> None:
    sso.set_claims("u-2", email="root@example.com", groups=["memoryhub-admins", "support"])
    sign_in(Client(), sso, "u-2")
    user = SsoIdentity.objects.get(subject="u-2").user
    assert roles(user) == {"support": ("owner", True), "sales": ("owner", True)}
    assert EveryNamespaceRole.objects.get(user=user).role == "owner"
    other = User.objects.create_user("olga")
    namespace_create(actor=Actor.for_user(other), slug="later", owner=other)
    assert roles(user)["later"] == ("owner", True)
    assert roles(other) == {"later": ("owner", False)}


def test_a_group_removed_at_the_provider_takes_its_role_away_but_not_a_hand_granted_one(
    sso: Provider, namespaces: dict[str, Namespace]
) -> None:
    sso.set_claims("u-3", email="bo@example.com", groups=["support-leads", "memoryhub-admins"])
    sign_in(Client(), sso, "u-3")
    user = SsoIdentity.objects.get(subject="u-3").user
    assert roles(user) == {"support": ("owner", True), "sales": ("owner", True)}
    # An owner sets bo's role in sales by hand: from now on it is the members page's.
    membership_set(
        actor=Actor.system("test"), namespace=namespaces["sales"], user=user, role="viewer"
    )
    sso.set_claims("u-3", email="bo@example.com", groups=["support-leads"])
    sign_in(Client(), sso, "u-3")
    assert roles(user) == {"support": ("editor", True), "sales": ("viewer", False)}
    assert not EveryNamespaceRole.objects.filter(user=user).exists()
    sso.set_claims("u-3", email="bo@example.com", groups=[])
    assert sign_in(Client(), sso, "u-3")["Location"] == "/"  # the hand-granted role stays
    assert roles(user) == {"sales": ("viewer", False)}
    removed = AuditEvent.objects.filter(
        action="membership.remove", object_id=str(user.pk), namespace_slug="support"
    )
    assert removed.get().details == {"removed": True, "via": "sso"}


def test_a_person_no_group_maps_sees_a_page_saying_so(
    sso: Provider, namespaces: dict[str, Namespace]
) -> None:
    sso.set_claims("u-4", email="cy@example.com", groups=["marketing"])
    client = Client()
    response = sign_in(client, sso, "u-4")
    assert response["Location"] == "/accounts/sso/no-namespace/"
    page = client.get(response["Location"]).content.decode()
    assert "none of your groups there gives you a role in any namespace" in page
    assert "Corp SSO" in page
    assert roles(SsoIdentity.objects.get(subject="u-4").user) == {}


def test_it_never_links_by_email_unless_verified_and_allowed(
    sso: Provider, namespaces: dict[str, Namespace]
) -> None:
    dana = User.objects.create_user("dana", "dana@example.com", "pw-dana-1234")
    sso.set_claims("u-5", email="dana@example.com", email_verified=True, groups=["support"])
    sign_in(Client(), sso, "u-5")
    assert SsoIdentity.objects.get(subject="u-5").user != dana
    sso.set_claims("u-6", email="dana@example.com", email_verified=False, groups=["support"])
    with override_settings(MEMORYHUB_OIDC_LINK_BY_EMAIL=True):
        sign_in(Client(), sso, "u-6")
        assert SsoIdentity.objects.get(subject="u-6").user != dana
        sso.set_claims("u-7", email="DANA@example.com", email_verified=True, groups=["support"])
        sign_in(Client(), sso, "u-7")
    assert SsoIdentity.objects.get(subject="u-7").user == dana


def test_the_flow_sends_state_nonce_and_an_s256_pkce_challenge(sso: Provider) -> None:
    client = Client()
    query = parse_qs(urlsplit(client.get(START)["Location"]).query)
    assert query["client_id"] == [CLIENT_ID]
    assert query["code_challenge_method"] == ["S256"]
    kept = client.session["oidc_states"][query["state"][0]]
    assert kept["nonce"] == query["nonce"][0]
    digest = hashlib.sha256(kept["code_verifier"].encode()).digest()
    assert base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == query["code_challenge"][0]


def test_a_callback_with_a_state_this_browser_never_sent_is_refused(
    sso: Provider, namespaces: dict[str, Namespace]
) -> None:
    sso.set_claims("u-8", groups=["support"])
    victim, attacker = Client(), Client()
    attacker.get(START)  # a session with states of its own
    callback = urlsplit(sso.authorize(victim.get(START)["Location"], "u-8"))
    response = attacker.get(callback.path, parse_qs(callback.query))
    assert response["Location"] == "/accounts/login/?sso=failed"
    assert "_auth_user_id" not in attacker.session
    refused = AuditEvent.objects.get(action="login.sso")
    assert (refused.outcome, refused.details) == (Outcome.DENIED, {"reason": "state"})


def backend() -> SsoBackend:
    """The backend as a callback uses it, to be given a token to check."""
    found = SsoBackend()
    found.configure()
    found.request = RequestFactory().get("/accounts/sso/callback/")
    return found


def test_a_token_for_another_audience_is_refused(sso: Provider) -> None:
    other_id, other_secret = sso.register_client("http://testserver/accounts/sso/callback/")
    ours = sso.id_token(client_id=CLIENT_ID, client_secret=CLIENT_SECRET, sub="eve", nonce="n1")
    theirs = sso.id_token(client_id=other_id, client_secret=other_secret, sub="eve", nonce="n2")
    assert backend().verify_token(ours, nonce="n1")["sub"] == "eve"
    with pytest.raises(SsoRefused) as refused:
        backend().verify_token(theirs, nonce="n2")
    assert refused.value.reason == "token_audience"


def test_a_token_of_another_issuer_is_refused(sso: Provider) -> None:
    with provider_in_thread() as other:
        forged = other.id_token(client_id=CLIENT_ID, client_secret="x", sub="eve", nonce="n")
    with pytest.raises(SsoRefused) as refused:
        backend().verify_token(forged, nonce="n")
    assert refused.value.reason in {"token_key", "token_invalid", "token_issuer"}


def test_an_expired_token_is_refused() -> None:
    with (
        provider_in_thread(token_max_age=timedelta(seconds=1)) as provider,
        sso_settings(provider, OIDC_CLOCK_SKEW_SECONDS=0),
    ):
        token = provider.id_token(
            client_id=CLIENT_ID, client_secret=CLIENT_SECRET, sub="eve", nonce="n"
        )
        assert backend().verify_token(token, nonce="n")["sub"] == "eve"
        time.sleep(2.1)
        with pytest.raises(SsoRefused) as refused:
            backend().verify_token(token, nonce="n")
    assert refused.value.reason == "token_expired"


def test_a_token_with_another_nonce_is_refused(sso: Provider) -> None:
    token = sso.id_token(client_id=CLIENT_ID, client_secret=CLIENT_SECRET, sub="eve", nonce="a")
    with pytest.raises(Exception, match="Nonce"):
        backend().verify_token(token, nonce="b")


def test_a_provider_that_cannot_be_reached_is_said_on_the_login_page() -> None:
    down = Provider(issuer="http://127.0.0.1:9")  # discard: nothing answers
    with sso_settings(down):
        client = Client()
        response = client.get(START)
        assert response["Location"] == "/accounts/login/?sso=unavailable"
        page = client.get(response["Location"]).content.decode()
    assert "Corp SSO can't be reached just now" in page


def test_the_login_page_offers_sign_in_with_the_provider(sso: Provider) -> None:
    page = Client().get("/accounts/login/").content.decode()
    assert 'href="/accounts/sso/start/"' in page
    assert "Sign in with Corp SSO" in page
    assert 'id="id_password"' in page


def test_without_an_issuer_there_is_no_single_sign_on() -> None:
    client = Client()
    assert "Sign in with" not in client.get("/accounts/login/").content.decode()
    assert client.get(START).status_code == 404


def test_signing_out_signs_out_at_the_provider_too(
    sso: Provider, namespaces: dict[str, Namespace]
) -> None:
    sso.set_claims("u-9", groups=["support"])
    client = Client()
    sign_in(client, sso, "u-9")
    id_token = client.session["oidc_id_token"]
    response = client.post("/accounts/logout/")
    location = urlsplit(response["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == (
        f"{sso.issuer}/oauth2/end_session"
    )
    query = parse_qs(location.query)
    assert query["id_token_hint"] == [id_token]
    assert query["post_logout_redirect_uri"] == ["http://testserver/accounts/login/"]
    assert "_auth_user_id" not in client.session


def test_a_bad_role_map_stops_start_up() -> None:
    from django.apps import apps

    config = apps.get_app_config("accounts")
    for bad, said in [
        ("{not json", "not JSON"),
        ('{"g": [["*", "admin"]]}', "unknown role 'admin'"),
        ('{"g": ["support"]}', "is not a [namespace, role] pair"),
    ]:
        with (
            override_settings(MEMORYHUB_OIDC_ROLE_MAP=bad),
            pytest.raises(ImproperlyConfigured, match="MEMORYHUB_OIDC_ROLE_MAP") as error,
        ):
            config.ready()
        assert said in str(error.value)
