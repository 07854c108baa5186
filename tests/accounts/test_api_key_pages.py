"""The dashboard's API-keys pages: who may see and do what on every URL (a role-and-tenant
matrix, CSRF), what the pages show (the raw key once, what a key can do), and that every
action goes through a service writing exactly one audit event, with no secret in it."""

from __future__ import annotations

import datetime
import re
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.test import Client
from django.urls import URLPattern, reverse
from django.utils import timezone

from apps.accounts.models import ApiKey
from apps.accounts.selectors import RAW_KEY_PATTERN, api_keys_for_user
from apps.accounts.services import api_key_create, api_key_revoke, api_key_set_expiry
from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.dashboard.keys import urls as keys_urls
from apps.namespaces.services import namespace_create
from memoryhub.exceptions import ApplicationError
from tests.accounts.key_cast import KeyCast, build_key_cast
from tests.audit_events import no_event, one_event
from tests.conftest import api_client
from tests.scanning import columns_containing

TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "dashboard" / "keys"


@pytest.fixture
def cast(db: None) -> KeyCast:
    return build_key_cast()


# --- Who may do what ------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    name: str  # the URL's name
    method: str
    url: Callable[[KeyCast], str]
    data: Callable[[KeyCast], dict[str, str]] = lambda cast: {}

    def __str__(self) -> str:
        return f"{self.method} {self.name}"


def _key_url(name: str) -> Callable[[KeyCast], str]:
    return lambda cast: reverse(f"dashboard:keys:{name}", kwargs={"prefix": cast.acme_key.prefix})


def _new_key_data(cast: KeyCast) -> dict[str, str]:
    return {"name": "New", "namespaces": "acme", "permissions": "memories:read", "once": "x"}


def _tomorrow() -> str:
    return (timezone.localdate() + datetime.timedelta(days=1)).isoformat()


# Every URL and method that concerns acme's key, or creating a key in acme: only acme's
# owner (and superusers) may; other members get 403; everyone else 404.
ACME_CALLS = [
    Call("new", "post", lambda c: reverse("dashboard:keys:new"), _new_key_data),
    Call("detail", "get", _key_url("detail")),
    Call("revoke", "get", _key_url("revoke")),
    Call("revoke", "post", _key_url("revoke")),
    Call("expiry", "post", _key_url("expiry"),
         lambda c: {"action": "set", "expires_on": _tomorrow()}),
]  # fmt: skip
# And the URLs of no one key: open to every signed-in user, each seeing their own.
OPEN_CALLS = [
    Call("list", "get", lambda c: reverse("dashboard:keys:list")),
    Call("new", "get", lambda c: reverse("dashboard:keys:new")),
]
CALLS = ACME_CALLS + OPEN_CALLS


def _send(client: Client, call: Call, cast: KeyCast) -> int:
    send = client.get if call.method == "get" else client.post
    return send(call.url(cast), call.data(cast)).status_code


def test_it_covers_every_api_key_url() -> None:
    names = {
        pattern.name
        for pattern in keys_urls.urlpatterns
        if isinstance(pattern, URLPattern) and str(pattern.pattern).startswith("api-keys/")
    }
    assert names == {call.name for call in CALLS}
    assert {(c.name, c.method) for c in ACME_CALLS} >= {
        (name, "post") for name in names if name not in ("list", "detail")
    }


@pytest.mark.parametrize("call", ACME_CALLS, ids=str)
@pytest.mark.parametrize("user", ["oscar", "nina"])
def test_it_answers_404_to_an_outsider(cast: KeyCast, call: Call, user: str) -> None:
    assert _send(cast.client(user), call, cast) == 404
    cast.acme_key.refresh_from_db()
    assert cast.acme_key.revoked_at is None
    assert cast.acme_key.expires_at is None
    assert ApiKey.objects.count() == 3


