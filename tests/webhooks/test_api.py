"""The webhooks API: `webhooks:admin`, scoped to the key's namespace (another's endpoint is a
404), one error shape, secrets shown once, every write audited."""

from __future__ import annotations

from typing import Any

import pytest

from apps.audit.models import AuditEvent
from apps.memories.models import Subject
from apps.webhooks.delivery import deliver_due
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint
from tests.conftest import Tenant, api_client, make_api_key
from tests.webhooks.conftest import Receiver

pytestmark = pytest.mark.django_db
ADMIN = ["webhooks:admin", "memories:read"]


def admin_client(tenant: Tenant, permissions: list[str] | None = None) -> Any:
    return api_client(make_api_key([tenant.namespace], permissions or ADMIN, name="hooks"))


def create(client: Any, tenant: Tenant, url: str, **body: Any) -> Any:
    return client.post(
        tenant.url("webhooks"), {"url": url, "events": ["memory.created"], **body}, format="json"
    )


def test_it_creates_an_endpoint_and_shows_its_secret_once(acme: Tenant, receiver: Receiver) -> None:
    client = admin_client(acme)
    created = create(client, acme, receiver.url)
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["secret"].startswith("whsec_")
    assert body["events"] == ["memory.created"]
    assert body["include_content"] is False
    listed = client.get(acme.url("webhooks")).json()
    assert [e["id"] for e in listed] == [body["id"]]
    assert "secret" not in listed[0]
    endpoint = WebhookEndpoint.objects.get()
    assert body["secret"].encode() not in bytes(endpoint.secret_encrypted)
    event = AuditEvent.objects.get(action="webhook.create")
    assert event.object_id == body["id"]
    assert body["secret"] not in str(event.details)


def test_it_needs_the_webhooks_permission(acme: Tenant, receiver: Receiver) -> None:
    client = admin_client(acme, ["memories:read", "memories:write"])
    refused = create(client, acme, receiver.url)
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "permission_denied"
    assert AuditEvent.objects.filter(
        outcome="denied", details__reason="missing_permission:webhooks:admin"
    ).exists()
    assert client.get(acme.url("webhooks")).status_code == 403


def test_another_namespace_s_endpoint_is_not_found(
    acme: Tenant, globex: Tenant, receiver: Receiver
) -> None:
    theirs = create(admin_client(globex), globex, receiver.url).json()["id"]
    client = admin_client(acme)
    for method, path in [
        ("delete", f"webhooks/{theirs}"),
        ("post", f"webhooks/{theirs}/rotate-secret"),
        ("post", f"webhooks/{theirs}/test"),
        ("get", f"webhooks/{theirs}/deliveries"),
        ("post", f"webhooks/{theirs}/deliveries/{theirs}/redeliver"),
        ("delete", "webhooks/not-a-uuid"),
    ]:
        answer = getattr(client, method)(acme.url(path))
        assert answer.status_code == 404, (method, path)
        assert answer.json()["error"]["code"] == "not_found"
    # Nor through globex's URL with acme's key.
    assert client.get(globex.url("webhooks")).status_code == 404
    assert WebhookEndpoint.objects.filter(pk=theirs).exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"events": ["memory.exploded"]}, "events"),
        ({"events": []}, "events"),
        ({"url": ""}, "url"),
        ({"include_content": "perhaps"}, "include_content"),
    ],
)
def test_bad_input_gets_the_one_error_shape(
    acme: Tenant, receiver: Receiver, body: dict[str, Any], field: str
) -> None:
    answer = admin_client(acme).post(
        acme.url("webhooks"),
        {"url": receiver.url, "events": ["memory.created"], **body},
        format="json",
    )
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert set(error) >= {"code", "message", "details"}
    assert field in error["details"]


def test_it_refuses_http_to_a_host_not_listed(acme: Tenant, receiver: Receiver, settings) -> None:
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = []
    answer = create(admin_client(acme), acme, receiver.url)
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "unsafe_url"
    assert WebhookEndpoint.objects.count() == 0


def test_include_content_needs_a_key_that_reads_memories(acme: Tenant, receiver: Receiver) -> None:
    client = admin_client(acme, ["webhooks:admin"])
    answer = create(client, acme, receiver.url, include_content=True)
    assert answer.status_code == 403
    assert answer.json()["error"]["details"] == {"include_content": ["needs memories:read"]}
    assert create(client, acme, receiver.url).status_code == 201


def test_a_test_event_is_logged_with_its_attempts_and_can_be_redelivered(
    acme: Tenant, receiver: Receiver
) -> None:
    client = admin_client(acme)
    endpoint = create(client, acme, receiver.url).json()
    sent = client.post(acme.url(f"webhooks/{endpoint['id']}/test"))
    assert sent.status_code == 202
    assert sent.json()["event_type"] == "webhook.test"
    deliver_due()
    assert receiver.verified(endpoint["secret"])[0]["type"] == "webhook.test"
    log = client.get(acme.url(f"webhooks/{endpoint['id']}/deliveries")).json()
    (delivery,) = log["results"]
    assert delivery["status"] == "delivered"
    (attempt,) = delivery["attempts"]
    assert attempt["status_code"] == 200
    assert attempt["response_body"] == "ok " * 10
    again = client.post(
        acme.url(f"webhooks/{endpoint['id']}/deliveries/{delivery['id']}/redeliver")
    )
    assert again.status_code == 202
    assert again.json()["status"] == "pending"
    deliver_due()
    ids = [a.headers["webhook-id"] for a in receiver.arrivals]
    assert ids == [delivery["webhook_id"]] * 2
    actions = set(AuditEvent.objects.values_list("action", flat=True))
    assert {"webhook.test", "webhook.redeliver"} <= actions


def test_rotating_answers_a_new_secret(acme: Tenant, receiver: Receiver) -> None:
    client = admin_client(acme)
    endpoint = create(client, acme, receiver.url).json()
    rotated = client.post(acme.url(f"webhooks/{endpoint['id']}/rotate-secret"))
    assert rotated.status_code == 200
    assert rotated.json()["secret"] != endpoint["secret"]
    assert rotated.json()["previous_secret_until"]


def test_deleting_removes_the_endpoint_its_deliveries_and_is_audited(
    acme: Tenant, receiver: Receiver
) -> None:
    client = admin_client(acme)
    endpoint = create(client, acme, receiver.url).json()
    acme.client.post(acme.url("memories"), {"subject": "u1", "content": "x"}, format="json")
    assert WebhookDelivery.objects.count() == 1
    assert client.delete(acme.url(f"webhooks/{endpoint['id']}")).status_code == 204
    assert WebhookEndpoint.objects.count() == WebhookDelivery.objects.count() == 0
    assert AuditEvent.objects.get(action="webhook.delete").details == {"pending_deliveries": 1}
    acme.namespace.refresh_from_db()
    assert acme.namespace.webhook_endpoints == 0
    assert Subject.objects.filter(namespace=acme.namespace).count() == 1
