"""Single sign-on through an OpenID Connect provider: its discovery document, and the
authentication backend (mozilla-django-oidc's code flow, with PKCE, state and nonce).

The provider is MEMORYHUB_OIDC_ISSUER. Its endpoints come from its discovery document,
fetched at the first sign-in and cached for an hour (`provider_configuration`); a provider
that can't be reached is `ProviderUnavailable`, which the login page says.

Beyond the library's checks (signature, algorithm, nonce), the ID token must be of this
issuer, for this client (`aud`, and `azp` when there are several audiences), and unexpired:
PyJWT checks them. The user is the issuer and `sub` (apps/accounts/services.py,
`sso_user_sign_in`), never an e-mail address unless verified and allowed.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import jwt
import requests
from django.conf import settings
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.utils import import_from_settings

_DISCOVERY_SECONDS = 3600
# The library's setting names, answered from the discovery document.
_DISCOVERED = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
    "OIDC_OP_TOKEN_ENDPOINT": "token_endpoint",
    "OIDC_OP_USER_ENDPOINT": "userinfo_endpoint",
    "OIDC_OP_JWKS_ENDPOINT": "jwks_uri",
}
_REQUIRED = ("authorization_endpoint", "token_endpoint", "jwks_uri")


class ProviderUnavailable(Exception):
    """The provider's discovery document could not be had (down, or not a provider)."""


def sso_enabled() -> bool:
    return bool(settings.MEMORYHUB_OIDC_ISSUER)


def _cache_key() -> str:
    return f"oidc-discovery:{settings.MEMORYHUB_OIDC_ISSUER}"


def provider_configuration() -> dict[str, Any]:
    """The issuer's discovery document (`/.well-known/openid-configuration`), cached."""
    document = cached_provider_configuration()
    if document is None:
        document = _discover(settings.MEMORYHUB_OIDC_ISSUER)
        cache.set(_cache_key(), document, _DISCOVERY_SECONDS)
    return document


def cached_provider_configuration() -> dict[str, Any] | None:
    """The discovery document if fetched already (never asks the provider)."""
    document: dict[str, Any] | None = cache.get(_cache_key())
    return document


def _discover(issuer: str) -> dict[str, Any]:
    try:
        response = requests.get(
            f"{issuer}/.well-known/openid-configuration", timeout=settings.OIDC_TIMEOUT
        )
        response.raise_for_status()
        document = response.json()
    except (requests.RequestException, ValueError) as error:
        raise ProviderUnavailable(type(error).__name__) from None
    if not isinstance(document, dict) or any(not document.get(name) for name in _REQUIRED):
        raise ProviderUnavailable("incomplete discovery document")
    # OpenID Connect Discovery §4.3: the document's issuer is the one asked.
    if str(document.get("issuer", "")).rstrip("/") != issuer:
        raise ProviderUnavailable("discovery document of another issuer")
    return document


def oidc_setting(attr: str, *args: Any) -> Any:
    """The library's settings, its provider endpoints taken from discovery."""
    if attr in _DISCOVERED:
        found = provider_configuration().get(_DISCOVERED[attr])
        return found if found or not args else args[0]
    return import_from_settings(attr, *args)


def end_session_url(*, id_token: str, after: str) -> str | None:
    """Where to send the browser to sign out at the provider too (RP-initiated logout), if
    it says it can; None otherwise, or when it can't be reached."""
    try:
        endpoint = provider_configuration().get("end_session_endpoint")
    except ProviderUnavailable:
        return None
    if not endpoint:
        return None
    query = urlencode(
        {
            "id_token_hint": id_token,
            "post_logout_redirect_uri": after,
            "client_id": settings.MEMORYHUB_OIDC_CLIENT_ID,
        }
    )
    return f"{endpoint}{'&' if '?' in endpoint else '?'}{query}"


