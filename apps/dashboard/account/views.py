"""Signing in and out, and an invited person's first password: Django's auth views with the
dashboard's templates, and the login page again for a locked-out account. Single sign-on's
start and callback (mozilla-django-oidc's views, the provider found by discovery), sign-out
at the provider too, and the break-glass login link of `manage.py login_link`."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import auth
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods
from mozilla_django_oidc.views import (
    OIDCAuthenticationCallbackView,
    OIDCAuthenticationRequestView,
)

from apps.accounts.login_links import login_link_peek
from apps.accounts.oidc import (
    ProviderUnavailable,
    end_session_url,
    oidc_setting,
    provider_configuration,
    sso_enabled,
)
from apps.accounts.services import sso_sign_in_refused
from apps.namespaces.selectors import namespaces_for_user


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


# Why a single sign-on came back to the login page: ?sso=<reason>.
SSO_MESSAGES = {"unavailable", "failed"}


class LoginView(auth_views.LoginView):
    """The password form (unless MEMORYHUB_PASSWORD_LOGIN=false) and, with an issuer set,
    "Sign in with …"."""

    template_name = "dashboard/account/login.html"
    redirect_authenticated_user = True

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        sso_message = self.request.GET.get("sso", "")
        context.update(
            sso_enabled=sso_enabled(),
            sso_name=settings.MEMORYHUB_OIDC_NAME,
            password_login=settings.MEMORYHUB_PASSWORD_LOGIN,
            sso_message=sso_message if sso_message in SSO_MESSAGES else "",
        )
        return context

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not settings.MEMORYHUB_PASSWORD_LOGIN:
            context = self.get_context_data(password_refused=True)
            return self.render_to_response(context, status=403)
        return super().post(request, *args, **kwargs)


class LogoutView(auth_views.LogoutView):
    """Sign out here and, after a single sign-on, at the provider too where it can (its
    end_session_endpoint), which sends the browser back to the login page."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        id_token = request.session.get("oidc_id_token")
        response = super().post(request, *args, **kwargs)
        if id_token and sso_enabled():
            after = request.build_absolute_uri(reverse(settings.LOGOUT_REDIRECT_URL))
            at_provider = end_session_url(id_token=id_token, after=after)
            if at_provider:
                return HttpResponseRedirect(at_provider)
        return response


def _login_page(reason: str) -> HttpResponseRedirect:
    return HttpResponseRedirect(f"{reverse(settings.LOGIN_URL)}?{urlencode({'sso': reason})}")


class SsoStartView(OIDCAuthenticationRequestView):
    """ "Sign in with …": to the provider's authorization endpoint, with state, nonce and a
    PKCE challenge kept in the session."""

    get_settings = staticmethod(oidc_setting)

    def __init__(self, **kwargs: Any) -> None:  # the endpoints are found in get()
        super(OIDCAuthenticationRequestView, self).__init__(**kwargs)

    def get(self, request: HttpRequest) -> HttpResponse:
        if not sso_enabled():
            raise Http404("Single sign-on is not configured.")
        try:
            self.OIDC_OP_AUTH_ENDPOINT = provider_configuration()["authorization_endpoint"]
        except ProviderUnavailable:
            return _login_page("unavailable")
        self.OIDC_RP_CLIENT_ID = settings.MEMORYHUB_OIDC_CLIENT_ID
        response: HttpResponse = super().get(request)
        return response


class SsoCallbackView(OIDCAuthenticationCallbackView):
    """The provider's answer: signed in (to the overview, or to a page saying no group
    grants a namespace yet), or back to the login page saying why not."""

    get_settings = staticmethod(oidc_setting)

    def get(self, request: HttpRequest) -> HttpResponse:
        if not sso_enabled():
            raise Http404("Single sign-on is not configured.")
        try:
            response: HttpResponse = super().get(request)
        except SuspiciousOperation:  # a state this browser's session never sent
            sso_sign_in_refused(request=request, reason="state")
            return _login_page("failed")
        return response

    def login_failure(self) -> HttpResponse:
        reason = getattr(self.request, "sso_refusal", "")
        return _login_page("unavailable" if reason == "provider_unavailable" else "failed")

    def login_success(self) -> HttpResponse:
        response: HttpResponse = super().login_success()
        if not namespaces_for_user(self.user).exists():
            return redirect("dashboard:account:no_namespace")
        return response


@never_cache
def no_namespace(request: HttpRequest) -> HttpResponse:
    """After a single sign-on that grants no namespace: says so, and what to ask for."""
    if not request.user.is_authenticated:
        return redirect(settings.LOGIN_URL)
    return render(
        request,
        "dashboard/account/no_namespace.html",
        {"sso_name": settings.MEMORYHUB_OIDC_NAME},
    )


@never_cache
@require_http_methods(["GET", "POST"])
def login_link(request: HttpRequest, token: str) -> HttpResponse:
    """A break-glass link: GET names the account and asks for a click (a link previewer
    must not use it up); POST signs in, once."""
    if request.method == "POST":
        user = auth.authenticate(request, login_link=token)
        if user is not None:
            auth.login(request, user, backend="apps.accounts.backends.LoginLinkBackend")
            return redirect(settings.LOGIN_REDIRECT_URL)
    else:
        user = login_link_peek(token=token)
    status = 200 if user is not None else 410
    return render(request, "dashboard/account/login_link.html", {"link_user": user}, status=status)


class SetPasswordView(auth_views.PasswordResetConfirmView):
    """An invited user's one-time link: Django's password-reset token, void once used."""

    template_name = "dashboard/account/set_password.html"
    success_url = reverse_lazy("dashboard:account:login")
    post_reset_login = False