@pytest.mark.parametrize("call", ACME_CALLS, ids=str)
@pytest.mark.parametrize("user", ["olive", "eddie", "vera", "root"])
def test_it_lets_only_owners_and_superusers_act(cast: KeyCast, call: Call, user: str) -> None:
    status = _send(cast.client(user), call, cast)
    if user in ("olive", "root"):
        assert status in (200, 302), status
    else:
        assert status == 403


@pytest.mark.parametrize("user", ["eddie", "vera", "nina"])
def test_it_refuses_the_create_form_to_someone_who_owns_no_namespace(
    cast: KeyCast, user: str
) -> None:
    response = cast.client(user).get(reverse("dashboard:keys:new"))
    assert response.status_code == 403


@pytest.mark.parametrize("user", ["olive", "oscar", "root"])
def test_it_offers_the_create_form_only_the_namespaces_one_owns(cast: KeyCast, user: str) -> None:
    html = cast.client(user).get(reverse("dashboard:keys:new")).content.decode()
    offered = set(re.findall(r'name="namespaces" value="([^"]+)"', html))
    assert offered == {"olive": {"acme"}, "oscar": {"globex"}, "root": {"acme", "globex"}}[user]


@pytest.mark.parametrize("call", CALLS, ids=str)
def test_it_sends_anonymous_visitors_to_the_login(cast: KeyCast, call: Call) -> None:
    client = Client()
    response = client.get(call.url(cast)) if call.method == "get" else client.post(call.url(cast))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("dashboard:account:login"))


@pytest.mark.parametrize("call", [c for c in CALLS if c.method == "post"], ids=str)
def test_it_refuses_a_post_without_the_csrf_token(cast: KeyCast, call: Call) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(cast.users["olive"])
    assert client.post(call.url(cast), call.data(cast)).status_code == 403
    cast.acme_key.refresh_from_db()
    assert cast.acme_key.revoked_at is None
    assert ApiKey.objects.count() == 3


def _listed(client: Client, query: str = "") -> set[str]:
    html = client.get(reverse("dashboard:keys:list") + query).content.decode()
    return set(re.findall(r'href="/api-keys/([0-9a-f]{12})/"', html))


def test_it_lists_the_keys_that_touch_a_namespace_one_owns(cast: KeyCast) -> None:
    acme, globex, shared = (cast.acme_key.prefix, cast.globex_key.prefix, cast.shared_key.prefix)
    assert _listed(cast.client("olive")) == {acme, shared}
    assert _listed(cast.client("oscar")) == {globex, shared}
    assert _listed(cast.client("root")) == {acme, globex, shared}
    for name in ("eddie", "vera", "nina"):
        assert _listed(cast.client(name)) == set(), name


def test_it_tells_a_non_owner_why_the_list_is_empty(cast: KeyCast) -> None:
    html = cast.client("eddie").get(reverse("dashboard:keys:list")).content.decode()
    assert "You own no namespace" in html
    assert "Acme support bot" not in html
    assert reverse("dashboard:keys:new") not in html


def test_it_hides_the_other_tenant_of_a_shared_key(cast: KeyCast) -> None:
    client = cast.client("oscar")  # owns globex; the shared key also opens acme
    for url in (
        reverse("dashboard:keys:list"),
        reverse("dashboard:keys:detail", kwargs={"prefix": cast.shared_key.prefix}),
    ):
        html = client.get(url).content.decode()
        assert "Cross-tenant importer" in html
        assert "acme" not in html.lower(), url
        assert "1 namespace you are not a member of" in html


def test_it_lets_a_partial_owner_see_but_not_change_a_shared_key(cast: KeyCast) -> None:
    client = cast.client("olive")  # owns acme, not globex
    prefix = cast.shared_key.prefix
    detail = client.get(reverse("dashboard:keys:detail", kwargs={"prefix": prefix}))
    assert detail.status_code == 200
    assert "Only someone who owns every namespace" in detail.content.decode()
    assert reverse("dashboard:keys:revoke", kwargs={"prefix": prefix}) not in (
        detail.content.decode()
    )
    with no_event():
        for response in (
            client.get(reverse("dashboard:keys:revoke", kwargs={"prefix": prefix})),
            client.post(reverse("dashboard:keys:revoke", kwargs={"prefix": prefix})),
            client.post(
                reverse("dashboard:keys:expiry", kwargs={"prefix": prefix}),
                {"action": "set", "expires_on": _tomorrow()},
            ),
        ):
            assert response.status_code == 403
    cast.shared_key.refresh_from_db()
    assert cast.shared_key.revoked_at is None
    assert cast.shared_key.expires_at is None