class SsoRefused(Exception):
    """A sign-in the provider's answer does not allow; `reason` is for the audit log."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_REFUSALS = (SsoRefused, ProviderUnavailable, SuspiciousOperation, requests.RequestException)


class SsoBackend(OIDCAuthenticationBackend):
    """The code flow's callback: tokens fetched, the ID token checked, the user found or
    made and their roles matched to their groups. Nothing is asked of the provider until a
    callback arrives (Django builds every backend for each password sign-in too)."""

    get_settings = staticmethod(oidc_setting)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.UserModel = User

    def configure(self) -> None:
        """The provider's endpoints (from discovery) and this client's settings."""
        super().__init__()

    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> User | None:
        if request is None or not sso_enabled() or "code" not in request.GET:
            return None
        from apps.accounts.services import sso_sign_in_refused

        try:
            self.configure()
            user: User | None = super().authenticate(request, **kwargs)
        except _REFUSALS as error:
            reason = sso_failure_reason(error)
            request.sso_refusal = reason  # type: ignore[attr-defined]  # for the callback
            sso_sign_in_refused(request=request, reason=reason)
            return None
        return user

    def get_payload_data(self, token: bytes | str, key: Any) -> dict[str, Any]:
        """The ID token's claims, once its signature, issuer, audience and expiry are good."""
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[self.OIDC_RP_SIGN_ALGO],
                audience=settings.MEMORYHUB_OIDC_CLIENT_ID,
                issuer=settings.MEMORYHUB_OIDC_ISSUER,
                leeway=settings.OIDC_CLOCK_SKEW_SECONDS,
                options={"require": ["exp", "iat", "iss", "aud", "sub"]},
            )
        except jwt.ExpiredSignatureError:
            raise SsoRefused("token_expired") from None
        except jwt.InvalidAudienceError:
            raise SsoRefused("token_audience") from None
        except jwt.InvalidIssuerError:
            raise SsoRefused("token_issuer") from None
        except jwt.PyJWTError:
            raise SsoRefused("token_invalid") from None
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        if len(audiences) > 1 and claims.get("azp") != settings.MEMORYHUB_OIDC_CLIENT_ID:
            raise SsoRefused("token_audience")
        return claims

    def retrieve_matching_jwk(self, token: bytes | str) -> jwt.PyJWK:
        """The provider's signing key for `token`: the one its `kid` names or, for a token
        without one, the provider's only key of the token's algorithm."""
        response = requests.get(self.OIDC_OP_JWKS_ENDPOINT, timeout=settings.OIDC_TIMEOUT)
        response.raise_for_status()
        header = jwt.get_unverified_header(token)
        keys = [
            key
            for key in response.json().get("keys", [])
            if key.get("alg", header.get("alg")) == header.get("alg")
            and ("kid" not in header or key.get("kid") == header["kid"])
        ]
        if len(keys) != 1:
            raise SsoRefused("token_key")
        return jwt.PyJWK(keys[0])

    def get_or_create_user(
        self, access_token: str, id_token: str, payload: dict[str, Any]
    ) -> User | None:
        from apps.accounts.services import sso_user_sign_in

        claims = dict(payload)
        if self.OIDC_OP_USER_ENDPOINT:
            userinfo = self.get_userinfo(access_token, id_token, payload)
            # OpenID Connect Core §5.3.2: userinfo of another `sub` is not this person's.
            if userinfo.get("sub") != payload["sub"]:
                raise SsoRefused("userinfo_subject")
            claims.update(userinfo)
        return sso_user_sign_in(request=self.request, claims=claims)


def sso_failure_reason(error: BaseException) -> str:
    """A refusal's reason for the audit log (never the provider's message, which may quote
    a token)."""
    if isinstance(error, SsoRefused):
        return error.reason
    if isinstance(error, (ProviderUnavailable, requests.ConnectionError, requests.Timeout)):
        return "provider_unavailable"
    if isinstance(error, requests.RequestException):
        return "provider_error"
    if isinstance(error, SuspiciousOperation):
        return "token_invalid"
    return "error"
