"""API keys: the raw key is shown once and never stored; the command's key works until revoked."""

from __future__ import annotations

import hashlib
import io

import pytest
from django.core.management import call_command

from apps.accounts.models import ApiKey
from apps.accounts.selectors import RAW_KEY_PATTERN
from apps.accounts.services import api_key_revoke
from apps.audit.actors import Actor
from tests.conftest import Tenant, api_client
from tests.scanning import columns_containing


def split(raw: str) -> tuple[str, str]:
    match = RAW_KEY_PATTERN.match(raw)
    assert match is not None, "not shaped like a raw key"
    return match.group("prefix"), match.group("secret")


@pytest.mark.django_db
def test_the_database_scan_finds_a_string_stored_in_a_column(acme: Tenant) -> None:
    prefix, secret = split(acme.raw_key)
    ApiKey.objects.filter(prefix=prefix).update(name=f"oops {secret}")
    assert columns_containing(secret) == ["accounts_apikey.name (1 rows)"]


@pytest.mark.django_db
def test_the_raw_key_and_its_secret_are_stored_nowhere(acme: Tenant) -> None:
    _, secret = split(acme.raw_key)
    # Use the key (authenticates, marks it used), then fail with it once revoked (audited).
    assert acme.client.get(acme.url("memories")).status_code == 200
    api_key_revoke(actor=Actor.system("tests"), api_key=ApiKey.objects.get())
    assert acme.client.get(acme.url("memories")).status_code == 401
    assert columns_containing(acme.raw_key) == []
    assert columns_containing(secret) == []


@pytest.mark.django_db
def test_only_the_prefix_and_the_sha256_of_the_secret_are_stored(acme: Tenant) -> None:
    prefix, secret = split(acme.raw_key)
    stored = ApiKey.objects.get()
    assert stored.prefix == prefix
    assert stored.secret_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in {str(value) for value in stored.__dict__.values()}


def create_key_with_commands(slug: str = "initech") -> str:
    call_command("create_namespace", slug, stdout=io.StringIO())
    out = io.StringIO()
    call_command(
        "create_api_key",
        "--namespace",
        slug,
        "--permissions",
        "memories:read,memories:write",
        stdout=out,
        stderr=io.StringIO(),
    )
    lines = out.getvalue().rstrip("\n").split("\n")
    return lines[-1]


@pytest.mark.django_db
def test_create_api_key_prints_the_raw_key_alone_on_its_last_line() -> None:
    raw = create_key_with_commands()
    prefix, _ = split(raw)  # the whole line matches ^mh_<prefix>_<secret>$
    assert ApiKey.objects.get().prefix == prefix


@pytest.mark.django_db
def test_the_key_from_the_command_authenticates_against_the_api() -> None:
    raw = create_key_with_commands()
    response = api_client(raw).get("/api/v1/namespaces/initech/memories")
    assert response.status_code == 200, response.content


@pytest.mark.django_db
def test_a_revoked_key_no_longer_authenticates() -> None:
    raw = create_key_with_commands()
    client = api_client(raw)
    assert client.get("/api/v1/namespaces/initech/memories").status_code == 200
    api_key_revoke(actor=Actor.system("tests"), api_key=ApiKey.objects.get())
    assert client.get("/api/v1/namespaces/initech/memories").status_code == 401