def test_it_lets_a_superuser_revoke_a_shared_key(cast: KeyCast) -> None:
    prefix = cast.shared_key.prefix
    with one_event("api_key.revoke"):
        response = cast.client("root").post(
            reverse("dashboard:keys:revoke", kwargs={"prefix": prefix})
        )
    assert response.status_code == 302
    cast.shared_key.refresh_from_db()
    assert cast.shared_key.revoked_at is not None


def test_it_answers_404_for_a_prefix_that_is_no_key(cast: KeyCast) -> None:
    client = cast.client("root")
    assert client.get("/api-keys/000000000000/").status_code == 404
    assert client.get("/api-keys/not-hex/").status_code == 404


def test_it_refuses_to_create_a_key_in_a_namespace_one_does_not_own(cast: KeyCast) -> None:
    client = cast.client("olive")
    token = _create_token(client)
    with no_event():
        outsider = client.post(
            reverse("dashboard:keys:new"),
            {"name": "x", "namespaces": ["acme", "globex"], "permissions": "context",
             "once": token},
        )  # fmt: skip
        missing = client.post(
            reverse("dashboard:keys:new"),
            {"name": "x", "namespaces": "no-such", "permissions": "context", "once": token},
        )
    assert outsider.status_code == 404
    assert missing.status_code == 404
    assert ApiKey.objects.count() == 3


# --- Audit ----------------------------------------------------------------------------------


# --- Creating: the raw key, once ------------------------------------------------------------


def _create_token(client: Client) -> str:
    html = client.get(reverse("dashboard:keys:new")).content.decode()
    found = re.search(r'name="once" value="([^"]+)"', html)
    assert found is not None
    return found.group(1)


def _create(client: Client, **fields: object) -> tuple[str, object]:
    token = _create_token(client)
    data = {"name": "Support bot", "namespaces": ["acme"],
            "permissions": ["memories:read", "context"], "once": token, **fields}  # fmt: skip
    return token, client.post(reverse("dashboard:keys:new"), data)


def _raw_key_in(html: str) -> str:
    found = re.search(r'id="raw-key"[^>]*value="([^"]+)"', html)
    assert found is not None, "no raw key on the page"
    return found.group(1)


def test_it_creates_a_key_and_shows_the_raw_key_in_the_response(cast: KeyCast) -> None:
    client = cast.client("olive")
    with one_event("api_key.create") as events:
        _token, response = _create(client, expires_on=_tomorrow())
    assert response.status_code == 200  # type: ignore[attr-defined]
    assert "no-store" in response["Cache-Control"]  # type: ignore[index]
    raw = _raw_key_in(response.content.decode())  # type: ignore[attr-defined]
    match = RAW_KEY_PATTERN.match(raw)
    assert match is not None
    api_key = ApiKey.objects.get(prefix=match.group("prefix"))
    assert api_key.name == "Support bot"
    assert api_key.created_by == cast.users["olive"]
    assert sorted(api_key.permissions) == ["context", "memories:read"]
    assert [n.slug for n in api_key.namespaces.all()] == ["acme"]
    assert api_key.expires_at is not None
    assert events[0].actor_name == "olive"
    assert events[0].object_id == api_key.prefix
    # The key works against the API, within its scope.
    assert api_client(raw).get("/api/v1/namespaces/acme/memories").status_code == 200
    assert api_client(raw).get("/api/v1/namespaces/globex/memories").status_code == 404


