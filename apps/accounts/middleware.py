"""With single sign-on, the provider is a form's destination too: the dashboard's sign-out
form is redirected to its end_session_endpoint, and CSP's form-action governs where a
form's redirects may go. Each answer's form-action gets that origin (with the issuer's)."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from apps.accounts.oidc import cached_provider_configuration, sso_enabled


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def sso_form_action_middleware(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        if not sso_enabled():
            return response
        # Discovered at the first sign-in: a sign-out always comes after one.
        document = cached_provider_configuration() or {}
        end_session = str(document.get("end_session_endpoint") or "")
        origins = {_origin(settings.MEMORYHUB_OIDC_ISSUER)}
        if end_session:
            origins.add(_origin(end_session))
        update = dict(getattr(response, "_csp_update", None) or {})
        update["form-action"] = [*update.get("form-action", []), *sorted(origins)]
        response._csp_update = update  # type: ignore[attr-defined]
        return response

    return middleware
