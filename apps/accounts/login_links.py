"""Break-glass sign-in links (`manage.py login_link USER`): for when the identity provider is
away, or password sign-in is off.

A link's token is signed (SECRET_KEY, its own salt) and names the user and the time of their
last sign-in. It works for MEMORYHUB_LOGIN_LINK_MINUTES, and once: using it signs the user in,
which moves their last sign-in on, so the token no longer matches. The use is checked under
the user's row lock, so two clicks at once sign in once. Issuing and using are audited.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import User
from django.core import signing
from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone

from apps.audit.actors import Actor
from apps.audit.models import Outcome
from apps.audit.services import audit_record

_SALT = "memoryhub.accounts.login_link"


def _last_sign_in(user: User) -> str:
    return user.last_login.isoformat() if user.last_login else ""


def login_link_issue(*, actor: Actor, user: User) -> str:
    """A token for a single-use sign-in link as `user`; audited (without the token)."""
    token = signing.dumps({"user": user.pk, "last": _last_sign_in(user)}, salt=_SALT)
    audit_record(
        actor=actor,
        action="login_link.issue",
        object_type="user",
        object_id=str(user.pk),
        details={"minutes": settings.MEMORYHUB_LOGIN_LINK_MINUTES},
    )
    return token


def login_link_peek(*, token: str) -> User | None:
    """The active user a token names while it is valid and unused (nothing is written)."""
    claims = _claims(token)
    if claims is None:
        return None
    user = User.objects.filter(pk=claims["user"], is_active=True).first()
    return user if user is not None and _last_sign_in(user) == claims["last"] else None


def login_link_use(*, token: str, request: HttpRequest | None) -> User | None:
    """The user the token names, consumed (it will not sign in again); None for a token
    expired, forged, used or of a deactivated user (audited as refused when it names one)."""
    claims = _claims(token)
    if claims is None:
        return None
    with transaction.atomic():
        user = User.objects.select_for_update().filter(pk=claims["user"]).first()
        if user is None:
            return None
        usable = user.is_active and _last_sign_in(user) == claims["last"]
        if usable:
            user.last_login = timezone.now()
            user.save(update_fields=["last_login"])
        audit_record(
            actor=Actor.for_user(user, request),
            action="login_link.use",
            object_type="user",
            object_id=str(user.pk),
            outcome=Outcome.SUCCESS if usable else Outcome.DENIED,
            details={} if usable else {"reason": "used_or_inactive"},
        )
    return user if usable else None


def _claims(token: str) -> dict[str, str | int] | None:
    try:
        claims = signing.loads(
            token, salt=_SALT, max_age=settings.MEMORYHUB_LOGIN_LINK_MINUTES * 60
        )
    except signing.BadSignature:  # SignatureExpired included
        return None
    return claims if isinstance(claims, dict) and {"user", "last"} <= set(claims) else None
