"""The API-keys pages' cast: in namespace acme, Olive owns, Eddie edits, Vera views; Oscar
owns globex only; Nina is a member of nothing; Root is a superuser. Three keys: one of acme
(made by Olive), one of globex (made by Oscar), and one shared by both (made by Root)."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.test import Client

from apps.accounts.models import ApiKey
from apps.accounts.services import api_key_create
from apps.audit.actors import Actor
from apps.namespaces.models import Namespace
from apps.namespaces.services import membership_set, namespace_create

ROLES = {"olive": "owner", "eddie": "editor", "vera": "viewer"}


@dataclass
class KeyCast:
    acme: Namespace
    globex: Namespace
    users: dict[str, User]
    acme_key: ApiKey  # acme; memories:read and context
    globex_key: ApiKey
    shared_key: ApiKey  # acme and globex
    acme_raw: str

    def client(self, name: str) -> Client:
        client = Client()
        client.force_login(self.users[name])
        return client


def build_key_cast(*, password: str | None = None) -> KeyCast:
    """The cast's rows. Without a password (force_login) users cost nothing to create."""
    system = Actor.system("tests")
    acme = namespace_create(actor=system, slug="acme", name="Acme")
    globex = namespace_create(actor=system, slug="globex", name="Globex")
    users = {
        name: User.objects.create_user(name, f"{name}@example.com", password)
        for name in ("olive", "eddie", "vera", "oscar", "nina")
    }
    users["root"] = User.objects.create_superuser("root", "root@example.com", password)
    for name, role in ROLES.items():
        membership_set(actor=system, namespace=acme, user=users[name], role=role)
    membership_set(actor=system, namespace=globex, user=users["oscar"], role="owner")
    acme_key, acme_raw = api_key_create(
        actor=Actor.for_user(users["olive"]),
        name="Acme support bot",
        namespaces=[acme],
        permissions=["memories:read", "context"],
    )
    globex_key, _ = api_key_create(
        actor=Actor.for_user(users["oscar"]),
        name="Globex planner",
        namespaces=[globex],
        permissions=["memories:write"],
    )
    shared_key, _ = api_key_create(
        actor=Actor.for_user(users["root"]),
        name="Cross-tenant importer",
        namespaces=[acme, globex],
        permissions=["memories:write"],
    )
    return KeyCast(
        acme=acme,
        globex=globex,
        users=users,
        acme_key=acme_key,
        globex_key=globex_key,
        shared_key=shared_key,
        acme_raw=acme_raw,
    )
