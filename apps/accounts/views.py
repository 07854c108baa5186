"""Dashboard account pages that Django's own auth views do not cover."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def locked_out(
    request: HttpRequest, original_response: Any = None, credentials: Any = None
) -> HttpResponse:
    """The login page again, saying why it refuses (django-axes calls it for a locked-out
    account or address, on the dashboard's login and on /django-admin/'s alike)."""
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return render(
        request,
        "accounts/login.html",
        {"form": AuthenticationForm(request), "locked_out_minutes": minutes},
        status=429,
    )