def test_it_binds_a_default_subject_for_the_mcp_tools_and_shows_it(cast: KeyCast) -> None:
    client = cast.client("olive")
    _token, response = _create(client, default_subject="  user-42  ")
    raw = _raw_key_in(response.content.decode())  # type: ignore[attr-defined]
    prefix = RAW_KEY_PATTERN.match(raw).group("prefix")  # type: ignore[union-attr]
    assert ApiKey.objects.get(prefix=prefix).default_subject == "user-42"
    page = client.get(reverse("dashboard:keys:detail", kwargs={"prefix": prefix})).content.decode()
    assert '<dd class="mono">user-42</dd>' in page


def test_it_shows_the_raw_key_nowhere_else(cast: KeyCast) -> None:
    client = cast.client("olive")
    _token, response = _create(client)
    raw = _raw_key_in(response.content.decode())  # type: ignore[attr-defined]
    prefix, secret = RAW_KEY_PATTERN.match(raw).group("prefix", "secret")  # type: ignore[union-attr]
    pages = [
        reverse("dashboard:keys:list"),
        reverse("dashboard:keys:detail", kwargs={"prefix": prefix}),
        reverse("dashboard:keys:revoke", kwargs={"prefix": prefix}),
        reverse("dashboard:keys:new"),
        reverse("dashboard:audit:log"),
    ]
    for page in pages:
        html = cast.client("root").get(page).content.decode() + client.get(page).content.decode()
        assert secret not in html, page
    assert prefix in client.get(reverse("dashboard:keys:list")).content.decode()
    for event in AuditEvent.objects.all():
        assert secret not in str(event.details) + event.object_id + event.actor_name
    assert columns_containing(secret) == []  # not in the session either


def test_it_does_not_create_a_second_key_from_a_resubmitted_form(cast: KeyCast) -> None:
    client = cast.client("olive")
    token, first = _create(client)
    raw = _raw_key_in(first.content.decode())  # type: ignore[attr-defined]
    prefix, secret = RAW_KEY_PATTERN.match(raw).group("prefix", "secret")  # type: ignore[union-attr]
    count = ApiKey.objects.count()
    with no_event():
        again = client.post(
            reverse("dashboard:keys:new"),
            {"name": "Support bot", "namespaces": "acme", "permissions": "context",
             "once": token},
            follow=True,
        )  # fmt: skip
    assert ApiKey.objects.count() == count
    assert again.redirect_chain == [
        (reverse("dashboard:keys:detail", kwargs={"prefix": prefix}), 302)
    ]
    html = again.content.decode()
    assert "This form was already used" in html
    assert secret not in html
    assert 'id="raw-key"' not in html


def test_it_refuses_a_form_it_did_not_hand_out(cast: KeyCast) -> None:
    client = cast.client("olive")
    with no_event():
        response = client.post(
            reverse("dashboard:keys:new"),
            {"name": "Bot", "namespaces": "acme", "permissions": "context", "once": "forged"},
        )
    assert response.status_code == 200
    html = response.content.decode()
    assert "This form has expired" in html
    assert 'value="forged"' not in html  # a fresh token to try again with
    assert ApiKey.objects.count() == 3


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"name": ""}, "This field is required."),
        ({"namespaces": []}, "Choose at least one namespace."),
        ({"permissions": []}, "Choose at least one permission."),
        ({"permissions": ["memories:delete"]}, "Select a valid choice."),
        ({"expires_on": "2001-01-01"}, "Choose a day after today"),
        ({"expires_on": "today"}, "Enter a valid date."),
    ],
)
def test_it_refuses_an_incomplete_or_wrong_form_and_creates_nothing(
    cast: KeyCast, fields: dict[str, object], error: str
) -> None:
    client = cast.client("olive")
    with no_event():
        _token, response = _create(client, **fields)
    assert response.status_code == 200  # type: ignore[attr-defined]
    html = response.content.decode()  # type: ignore[attr-defined]
    assert error in html
    assert 'id="raw-key"' not in html
    assert ApiKey.objects.count() == 3


