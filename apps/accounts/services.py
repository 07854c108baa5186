"""API keys: created (raw key returned once), revoked, given or cleared an expiry, and marked
as used."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import cast

from django.contrib.auth.models import User
from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.accounts.models import ApiKey, Permission
from apps.audit.actors import Actor
from apps.audit.services import audit_denied, audit_record
from apps.namespaces.models import Namespace
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
