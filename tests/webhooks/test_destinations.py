"""An endpoint whose name resolves to a private address is refused at creation and at every
delivery: a real DNS server on loopback (dnslib, in a thread; MEMORYHUB_WEBHOOK_DNS_RESOLVER
points at it) changes its answer between the two checks (DNS rebinding)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from apps.audit.actors import Actor
from apps.memories.services import NewMemory, memory_create
from apps.webhooks.delivery import deliver_due
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint
from tests.conftest import Tenant, api_client, make_api_key
from tests.dns_server import ChangingResolver, dns_server

pytestmark = pytest.mark.django_db
NAME = "hooks.example.com"
PUBLIC = "93.184.215.14"


@pytest.fixture
def dns(webhook_settings: Any) -> Iterator[ChangingResolver]:
    with dns_server(webhook_settings) as resolver:
        yield resolver


def create(tenant: Tenant) -> Any:
    client = api_client(make_api_key([tenant.namespace], ["webhooks:admin"], name="hooks"))
    return client.post(
        tenant.url("webhooks"),
        {"url": f"https://{NAME}/hooks", "events": ["memory.created"]},
        format="json",
    )


@pytest.mark.parametrize("address", ["10.1.2.3", "127.0.0.1", "169.254.169.254"])
def test_a_name_resolving_to_a_private_address_is_refused_at_creation(
    acme: Tenant, dns: ChangingResolver, address: str
) -> None:
    dns.point(NAME, address)
    answer = create(acme)
    assert answer.status_code == 400
    assert answer.json()["error"]["details"] == {"url": ["private_address"]}
    assert WebhookEndpoint.objects.count() == 0


def test_a_name_rebound_to_a_private_address_is_refused_at_delivery(
    acme: Tenant, dns: ChangingResolver
) -> None:
    dns.point(NAME, PUBLIC)
    assert create(acme).status_code == 201
    dns.point(NAME, "127.0.0.1")  # rebound after the check
    acme.namespace.refresh_from_db()  # as a request would load it, with its endpoint count
    memory_create(
        actor=Actor.system("tests"),
        namespace=acme.namespace,
        item=NewMemory(subject_external_id="u1", content="Likes tea"),
    )
    assert deliver_due() == 1
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == "pending"
    assert delivery.tries.get().error == "private_address"
    assert delivery.tries.get().status_code is None
