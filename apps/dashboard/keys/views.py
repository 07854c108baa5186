"""The API-keys pages (list, create, the raw key shown once, a key's detail with what it can
do, revoke, expiry).

Who sees what on the API-keys pages: a key belongs to the owners of its namespaces.
Superusers see and manage every key. A namespace owner sees the keys that touch a namespace
they own, creates keys only for namespaces they own, and may revoke a key or change its
expiry only if they own every namespace it covers (else 403). Other namespaces of a shared
key are named only if the user is a member there, else counted. On a key's URLs, a user who
is a member of none of its namespaces gets 404 (as if it did not exist); a member who owns
none of them gets 403. Editors, viewers and outsiders see an empty list.

The raw key exists only in the response to the creating POST: it is rendered from it (never
from a GET, never stored, not in any audit event), with `Cache-Control: no-store`. A one-time
token in the form makes a resubmission (a reload of that page, the back button) lead to the
key's detail page instead of creating a second key or showing the first one again.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import dateformat, timezone
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.middleware import HtmxDetails

from apps.accounts.models import Permission
from apps.accounts.selectors import (
    ACTIVE,
    REVOKED,
    ApiKeyScope,
    api_key_owned_namespaces,
    api_key_scope_for_user,
    api_key_scopes,
    api_keys_for_user,
)
from apps.accounts.services import KEY_PREFIX, api_key_create, api_key_revoke, api_key_set_expiry
from apps.audit.actors import Actor
from apps.dashboard.keys.forms import (
    PERMISSION_ENDPOINTS,
    PERMISSION_IN_NAMESPACE,
    PERMISSION_LABELS,
    ApiKeyCreateForm,
    ApiKeyExpiryForm,
    ApiKeyFilterForm,
)
from apps.namespaces.selectors import namespaces_for_user
from memoryhub.cursor_pages import PageOrder, cursor_page
from memoryhub.exceptions import ApplicationError, NotFound


class DashboardRequest(HttpRequest):
    user: User
    htmx: HtmxDetails


def _actor(request: DashboardRequest) -> Actor:
    return Actor.for_user(request.user, request)


def _api_key(request: DashboardRequest, prefix: str, *, manage: bool = False) -> ApiKeyScope:
    """The key as the user may see it: 404 if they are a member of none of its namespaces,
    403 if they own none of them (or, to `manage` it, not all of them)."""
    try:
        scope = api_key_scope_for_user(request.user, prefix)
    except NotFound:
        raise Http404("API key not found.") from None
    if not scope.can_view:
        raise PermissionDenied(_("Only the owners of a key's namespaces see it."))
    if manage and not scope.can_manage:
        raise PermissionDenied(
            _("You may change this key only if you own every namespace it covers.")
        )
    return scope


def _require_owner_of(request: DashboardRequest, slugs: list[str]) -> None:
    """Every namespace chosen for a new key: 404 for one the user is not a member of (or that
    does not exist), 403 for one they are a member of but do not own."""
    chosen = set(slugs)
    if not chosen:
        return
    visible = set(
        namespaces_for_user(request.user).filter(slug__in=chosen).values_list("slug", flat=True)
    )
    if chosen - visible:
        raise Http404("Namespace not found.")
    owned = set(
        api_key_owned_namespaces(request.user)
        .filter(slug__in=chosen)
        .values_list("slug", flat=True)
    )
    if chosen - owned:
        raise PermissionDenied(_("Only a namespace's owners create API keys for it."))


DEFAULT_PAGE_SIZE = 50
# The list's order (api_keys_for_user's): newest first, the id breaking ties.
NEWEST_KEYS = PageOrder("keys-newest", "created_at", descending=True)


# The one-time tokens of the create forms this session has been given: token -> the prefix
# of the key it created ("" while unused). The newest few are kept.
CREATE_TOKENS = "api_key_create_tokens"


CREATE_TOKENS_KEPT = 20


# What the dashboard says when the expiry service refuses (its messages are the API's).
EXPIRY_REFUSALS = {
    "api_key_revoked": gettext_lazy("This key is revoked: it cannot be changed."),
    "api_key_expired": gettext_lazy("This key has expired: create a new one instead."),
    "expiry_not_in_future": gettext_lazy(
        "Choose a day after today; to stop the key now, revoke it."
    ),
}


def _create_token_issue(request: DashboardRequest) -> str:
    tokens: dict[str, str] = request.session.get(CREATE_TOKENS, {})
    token = secrets.token_urlsafe(16)
    tokens[token] = ""
    request.session[CREATE_TOKENS] = dict(list(tokens.items())[-CREATE_TOKENS_KEPT:])
    return token


def _create_token_spend(request: DashboardRequest, token: str, prefix: str) -> None:
    tokens: dict[str, str] = request.session.get(CREATE_TOKENS, {})
    tokens[token] = prefix
    request.session[CREATE_TOKENS] = tokens


@login_required
@require_GET
def api_keys(request: DashboardRequest) -> HttpResponse:
    """The keys the user may see, newest first, filtered by the query string (state, one of
    their namespaces, page size) and paged by keyset (memoryhub/cursor_pages.py); htmx swaps
    the results in place."""
    owned = api_key_owned_namespaces(request.user)
    query = request.GET.copy()
    query.setdefault("size", str(DEFAULT_PAGE_SIZE))  # so that the page-size choice shows it
    filters = ApiKeyFilterForm(query, namespaces=owned)
    filters.is_valid()
    data = filters.cleaned_data  # the valid filters; an invalid one shows its error
    size = data.get("size") or DEFAULT_PAGE_SIZE
    keys = api_keys_for_user(
        request.user, state=data.get("state") or "", namespace_slug=data.get("namespace") or ""
    )
    total = keys.count()
    page = cursor_page(
        keys,
        order=NEWEST_KEYS,
        size=size,
        after=request.GET.get("after", ""),
        before=request.GET.get("before", ""),
    )
    rows = api_key_scopes(request.user, page.rows)
    kept = request.GET.copy()
    for name in ("after", "before"):
        kept.pop(name, None)
    template = "dashboard/keys/api_keys.html"
    if request.htmx and not request.htmx.boosted:
        template += "#results"
    return render(
        request,
        template,
        {
            "filters": filters,
            "rows": rows,
            "total": total,
            "start": page.start,
            "end": page.end,
            "next_cursor": page.next_cursor,
            "previous_cursor": page.previous_cursor,
            "filter_string": kept.urlencode(),
            "filtered": bool(data.get("state") or data.get("namespace")),
            "can_create": owned.exists(),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def api_key_new(request: DashboardRequest) -> HttpResponse:
    """The create form; its POST answers with the raw key, once (see the module's notes)."""
    if request.method == "POST":
        _require_owner_of(request, request.POST.getlist("namespaces"))
    owned = api_key_owned_namespaces(request.user)
    if not owned.exists():
        raise PermissionDenied(_("Only a namespace's owners create API keys, and you own none."))
    if request.method == "GET":
        form = ApiKeyCreateForm(namespaces=owned, initial={"once": _create_token_issue(request)})
        return render(request, "dashboard/keys/api_key_new.html", {"form": form})

    token = request.POST.get("once", "")
    tokens: dict[str, str] = request.session.get(CREATE_TOKENS, {})
    if tokens.get(token):
        messages.info(
            request,
            _(
                "This form was already used: the key below was created, and its raw value was "
                "shown once. It cannot be shown again; if it was not copied, revoke the key and "
                "create another."
            ),
        )
        return redirect("dashboard:keys:detail", prefix=tokens[token])
    data = request.POST.copy()
    stale = token not in tokens
    if stale:
        data["once"] = _create_token_issue(request)
    form = ApiKeyCreateForm(data, namespaces=owned)
    if stale:
        form.add_error(None, _("This form has expired. Check your choices and create the key."))
    elif form.is_valid():
        try:
            api_key, raw_key = api_key_create(
                actor=_actor(request),
                name=form.cleaned_data["name"],
                namespaces=form.cleaned_data["namespaces"],
                permissions=form.cleaned_data["permissions"],
                expires_at=form.expires_at(),
                default_subject=form.cleaned_data["default_subject"],
            )
        except ApplicationError as error:
            form.add_error(None, error.localized)
        else:
            _create_token_spend(request, token, api_key.prefix)
            (scope,) = api_key_scopes(request.user, [api_key])
            response = render(
                request,
                "dashboard/keys/api_key_created.html",
                {"scope": scope, "api_key": api_key, "raw_key": raw_key},
            )
            # The middleware says no-store to signed-in users already; this page must never
            # be kept, whatever becomes of it.
            add_never_cache_headers(response)
            return response
    return render(request, "dashboard/keys/api_key_new.html", {"form": form})


def _abilities(scope: ApiKeyScope) -> list[dict[str, Any]]:
    """What the key lets an app do in each namespace the user may see, in words, with the
    API calls each permission opens."""
    granted = [value for value in Permission.values if value in scope.api_key.permissions]
    return [
        {
            "namespace": namespace,
            "can": [
                {
                    "value": value,
                    "label": PERMISSION_LABELS[value],
                    "text": str(PERMISSION_IN_NAMESPACE[value])
                    % {"namespace": f"{namespace.name} ({namespace.slug})"},
                    "endpoints": [
                        endpoint.format(slug=namespace.slug)
                        for endpoint in PERMISSION_ENDPOINTS[value]
                    ],
                }
                for value in granted
            ],
        }
        for namespace in scope.namespaces
    ]


def _detail(
    request: DashboardRequest, scope: ApiKeyScope, expiry: ApiKeyExpiryForm | None = None
) -> HttpResponse:
    api_key = scope.api_key
    if expiry is None:
        expires = api_key.expires_at
        expiry = ApiKeyExpiryForm(
            initial={"expires_on": timezone.localdate(expires) if expires else None}
        )
    return render(
        request,
        "dashboard/keys/api_key_detail.html",
        {
            "scope": scope,
            "api_key": api_key,
            "abilities": _abilities(scope),
            "cannot": [
                PERMISSION_LABELS[value]
                for value in Permission.values
                if value not in api_key.permissions
            ],
            "expiry": expiry,
            "changeable": scope.can_manage and scope.state == ACTIVE,
            "key_shape": f"{KEY_PREFIX}{api_key.prefix}_…",
        },
    )


@login_required
@require_GET
def api_key_detail(request: DashboardRequest, prefix: str) -> HttpResponse:
    """A key: its facts, what it can do in each namespace, and (for those who may) its
    revoke and expiry controls. Never its secret: only the hash is stored."""
    return _detail(request, _api_key(request, prefix))


@login_required
@require_http_methods(["GET", "POST"])
def api_key_revoke_confirm(request: DashboardRequest, prefix: str) -> HttpResponse:
    """Revoke a key, after a confirmation that names it. Revoking is final and at once."""
    scope = _api_key(request, prefix, manage=True)
    api_key = scope.api_key
    if request.method == "GET":
        return render(
            request, "dashboard/keys/api_key_revoke.html", {"scope": scope, "api_key": api_key}
        )
    if scope.state == REVOKED:
        messages.info(request, _("This key was already revoked."))
    else:
        api_key_revoke(actor=_actor(request), api_key=api_key)
        messages.success(
            request,
            _("API key “%(name)s” (%(prefix)s) is revoked: apps using it are refused from now on.")
            % {"name": api_key.name, "prefix": api_key.prefix},
        )
    return redirect("dashboard:keys:detail", prefix=api_key.prefix)


@login_required
@require_POST
def api_key_expiry(request: DashboardRequest, prefix: str) -> HttpResponse:
    """Set the day a key stops working, or let it never expire. A revoked or expired key is
    final (see `api_key_set_expiry`)."""
    scope = _api_key(request, prefix, manage=True)
    form = ApiKeyExpiryForm(request.POST)
    if not form.is_valid():
        return _detail(request, scope, expiry=form)
    expires_at = form.expires_at()
    try:
        api_key_set_expiry(actor=_actor(request), api_key=scope.api_key, expires_at=expires_at)
    except ApplicationError as error:
        messages.error(request, str(EXPIRY_REFUSALS.get(error.code, error.localized)))
    else:
        if expires_at is None:
            messages.success(request, _("This key no longer expires."))
        else:
            messages.success(
                request,
                _("This key stops working at %(moment)s.")
                % {"moment": dateformat.format(timezone.localtime(expires_at), "Y-m-d H:i T")},
            )
    return redirect("dashboard:keys:detail", prefix=scope.api_key.prefix)
