"""Failed dashboard logins are limited per account and per address (django-axes), on the
dashboard's login and /django-admin/'s alike; a refusal says why and is audited."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from apps.audit.models import AuditEvent, Outcome

LOGIN = "/accounts/login/"
ADMIN_LOGIN = "/django-admin/login/"


@pytest.fixture(autouse=True)
def limit(settings: Any) -> None:
    settings.AXES_FAILURE_LIMIT = 5


@pytest.fixture
def bob(db: None) -> User:
    return User.objects.create_user("bob", "bob@example.com", "bob-password-1", is_staff=True)


def attempt(client: Client, path: str, username: str, password: str, ip: str) -> Any:
    return client.post(path, {"username": username, "password": password}, REMOTE_ADDR=ip)


def logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


@pytest.mark.django_db
def test_the_right_password_after_too_many_wrong_ones_is_refused(bob: User) -> None:
    client = Client()
    statuses = [attempt(client, LOGIN, "bob", "wrong", "10.0.0.1").status_code for _ in range(12)]
    assert statuses == [200] * 4 + [429] * 8  # the fifth failure locks
    response = attempt(client, LOGIN, "bob", "bob-password-1", "10.0.0.1")
    assert response.status_code == 429
    assert b"Too many failed logins" in response.content
    assert not logged_in(client)


@pytest.mark.django_db
def test_an_account_is_locked_from_every_address(bob: User) -> None:
    for n in range(5):
        attempt(Client(), LOGIN, "bob", "wrong", f"10.0.1.{n}")
    client = Client()
    response = attempt(client, LOGIN, "bob", "bob-password-1", "10.0.1.99")
    assert response.status_code == 429
    assert not logged_in(client)


@pytest.mark.django_db
def test_an_address_is_locked_whatever_the_account(bob: User) -> None:
    for n in range(5):
        attempt(Client(), LOGIN, f"guess-{n}", "wrong", "10.0.2.1")
    client = Client()
    response = attempt(client, LOGIN, "bob", "bob-password-1", "10.0.2.1")
    assert response.status_code == 429
    assert not logged_in(client)


@pytest.mark.django_db
def test_fewer_failures_than_the_limit_still_let_the_right_password_in(bob: User) -> None:
    client = Client()
    for _ in range(4):
        attempt(client, LOGIN, "bob", "wrong", "10.0.3.1")
    response = attempt(client, LOGIN, "bob", "bob-password-1", "10.0.3.1")
    assert response.status_code == 302
    assert logged_in(client)


@pytest.mark.django_db
def test_the_django_admin_login_is_limited_too(bob: User) -> None:
    client = Client()
    for _ in range(12):
        attempt(client, ADMIN_LOGIN, "bob", "wrong", "10.0.4.1")
    response = attempt(client, ADMIN_LOGIN, "bob", "bob-password-1", "10.0.4.1")
    assert response.status_code == 429
    assert not logged_in(client)


@pytest.mark.django_db
def test_a_locked_out_login_is_audited_without_the_password(bob: User) -> None:
    client = Client()
    for _ in range(6):
        attempt(client, LOGIN, "bob", "wrong-secret-9", "10.0.5.1")
    events = AuditEvent.objects.filter(action="login.locked_out")
    assert events.exists()
    event = events.first()
    assert event is not None
    assert (event.outcome, event.actor_id, event.ip) == (Outcome.DENIED, "bob", "10.0.5.1")
    assert event.details == {"reason": "too_many_failed_logins"}
    assert not AuditEvent.objects.filter(details__icontains="wrong-secret-9").exists()