def test_it_sets_the_expiry_of_a_new_key_to_the_start_of_that_day_in_the_viewers_zone(
    cast: KeyCast,
) -> None:
    client = cast.client("olive")
    client.cookies["tz"] = "Asia/Shanghai"
    day = datetime.date.today() + datetime.timedelta(days=30)
    _token, response = _create(client, expires_on=day.isoformat())
    raw = _raw_key_in(response.content.decode())  # type: ignore[attr-defined]
    api_key = ApiKey.objects.get(prefix=RAW_KEY_PATTERN.match(raw).group("prefix"))  # type: ignore[union-attr]
    shanghai = zoneinfo.ZoneInfo("Asia/Shanghai")
    assert api_key.expires_at == datetime.datetime.combine(day, datetime.time.min, shanghai)


# --- What a key can do ----------------------------------------------------------------------


def test_it_says_what_the_key_can_do_in_each_namespace_in_words(cast: KeyCast) -> None:
    html = (
        cast.client("olive")
        .get(reverse("dashboard:keys:detail", kwargs={"prefix": cast.acme_key.prefix}))
        .content.decode()
    )
    abilities = html[html.index('id="abilities-heading"') :]
    assert "List and filter the memories of Acme (acme)" in abilities
    assert "Recall the memories of Acme (acme) that best match a query" in abilities
    assert "POST /api/v1/namespaces/acme/recall" in abilities
    assert "GET /api/v1/namespaces/acme/memories" in abilities
    assert "Create, edit and delete" not in abilities  # memories:write was not given
    cannot = abilities[abilities.index("What it cannot do") :]
    assert "Write memories" in cannot
    assert "Administer subjects" in cannot
    assert "Read memories" not in cannot


def test_it_says_a_revoked_key_can_do_nothing(cast: KeyCast) -> None:
    api_key_revoke(actor=Actor.system("tests"), api_key=cast.acme_key)
    html = (
        cast.client("olive")
        .get(reverse("dashboard:keys:detail", kwargs={"prefix": cast.acme_key.prefix}))
        .content.decode()
    )
    assert "Nothing any more: it is revoked" in html
    assert "A revoked or expired key is final" in html
    assert reverse("dashboard:keys:expiry", kwargs={"prefix": cast.acme_key.prefix}) not in html


# --- Revoking -------------------------------------------------------------------------------


def test_it_asks_for_a_confirmation_that_names_the_key(cast: KeyCast) -> None:
    url = reverse("dashboard:keys:revoke", kwargs={"prefix": cast.acme_key.prefix})
    with no_event():
        html = cast.client("olive").get(url).content.decode()
    assert "Revoke this API key?" in html
    assert "Acme support bot" in html
    assert cast.acme_key.prefix in html
    cast.acme_key.refresh_from_db()
    assert cast.acme_key.revoked_at is None


def test_it_revokes_a_key_and_the_api_refuses_it_from_then_on(cast: KeyCast) -> None:
    assert api_client(cast.acme_raw).get("/api/v1/namespaces/acme/memories").status_code == 200
    url = reverse("dashboard:keys:revoke", kwargs={"prefix": cast.acme_key.prefix})
    with one_event("api_key.revoke") as events:
        response = cast.client("olive").post(url, follow=True)
    assert response.redirect_chain[-1][0] == reverse(
        "dashboard:keys:detail", kwargs={"prefix": cast.acme_key.prefix}
    )
    assert "is revoked" in response.content.decode()
    assert events[0].actor_name == "olive"
    cast.acme_key.refresh_from_db()
    assert cast.acme_key.revoked_at is not None
    assert api_client(cast.acme_raw).get("/api/v1/namespaces/acme/memories").status_code == 401


def test_it_does_not_revoke_a_revoked_key_again(cast: KeyCast) -> None:
    api_key_revoke(actor=Actor.system("tests"), api_key=cast.acme_key)
    cast.acme_key.refresh_from_db()
    revoked_at = cast.acme_key.revoked_at
    url = reverse("dashboard:keys:revoke", kwargs={"prefix": cast.acme_key.prefix})
    with no_event():
        response = cast.client("olive").post(url, follow=True)
    assert "already revoked" in response.content.decode()
    cast.acme_key.refresh_from_db()
    assert cast.acme_key.revoked_at == revoked_at


