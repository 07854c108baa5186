"""MEMORYHUB_PASSWORD_LOGIN=false: the login page offers single sign-on only and no password
signs in anywhere (/django-admin/ included); `manage.py login_link USER` prints the
break-glass way in: a link that works once, for a limited time, audited."""

from __future__ import annotations

import io
import time
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client, override_settings

from apps.audit.models import AuditEvent, Outcome

pytestmark = pytest.mark.django_db
PASSWORD = "pw-root-12345"


@pytest.fixture
def root(db: None) -> User:
    return User.objects.create_superuser("root", "root@example.com", PASSWORD)


@pytest.fixture
def password_login_off() -> Any:
    with override_settings(MEMORYHUB_PASSWORD_LOGIN=False) as overridden:
        yield overridden


def login_link(username: str) -> str:
    out = io.StringIO()
    call_command("login_link", username, "--base-url", "https://memory.example.com", stdout=out)
    url = out.getvalue().strip().splitlines()[-1]
    assert url.startswith("https://memory.example.com/accounts/login-link/")
    return urlsplit(url).path


def test_it_refuses_every_password_while_off(root: User, password_login_off: Any) -> None:
    client = Client()
    page = client.get("/accounts/login/").content.decode()
    assert 'id="id_password"' not in page
    assert "no single sign-on is configured" in page
    refused = client.post("/accounts/login/", {"username": "root", "password": PASSWORD})
    assert refused.status_code == 403
    assert "Signing in with a password is turned off here" in refused.content.decode()
    admin = client.post("/django-admin/login/", {"username": "root", "password": PASSWORD})
    assert admin.status_code == 200  # the admin's form again: not signed in
    assert "_auth_user_id" not in client.session


def test_a_password_signs_in_while_on(root: User) -> None:
    client = Client()
    response = client.post("/accounts/login/", {"username": "root", "password": PASSWORD})
    assert response.status_code == 302
    assert "_auth_user_id" in client.session


def test_a_login_link_signs_in_once(root: User, password_login_off: Any) -> None:
    path = login_link("root")
    client = Client()
    confirm = client.get(path)  # a link previewer's GET uses nothing up
    assert confirm.status_code == 200
    assert "Sign in as root" in confirm.content.decode()
    chinese = client.get(path, HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert "以 root 身份登录" in chinese
    assert "_auth_user_id" not in client.session
    response = client.post(path)
    assert response.status_code == 302
    assert response["Location"] == "/"
    assert client.session["_auth_user_id"] == str(root.pk)
    again = Client()
    assert again.get(path).status_code == 410
    assert again.post(path).status_code == 410
    assert "_auth_user_id" not in again.session
    events = list(AuditEvent.objects.filter(object_id=str(root.pk)).order_by("id"))
    assert [(e.action, e.outcome) for e in events] == [
        ("login_link.issue", Outcome.SUCCESS),
        ("login_link.use", Outcome.SUCCESS),
        ("login_link.use", Outcome.DENIED),
    ]
    assert events[0].actor_name == "manage.py login_link"


def test_a_login_link_expires(root: User) -> None:
    with override_settings(MEMORYHUB_LOGIN_LINK_MINUTES=0):
        path = login_link("root")
        time.sleep(1.1)
        client = Client()
        assert client.post(path).status_code == 410
    assert "_auth_user_id" not in client.session


def test_a_forged_login_link_signs_nobody_in(root: User) -> None:
    path = login_link("root")
    forged = path[:-3] + ("A" if path[-3] != "A" else "B") + path[-2:]
    client = Client()
    assert client.post(forged).status_code == 410
    assert "_auth_user_id" not in client.session


def test_a_login_link_for_an_unknown_user_is_an_error(root: User) -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="No active user 'nobody'"):
        call_command("login_link", "nobody")
