"""Behind MEMORYHUB_TRUSTED_PROXIES proxies, per-address limits and the audit log use the
client's address from X-Forwarded-For, never a client's own claim and never the proxy."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client, RequestFactory

from apps.audit.models import AuditEvent
from memoryhub.client_address import client_address


def request_from(remote: str, forwarded: str | None = None) -> Any:
    headers = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        headers["HTTP_X_FORWARDED_FOR"] = forwarded
    return RequestFactory().get("/", **headers)


@pytest.mark.parametrize(
    ("proxies", "forwarded", "expected"),
    [
        (0, "198.51.100.7", "10.0.0.1"),  # no proxy trusted: the header is the client's claim
        (1, "198.51.100.7", "198.51.100.7"),
        (1, "6.6.6.6, 198.51.100.7", "198.51.100.7"),  # a forged first entry is ignored
        (2, "198.51.100.7, 10.0.0.9", "198.51.100.7"),
        (2, "10.0.0.9", "10.0.0.1"),  # fewer entries than proxies: REMOTE_ADDR
        (1, None, "10.0.0.1"),
    ],
)
def test_the_client_address_is_the_one_the_outermost_trusted_proxy_saw(
    settings: Any, proxies: int, forwarded: str | None, expected: str
) -> None:
    settings.MEMORYHUB_TRUSTED_PROXIES = proxies
    assert client_address(request_from("10.0.0.1", forwarded)) == expected


@pytest.mark.django_db
def test_behind_a_proxy_one_clients_failures_do_not_lock_out_another(settings: Any) -> None:
    settings.MEMORYHUB_TRUSTED_PROXIES = 1
    settings.AXES_FAILURE_LIMIT = 3
    User.objects.create_user("bob", password="bob-password-1")
    attacker = Client(REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.66")
    for n in range(5):
        attacker.post("/accounts/login/", {"username": f"guess-{n}", "password": "x"})
    bob = Client(REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="198.51.100.7")
    response = bob.post("/accounts/login/", {"username": "bob", "password": "bob-password-1"})
    assert response.status_code == 302  # the proxy's address is not the one locked
    locked = AuditEvent.objects.filter(action="login.locked_out").first()
    assert locked is not None
    assert locked.ip == "203.0.113.66"
