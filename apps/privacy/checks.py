"""Deployment checks of the privacy portal (`manage.py check --deploy`)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, register


@register(Tags.security, deploy=True)
def portal_cookie_secure(**kwargs: Any) -> list[CheckMessage]:
    """The portal's cookie is a bearer key to one person's memories: sent over plain http it
    can be read on the way. It is marked Secure exactly when SESSION_COOKIE_SECURE is on
    (off only in development), so a production deployment without it is an error, not
    Django's warning (W012) about the dashboard's session cookie."""
    if settings.SESSION_COOKIE_SECURE:
        return []
    return [
        Error(
            "The privacy portal's cookie would be sent without the Secure flag.",
            hint="Serve MemoryHub over https and leave SESSION_COOKIE_SECURE on (its default "
            "with DEBUG off).",
            id="privacy.E001",
        )
    ]
