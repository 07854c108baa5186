"""Reads of API keys: the key behind a raw bearer token (the API), and the keys a dashboard
user may see and manage (scoped by the user; outside the scope is NotFound)."""

from __future__ import annotations

import hmac
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import User
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.accounts.models import ApiKey
from apps.accounts.services import KEY_PREFIX, hash_secret
from apps.namespaces.models import Membership, MembershipRole, Namespace
from apps.namespaces.selectors import namespaces_for_user
from memoryhub.exceptions import NotFound

RAW_KEY_PATTERN = re.compile(
    rf"^{KEY_PREFIX}(?P<prefix>[0-9a-f]{{12}})_(?P<secret>[A-Za-z0-9_-]{{20,128}})$"
)


def api_key_prefix_of(raw: str) -> str:
    """The lookup prefix of a raw key, or '' when it is not shaped like one (safe to log)."""
    match = RAW_KEY_PATTERN.match(raw)
    return match.group("prefix") if match else ""


def api_key_for_raw(raw: str) -> ApiKey | None:
    """The usable key matching `raw`: right prefix, right secret (constant-time), not revoked
    or expired. None otherwise, without saying which check failed."""
    match = RAW_KEY_PATTERN.match(raw)
    if match is None:
        return None
    api_key = ApiKey.objects.filter(prefix=match.group("prefix")).first()
    if api_key is None:
        hash_secret(secret=match.group("secret"))  # same work either way: no timing hint
        return None
    if not hmac.compare_digest(api_key.secret_hash, hash_secret(secret=match.group("secret"))):
        return None
    if not api_key.is_usable:
        return None
    return api_key


def namespace_for_api_key(api_key: ApiKey, slug: str) -> Namespace:
    """A namespace in the key's scope; any other slug is NotFound, like one that never was."""
    namespace = api_key.namespaces.filter(slug=slug).first()
    if namespace is None:
        raise NotFound(gettext_noop("Namespace not found."))
    return namespace


# --- The dashboard's API-keys pages ----------------------------------------------------------

ACTIVE, EXPIRED, REVOKED = "active", "expired", "revoked"
API_KEY_STATES = (ACTIVE, EXPIRED, REVOKED)
_KEY_NAMESPACES = ApiKey.namespaces.through


def api_key_state(api_key: ApiKey, *, now: datetime | None = None) -> str:
    """`revoked` (final), `expired` (past its expiry, final too) or `active`."""
    if api_key.revoked_at is not None:
        return REVOKED
    if api_key.expires_at is not None and api_key.expires_at <= (now or timezone.now()):
        return EXPIRED
    return ACTIVE


@dataclass(frozen=True)
class ApiKeyScope:
    """A key as one dashboard user may see it.

    `namespaces` are the key's namespaces the user is a member of (any role; every one for a
    superuser); `hidden` counts the others, which the page names only by their number, so a
    key shared with another tenant does not reveal that tenant. The user may view the key if
    they own at least one of its namespaces, and manage it (revoke, change its expiry) only if
    they own every one of them. Superusers own every namespace.
    """

    api_key: ApiKey
    namespaces: list[Namespace]
    hidden: int
    state: str
    can_view: bool
    can_manage: bool


def api_key_owned_namespaces(user: User) -> QuerySet[Namespace]:
    """The namespaces the user may create keys for: the ones they own (all, for superusers)."""
    return namespaces_for_user(user, min_role=MembershipRole.OWNER).order_by("slug")


def api_keys_for_user(user: User, *, state: str = "", namespace_slug: str = "") -> QuerySet[ApiKey]:
    """The keys that touch a namespace the user owns (every key, for superusers), newest
    first, with their namespaces and creator loaded. Editors, viewers and outsiders get none.

    `state` narrows to `active`, `expired` or `revoked`; `namespace_slug` to the keys of that
    one namespace, which must be one the user owns (any other slug matches nothing, so the
    filter cannot probe other tenants' keys).
    """
    owned = api_key_owned_namespaces(user)
    keys = ApiKey.objects.all()
    if not user.is_superuser:
        keys = keys.filter(
            pk__in=_KEY_NAMESPACES.objects.filter(namespace__in=owned).values("apikey_id")
        )
    if namespace_slug:
        keys = keys.filter(
            pk__in=_KEY_NAMESPACES.objects.filter(
                namespace__in=owned, namespace__slug=namespace_slug
            ).values("apikey_id")
        )
    now = timezone.now()
    if state == ACTIVE:
        keys = keys.filter(revoked_at__isnull=True).filter(
            Q(expires_at__isnull=True) | Q(expires_at__gt=now)
        )
    elif state == EXPIRED:
        keys = keys.filter(revoked_at__isnull=True, expires_at__lte=now)
    elif state == REVOKED:
        keys = keys.filter(revoked_at__isnull=False)
    return (
        keys.select_related("created_by")
        .prefetch_related("namespaces")
        .order_by("-created_at", "-pk")
    )


def api_key_scopes(user: User, api_keys: Iterable[ApiKey]) -> list[ApiKeyScope]:
    """Each key as `user` may see it (see ApiKeyScope), with one query for the user's roles.
    The keys' namespaces should be prefetched."""
    roles: dict[int, str] = {}
    if not user.is_superuser:
        roles = dict(Membership.objects.filter(user=user).values_list("namespace_id", "role"))
    now = timezone.now()
    scopes = []
    for api_key in api_keys:
        everything = sorted(api_key.namespaces.all(), key=lambda namespace: namespace.slug)
        if user.is_superuser:
            seen, owned = everything, len(everything)
        else:
            seen = [namespace for namespace in everything if namespace.pk in roles]
            owned = sum(1 for namespace in seen if roles[namespace.pk] == MembershipRole.OWNER)
        scopes.append(
            ApiKeyScope(
                api_key=api_key,
                namespaces=seen,
                hidden=len(everything) - len(seen),
                state=api_key_state(api_key, now=now),
                can_view=user.is_superuser or owned > 0,
                can_manage=user.is_superuser or 0 < owned == len(everything),
            )
        )
    return scopes


def api_key_scope_for_user(user: User, prefix: str) -> ApiKeyScope:
    """The key with this prefix as `user` may see it. NotFound when there is none, or when
    the user is a member of none of its namespaces (outsiders and missing keys look alike).
    A member who owns none of them gets the scope with `can_view` false: the view says 403."""
    api_key = (
        ApiKey.objects.filter(prefix=prefix)
        .select_related("created_by")
        .prefetch_related("namespaces")
        .first()
    )
    if api_key is None:
        raise NotFound(gettext_noop("API key not found."))
    (scope,) = api_key_scopes(user, [api_key])
    if not (scope.namespaces or user.is_superuser):
        raise NotFound(gettext_noop("API key not found."))
    return scope
