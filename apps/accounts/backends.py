"""The dashboard's ways in besides single sign-on (apps/accounts/oidc.py): a password, unless
MEMORYHUB_PASSWORD_LOGIN=false, and the single-use link of `manage.py login_link`."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import User
from django.http import HttpRequest

from apps.accounts.login_links import login_link_use


class PasswordBackend(ModelBackend):
    """Django's user name and password, refused everywhere (the dashboard's login page and
    /django-admin/'s alike) when MEMORYHUB_PASSWORD_LOGIN is false."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> User | None:
        if not settings.MEMORYHUB_PASSWORD_LOGIN:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


class LoginLinkBackend(ModelBackend):
    """A login link's token (`manage.py login_link`): the user it names, once."""

    def authenticate(  # type: ignore[override]
        self, request: HttpRequest | None, login_link: str | None = None, **kwargs: Any
    ) -> User | None:
        if login_link is None:
            return None
        return login_link_use(token=login_link, request=request)