# --- Expiry ---------------------------------------------------------------------------------


def _expiry(client: Client, cast: KeyCast, **data: str) -> object:
    url = reverse("dashboard:keys:expiry", kwargs={"prefix": cast.acme_key.prefix})
    return client.post(url, data, follow=True)


def test_it_sets_an_expiry_in_the_viewers_zone(cast: KeyCast) -> None:
    client = cast.client("olive")
    client.cookies["tz"] = "America/New_York"
    day = datetime.date.today() + datetime.timedelta(days=10)
    with one_event("api_key.expiry") as events:
        response = _expiry(client, cast, action="set", expires_on=day.isoformat())
    cast.acme_key.refresh_from_db()
    new_york = zoneinfo.ZoneInfo("America/New_York")
    expected = datetime.datetime.combine(day, datetime.time.min, new_york)
    assert cast.acme_key.expires_at == expected
    assert events[0].details["expires_at"] == expected.isoformat()
    assert events[0].details["previous_expires_at"] is None
    assert "This key stops working at" in response.content.decode()  # type: ignore[attr-defined]
    assert api_client(cast.acme_raw).get("/api/v1/namespaces/acme/memories").status_code == 200


def test_it_clears_an_expiry(cast: KeyCast) -> None:
    later = timezone.now() + datetime.timedelta(days=3)
    api_key_set_expiry(actor=Actor.system("tests"), api_key=cast.acme_key, expires_at=later)
    with one_event("api_key.expiry") as events:
        response = _expiry(cast.client("olive"), cast, action="clear")
    cast.acme_key.refresh_from_db()
    assert cast.acme_key.expires_at is None
    assert events[0].details["expires_at"] is None
    assert events[0].details["previous_expires_at"] == later.isoformat()
    assert "no longer expires" in response.content.decode()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"action": "set", "expires_on": ""}, "Choose the day the key stops working."),
        ({"action": "set", "expires_on": "2001-01-01"}, "Choose a day after today"),
        ({"action": "set", "expires_on": "soon"}, "Enter a valid date."),
        ({"action": "explode"}, "Select a valid choice."),
    ],
)
def test_it_refuses_an_expiry_that_is_not_a_day_to_come(
    cast: KeyCast, data: dict[str, str], error: str
) -> None:
    url = reverse("dashboard:keys:expiry", kwargs={"prefix": cast.acme_key.prefix})
    with no_event():
        response = cast.client("olive").post(url, data)
    assert response.status_code == 200
    assert error in response.content.decode()
    cast.acme_key.refresh_from_db()
    assert cast.acme_key.expires_at is None


def test_it_refuses_to_change_a_revoked_or_expired_key(cast: KeyCast) -> None:
    api_key_revoke(actor=Actor.system("tests"), api_key=cast.acme_key)
    with no_event():
        response = _expiry(cast.client("olive"), cast, action="set", expires_on=_tomorrow())
    assert "This key is revoked: it cannot be changed." in response.content.decode()  # type: ignore[attr-defined]
    ApiKey.objects.filter(pk=cast.globex_key.pk).update(
        expires_at=timezone.now() - datetime.timedelta(minutes=1)
    )
    with pytest.raises(ApplicationError) as refused:
        api_key_set_expiry(actor=Actor.system("tests"), api_key=cast.globex_key, expires_at=None)
    assert refused.value.code == "api_key_expired"


def test_the_expiry_service_refuses_a_moment_in_the_past(cast: KeyCast) -> None:
    with no_event(), pytest.raises(ApplicationError) as refused:
        api_key_set_expiry(
            actor=Actor.system("tests"),
            api_key=cast.acme_key,
            expires_at=timezone.now() - datetime.timedelta(seconds=1),
        )
    assert refused.value.code == "expiry_not_in_future"


