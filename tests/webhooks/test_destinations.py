"""An endpoint whose name resolves to a private address is refused at creation and at every
delivery: a real DNS server on loopback (dnslib, in a thread; MEMORYHUB_WEBHOOK_DNS_RESOLVER
points at it) changes its answer between the two checks (DNS rebinding)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from dnslib import QTYPE, RCODE, RR, A, DNSRecord
from dnslib.server import DNSLogger, DNSServer

from apps.audit.actors import Actor
from apps.memories.services import NewMemory, memory_create
from apps.webhooks.delivery import deliver_due
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint
from tests.conftest import Tenant, api_client, make_api_key

pytestmark = pytest.mark.django_db
NAME = "hooks.example.com"
PUBLIC = "93.184.215.14"


class ChangingResolver:
    """Answers each name with the IPv4 address set for it now (none: NXDOMAIN)."""

    def __init__(self) -> None:
        self.records: dict[str, str] = {}

    def resolve(self, request: DNSRecord, handler: Any) -> DNSRecord:
        reply = request.reply()
        name = str(request.q.qname).rstrip(".").lower()
        if name not in self.records:
            reply.header.rcode = RCODE.NXDOMAIN
        elif request.q.qtype == QTYPE.A:
            reply.add_answer(RR(request.q.qname, QTYPE.A, rdata=A(self.records[name]), ttl=0))
        return reply


@pytest.fixture
def dns(webhook_settings: Any) -> Iterator[ChangingResolver]:
    resolver = ChangingResolver()
    quiet = DNSLogger(log="-request,-reply,-truncated,-error,-recv,-send,-data", prefix=False)
    server = DNSServer(resolver, address="127.0.0.1", port=0, logger=quiet)
    thread = threading.Thread(
        target=server.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    webhook_settings.MEMORYHUB_WEBHOOK_DNS_RESOLVER = f"127.0.0.1:{server.server.server_address[1]}"
    webhook_settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = []
    yield resolver
    server.stop()
    server.server.server_close()


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
    dns.records[NAME] = address
    answer = create(acme)
    assert answer.status_code == 400
    assert answer.json()["error"]["details"] == {"url": ["private_address"]}
    assert WebhookEndpoint.objects.count() == 0


def test_a_name_rebound_to_a_private_address_is_refused_at_delivery(
    acme: Tenant, dns: ChangingResolver
) -> None:
    dns.records[NAME] = PUBLIC
    assert create(acme).status_code == 201
    dns.records[NAME] = "127.0.0.1"  # rebound after the check
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
