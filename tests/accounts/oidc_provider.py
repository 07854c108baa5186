"""A real OpenID Connect provider on loopback for the single sign-on tests
(`oidc-provider-mock`): in a thread of the test process for the fast lane, or as a process
of its own for the browser lane. Nothing about HTTP is mocked: discovery, authorization,
tokens, userinfo and JWKS are the provider's.

Its login step is a form: POST `sub=<user>` to the authorization URL. Its users' claims
(groups included) can be changed while it runs: `PUT /users/{sub}`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests
from django.test import override_settings

from apps.pipeline.llm_server import free_port

CLIENT_ID = "memoryhub-dashboard"
CLIENT_SECRET = "memoryhub-dashboard-secret"
ROLE_MAP = json.dumps(
    {
        "memoryhub-admins": [["*", "owner"]],
        "support": [["support", "viewer"]],
        "support-leads": [["support", "editor"]],
    }
)


@dataclass(frozen=True)
class Provider:
    issuer: str

    def set_claims(self, sub: str, **claims: Any) -> None:
        """The user's claims from now on (the next sign-in sees them)."""
        response = requests.put(f"{self.issuer}/users/{sub}", json=claims, timeout=5)
        assert response.status_code == 204, response.text

    def register_client(self, redirect_uri: str) -> tuple[str, str]:
        """Another client of the provider (another audience): its id and secret."""
        response = requests.post(
            f"{self.issuer}/oauth2/clients",
            json={
                "redirect_uris": [redirect_uri],
                "token_endpoint_auth_method": "client_secret_post",
            },
            timeout=5,
        )
        assert response.status_code == 201, response.text
        body = response.json()
        return body["client_id"], body["client_secret"]

    def authorize(self, authorize_url: str, sub: str) -> str:
        """The provider's login form, submitted as `sub`: the redirect to the client's
        callback it answers with (code and state in its query)."""
        response = requests.post(authorize_url, data={"sub": sub}, allow_redirects=False, timeout=5)
        assert response.status_code == 302, response.text[:300]
        return response.headers["Location"]

    def id_token(self, *, client_id: str, client_secret: str, sub: str, nonce: str) -> str:
        """An ID token the provider issues to `client_id` for `sub`, by the code flow."""
        redirect_uri = "http://testserver/accounts/sso/callback/"
        query = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "scope": "openid email profile",
            "state": "s",
            "nonce": nonce,
        }
        authorize = requests.Request(
            "GET", f"{self.issuer}/oauth2/authorize", params=query
        ).prepare()
        callback = self.authorize(str(authorize.url), sub)
        code = parse_qs(urlsplit(callback).query)["code"][0]
        response = requests.post(
            f"{self.issuer}/oauth2/token",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": redirect_uri,
                "client_id": client_id,
                "client_secret": client_secret,
            },
            timeout=5,
        )
        assert response.status_code == 200, response.text
        return str(response.json()["id_token"])


@contextmanager
def provider_in_thread(*, token_max_age: timedelta = timedelta(hours=1)) -> Iterator[Provider]:
    """The provider served by a thread of this process (the fast lane starts no process)."""
    from oidc_provider_mock import run_server_in_thread

    os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"  # plain http on loopback
    with run_server_in_thread(port=0, access_token_max_age=token_max_age) as server:
        yield Provider(issuer=f"http://localhost:{server.server_port}")


@contextmanager
def provider_process() -> Iterator[Provider]:
    """The provider as a process of its own (`python -m oidc_provider_mock`)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    issuer = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            assert process.poll() is None, "oidc-provider-mock stopped while starting"
            try:
                if requests.get(f"{issuer}/.well-known/openid-configuration", timeout=1).ok:
                    break
            except requests.ConnectionError:
                pass
            assert time.monotonic() < deadline, "oidc-provider-mock did not start within 20 s"
            time.sleep(0.1)
        yield Provider(issuer=issuer)
    finally:
        process.terminate()
        process.wait(timeout=10)


@contextmanager
def sso_settings(provider: Provider, **extra: Any) -> Iterator[None]:
    """This server's single sign-on pointed at `provider`, with the tests' role map."""
    from django.core.cache import cache

    with override_settings(
        MEMORYHUB_OIDC_ISSUER=provider.issuer,
        MEMORYHUB_OIDC_CLIENT_ID=CLIENT_ID,
        MEMORYHUB_OIDC_CLIENT_SECRET=CLIENT_SECRET,
        OIDC_RP_CLIENT_ID=CLIENT_ID,
        OIDC_RP_CLIENT_SECRET=CLIENT_SECRET,
        MEMORYHUB_OIDC_NAME="Corp SSO",
        MEMORYHUB_OIDC_ROLE_MAP=ROLE_MAP,
        **extra,
    ):
        cache.delete(f"oidc-discovery:{provider.issuer}")
        yield