def test_the_expiry_service_records_one_event_in_its_transaction(cast: KeyCast) -> None:
    later = timezone.now() + datetime.timedelta(days=1)
    with one_event("api_key.expiry") as events:
        api_key_set_expiry(actor=Actor.system("tests"), api_key=cast.shared_key, expires_at=later)
    assert events[0].object_type == "api_key"
    assert events[0].object_id == cast.shared_key.prefix
    assert sorted(events[0].details["namespace_ids"]) == sorted([cast.acme.pk, cast.globex.pk])
    assert events[0].namespace_id is None  # two namespaces: the ids are in the details


# --- The list -------------------------------------------------------------------------------


def test_it_filters_by_state_and_by_namespace(cast: KeyCast) -> None:
    api_key_revoke(actor=Actor.system("tests"), api_key=cast.globex_key)
    ApiKey.objects.filter(pk=cast.shared_key.pk).update(
        expires_at=timezone.now() - datetime.timedelta(days=1)
    )
    root = cast.client("root")
    assert _listed(root, "?state=active") == {cast.acme_key.prefix}
    assert _listed(root, "?state=revoked") == {cast.globex_key.prefix}
    assert _listed(root, "?state=expired") == {cast.shared_key.prefix}
    assert _listed(root, "?namespace=globex") == {cast.globex_key.prefix, cast.shared_key.prefix}
    html = root.get(reverse("dashboard:keys:list") + "?state=expired").content.decode()
    assert "Expired" in html


def test_it_does_not_let_the_namespace_filter_probe_another_tenant(cast: KeyCast) -> None:
    assert list(api_keys_for_user(cast.users["olive"], namespace_slug="globex")) == []
    response = cast.client("olive").get(reverse("dashboard:keys:list") + "?namespace=globex")
    assert "Select a valid choice." in response.content.decode()


def test_it_pages_through_many_keys(cast: KeyCast) -> None:
    for number in range(30):
        api_key_create(
            actor=Actor.system("tests"),
            name=f"bulk {number}",
            namespaces=[cast.acme],
            permissions=["context"],
        )
    client = cast.client("olive")  # 32 keys touch acme
    first = client.get(reverse("dashboard:keys:list") + "?size=25").content.decode()
    assert "1–25 of 32" in first
    after = re.search(r'after=([\w-]+)" rel="next"', first)
    assert after is not None
    second_page = f"?size=25&after={after[1]}"
    second = client.get(reverse("dashboard:keys:list") + second_page).content.decode()
    assert "26–32 of 32" in second
    assert 'rel="next"' not in second
    before = re.search(r'before=([\w-]+)" rel="prev"', second)
    assert before is not None
    back = client.get(reverse("dashboard:keys:list") + f"?size=25&before={before[1]}")
    assert "1–25 of 32" in back.content.decode()
    seen = _listed(client, "?size=25") | _listed(client, second_page)
    assert len(seen) == 32


def test_it_shows_the_page_size_in_use(cast: KeyCast) -> None:
    html = cast.client("olive").get(reverse("dashboard:keys:list")).content.decode()
    assert re.search(r'<option value="50" selected>', html)
    html = cast.client("olive").get(reverse("dashboard:keys:list") + "?size=25").content.decode()
    assert re.search(r'<option value="25" selected>', html)


