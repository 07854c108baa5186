"""Signing in and out, and an invited person's first password: Django's auth views with the
dashboard's templates, and the login page again for a locked-out account."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse_lazy


def locked_out(
    request: HttpRequest, original_response: Any = None, credentials: Any = None
) -> HttpResponse:
    """The login page again, saying why it refuses (django-axes calls it for a locked-out
    account or address, on the dashboard's login and on /django-admin/'s alike)."""
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return render(
        request,
        "dashboard/account/login.html",
        {"form": AuthenticationForm(request), "locked_out_minutes": minutes},
        status=429,
    )


class LoginView(auth_views.LoginView):
    template_name = "dashboard/account/login.html"
    redirect_authenticated_user = True


class LogoutView(auth_views.LogoutView):
    pass


class SetPasswordView(auth_views.PasswordResetConfirmView):
    """An invited user's one-time link: Django's password-reset token, void once used."""

    template_name = "dashboard/account/set_password.html"
    success_url = reverse_lazy("dashboard:account:login")
    post_reset_login = False
