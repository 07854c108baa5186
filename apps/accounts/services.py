"""API keys: created (raw key returned once), revoked, given or cleared an expiry, and marked
as used. Dashboard sign-ins: refusals audited, and single sign-on's users found or made,
their namespace roles matched to their groups."""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any, cast

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.accounts.models import ApiKey, Permission, SsoIdentity
from apps.accounts.sso_roles import RoleMap, groups_from_claim, parse_role_map, roles_for
from apps.audit.actors import Actor
from apps.audit.services import audit_denied, audit_record
from apps.namespaces.models import Namespace
from apps.namespaces.services import memberships_sync_sso
from memoryhub.exceptions import ApplicationError
from memoryhub.replica import bookkeeping

KEY_PREFIX = "mh_"


def hash_secret(*, secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def api_key_create(
    *,
    actor: Actor,
    name: str,
    namespaces: Iterable[Namespace],
    permissions: Iterable[str],
    expires_at: datetime | None = None,
    default_subject: str = "",
) -> tuple[ApiKey, str]:
    """Create a key scoped to `namespaces` with `permissions`; returns (key, raw key).
    `default_subject` is who the MCP tools act on when a call names nobody.

    The raw key is returned only here; the database keeps its prefix and SHA-256 hash.
    """
    namespaces = list(namespaces)
    permissions = sorted(set(permissions))
    unknown = [p for p in permissions if p not in Permission.values]
    if unknown or not permissions:
        raise ApplicationError(
            gettext_noop("Unknown or missing permissions."),
            details={"unknown": unknown, "allowed": list(Permission.values)},
        )
    if not namespaces:
        raise ApplicationError(gettext_noop("An API key needs at least one namespace."))
    prefix = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    with transaction.atomic():
        api_key = ApiKey.objects.create(
            prefix=prefix,
            secret_hash=hash_secret(secret=secret),
            name=name,
            permissions=permissions,
            created_by=cast(User | None, actor.user),  # Actor.user: AbstractBaseUser
            expires_at=expires_at,
            default_subject=default_subject.strip(),
        )
        api_key.namespaces.set(namespaces)
        audit_record(
            actor=actor,
            action="api_key.create",
            namespace=namespaces[0] if len(namespaces) == 1 else None,
            object_type="api_key",
            object_id=prefix,
            details={
                "namespace_ids": [namespace.pk for namespace in namespaces],
                "permissions": permissions,
                "expires": expires_at is not None,
            },
        )
    return api_key, f"{KEY_PREFIX}{prefix}_{secret}"


def api_key_revoke(*, actor: Actor, api_key: ApiKey) -> ApiKey:
    with transaction.atomic():
        api_key = ApiKey.objects.select_for_update().get(pk=api_key.pk)
        if api_key.revoked_at is None:
            api_key.revoked_at = timezone.now()
            api_key.save(update_fields=["revoked_at"])
        namespaces = list(api_key.namespaces.all())
        audit_record(
            actor=actor,
            action="api_key.revoke",
            namespace=namespaces[0] if len(namespaces) == 1 else None,
            object_type="api_key",
            object_id=api_key.prefix,
            details={"namespace_ids": [namespace.pk for namespace in namespaces]},
        )
    return api_key


def api_key_set_expiry(*, actor: Actor, api_key: ApiKey, expires_at: datetime | None) -> ApiKey:
    """Set the moment the key stops working (`None`: it never expires). Audited as
    `api_key.expiry` (old and new moments, no secret) in the same transaction.

    Invariants, re-checked on the locked row: a revoked key, or one already past its expiry,
    is final (extending it would revive a credential its holders were told is dead; create a
    new key instead); a new expiry lies in the future (to stop a key now, revoke it).
    """
    with transaction.atomic():
        api_key = ApiKey.objects.select_for_update().get(pk=api_key.pk)
        now = timezone.now()
        if api_key.revoked_at is not None:
            raise ApplicationError(
                gettext_noop("This API key is revoked: it cannot be changed."),
                code="api_key_revoked",
            )
        if api_key.expires_at is not None and api_key.expires_at <= now:
            raise ApplicationError(
                gettext_noop("This API key has expired: create a new one instead."),
                code="api_key_expired",
            )
        if expires_at is not None and expires_at <= now:
            raise ApplicationError(
                gettext_noop("An expiry must lie in the future; to stop a key now, revoke it."),
                code="expiry_not_in_future",
            )
        previous = api_key.expires_at
        api_key.expires_at = expires_at
        api_key.save(update_fields=["expires_at"])
        namespaces = list(api_key.namespaces.all())
        audit_record(
            actor=actor,
            action="api_key.expiry",
            namespace=namespaces[0] if len(namespaces) == 1 else None,
            object_type="api_key",
            object_id=api_key.prefix,
            details={
                "namespace_ids": [namespace.pk for namespace in namespaces],
                "expires_at": expires_at.isoformat() if expires_at else None,
                "previous_expires_at": previous.isoformat() if previous else None,
            },
        )
    return api_key


def api_key_touch(*, api_key: ApiKey, every: timedelta = timedelta(minutes=1)) -> None:
    """Record use, at most once a minute per key (a conditional UPDATE, no audit: not a change).
    Bookkeeping: the request's reads may still use a replica (memoryhub/replica.py)."""
    now = timezone.now()
    if api_key.last_used_at and now - api_key.last_used_at < every:
        return
    with bookkeeping():
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
    api_key.last_used_at = now


def login_refused_locked_out(*, request: HttpRequest, username: str) -> None:
    """Audit a dashboard (or /django-admin/) login refused because the account or the
    address has failed too often: the name tried, the address, never the password."""
    audit_denied(
        actor=Actor.anonymous(request, claimed_id=username),
        action="login.locked_out",
        reason="too_many_failed_logins",
    )


def sso_sign_in_refused(*, request: HttpRequest, reason: str) -> None:
    """Audit a single sign-on the provider's answer did not allow: why, never the token."""
    audit_denied(actor=Actor.anonymous(request), action="login.sso", reason=reason)


@lru_cache(maxsize=4)
def _role_map(text: str) -> RoleMap:
    return parse_role_map(text)  # checked at start-up (AccountsConfig.ready)


def sso_user_sign_in(*, request: HttpRequest, claims: Mapping[str, Any]) -> User | None:
    """The user the provider's checked claims name (issuer and `sub`), made at their first
    sign-in, with their SSO memberships matched to their groups; None for a deactivated
    user. Audited: the identity's link, each role change, and the sign-in."""
    issuer = settings.MEMORYHUB_OIDC_ISSUER
    groups = groups_from_claim(claims.get(settings.MEMORYHUB_OIDC_GROUPS_CLAIM))
    granted = roles_for(_role_map(settings.MEMORYHUB_OIDC_ROLE_MAP), groups)
    with transaction.atomic():
        identity = (
            SsoIdentity.objects.select_for_update()
            .select_related("user")
            .filter(issuer=issuer, subject=str(claims["sub"]))
            .first()
        ) or _sso_identity_create(request=request, issuer=issuer, claims=claims)
        user = identity.user
        if not user.is_active:
            audit_denied(actor=Actor.for_user(user, request), action="login.sso", reason="inactive")
            return None
        identity.last_sign_in_at = timezone.now()
        identity.save(update_fields=["last_sign_in_at"])
        actor = Actor.for_user(user, request)
        counts = memberships_sync_sso(
            actor=actor,
            user=user,
            role_in=granted.role_in,
            every_namespace=granted.every_namespace,
        )
        audit_record(
            actor=actor,
            action="login.sso",
            object_type="user",
            object_id=str(user.pk),
            details={**counts, "groups": len(groups)},
        )
    return user


def _sso_identity_create(
    *, request: HttpRequest, issuer: str, claims: Mapping[str, Any]
) -> SsoIdentity:
    """A first sign-in: linked to the existing user of the same e-mail address only when the
    provider says it is verified and MEMORYHUB_OIDC_LINK_BY_EMAIL allows; a new user else."""
    user = _user_by_verified_email(issuer, claims)
    linked = user is not None
    if user is None:
        email = str(claims.get("email") or "")
        user = User.objects.create_user(username=_new_username(issuer, claims), email=email)
    identity = SsoIdentity.objects.create(user=user, issuer=issuer, subject=str(claims["sub"]))
    audit_record(
        actor=Actor.for_user(user, request),
        action="sso.identity_link",
        object_type="user",
        object_id=str(user.pk),
        details={"linked_by": "verified_email" if linked else "new_user"},
    )
    return identity


def _user_by_verified_email(issuer: str, claims: Mapping[str, Any]) -> User | None:
    email = claims.get("email")
    if not (settings.MEMORYHUB_OIDC_LINK_BY_EMAIL and claims.get("email_verified") is True):
        return None
    if not isinstance(email, str) or not email:
        return None
    users = list(
        User.objects.filter(email__iexact=email, is_active=True).exclude(
            sso_identities__issuer=issuer
        )[:2]
    )
    return users[0] if len(users) == 1 else None


def _new_username(issuer: str, claims: Mapping[str, Any]) -> str:
    """A user name from the provider's preferred name (or the e-mail's local part), kept to
    Django's characters; with a short tag of the identity when that name is taken."""
    wanted = str(claims.get("preferred_username") or str(claims.get("email") or "").split("@")[0])
    base = re.sub(r"[^\w.@+-]", "", wanted)[:100] or "sso-user"
    if not User.objects.filter(username__iexact=base).exists():
        return base
    tag = hashlib.sha256(f"{issuer} {claims['sub']}".encode()).hexdigest()[:8]
    return f"{base}-{tag}"