def test_it_serves_the_results_alone_to_htmx(cast: KeyCast) -> None:
    response = cast.client("olive").get(reverse("dashboard:keys:list"), HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="results"')
    assert "<html" not in html


def test_it_shows_the_key_facts_in_the_list(cast: KeyCast) -> None:
    ApiKey.objects.filter(pk=cast.acme_key.pk).update(
        last_used_at=datetime.datetime(2030, 5, 6, 7, 8, tzinfo=datetime.UTC)
    )
    html = cast.client("olive").get(reverse("dashboard:keys:list")).content.decode()
    row = html[html.index(cast.acme_key.prefix) :].split("</tr>")[0]
    for fact in ("Acme support bot", "memories:read", "context", "acme", "olive",
                 "2030-05-06 07:08", "never", "Active"):  # fmt: skip
        assert fact in row, fact


# --- Inert content, and languages -----------------------------------------------------------

HOSTILE = '<script>alert(1)</script> "><img src=x onerror=alert(2)> <a hx-get="/evil">x</a>'
RAW_MARKUP = ("<script>alert", "<img src=x", 'hx-get="/evil"', "<b hx-get", "<img src=y")


def test_it_renders_hostile_names_inert_on_every_page(cast: KeyCast) -> None:
    system = Actor.system("tests")
    hostile_namespace = namespace_create(
        actor=system, slug="hostile", name='"><img src=y onerror=alert(3)><b hx-get="/ns">'
    )
    api_key, _raw = api_key_create(
        actor=system,
        name=HOSTILE,
        namespaces=[hostile_namespace, cast.acme],
        permissions=["memories:read", "subjects:admin"],
    )
    client = cast.client("root")
    pages = [
        reverse("dashboard:keys:list"),
        reverse("dashboard:keys:detail", kwargs={"prefix": api_key.prefix}),
        reverse("dashboard:keys:revoke", kwargs={"prefix": api_key.prefix}),
        reverse("dashboard:keys:new"),
        reverse("dashboard:keys:list") + '?namespace="><script>alert(1)</script>',
    ]
    responses = [client.get(page) for page in pages]
    _token, created = _create(client, name=HOSTILE, namespaces=["hostile"], permissions=["context"])
    expiry_error = client.post(
        reverse("dashboard:keys:expiry", kwargs={"prefix": api_key.prefix}),
        {"action": "set", "expires_on": '"><script>alert(1)</script>'},
    )
    for response in [*responses, created, expiry_error]:
        assert response.status_code == 200  # type: ignore[attr-defined]
        html = response.content.decode()  # type: ignore[attr-defined]
        for raw in RAW_MARKUP:
            assert raw not in html, (response.request["PATH_INFO"], raw)  # type: ignore[attr-defined]
    detail = responses[1].content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in detail


def _visible_text(template: str) -> str:
    """What a template would show that is not a variable or a translated string."""
    text = re.sub(r"{% *blocktranslate.*?{% *endblocktranslate *%}", "", template, flags=re.S)
    text = re.sub(r"{%.*?%}|{{.*?}}|{#.*?#}", "", text, flags=re.S)
    text = re.sub(r"<(script|style|code)\b.*?</\1>", "", text, flags=re.S)  # code is code
    text = re.sub(r"<[^>]*>", "", text, flags=re.S)
    return re.sub(r"&[a-z]+;", "", text)


def test_the_check_for_untranslated_text_finds_some() -> None:
    found = _visible_text("{% translate 'A' %}<p title='x'>Hello {{ name }}</p><code>ls</code>")
    assert found.strip() == "Hello"


@pytest.mark.parametrize(
    "path", sorted(p for p in TEMPLATES.glob("*.html") if p.name != "login.html"), ids=str
)
def test_it_puts_every_visible_string_through_the_translation_machinery(path: Path) -> None:
    source = path.read_text()
    assert re.match(r"({% extends [^%]+%})?{% load [^%]*\bi18n\b", source), "no i18n"
    assert re.findall(r"[A-Za-z]{2,}", _visible_text(source)) == [], path.name
    for attribute in re.findall(r'(?:aria-label|title|placeholder|alt)="([^"]*)"', source):
        assert attribute.startswith("{%") or attribute.startswith("{{"), attribute


def test_it_serves_every_page_in_simplified_chinese_when_asked(cast: KeyCast) -> None:
    client = cast.client("olive")
    pages = [
        reverse("dashboard:keys:list"),
        reverse("dashboard:keys:new"),
        reverse("dashboard:keys:detail", kwargs={"prefix": cast.acme_key.prefix}),
        reverse("dashboard:keys:revoke", kwargs={"prefix": cast.acme_key.prefix}),
    ]
    for page in pages:
        response = client.get(page, HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
        assert response.status_code == 200
        assert '<html lang="zh-hans">' in response.content.decode()
