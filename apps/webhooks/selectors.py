"""Reads of webhook endpoints and their deliveries, scoped by namespace: another
namespace's endpoint or delivery is not found (404), exactly like one that does not exist."""

from __future__ import annotations

import uuid

from django.db.models import Prefetch, QuerySet
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.memories.row_encryption import KeyCache, open_field
from apps.namespaces.models import Namespace
from apps.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from memoryhub.exceptions import NotFound


def _uuid(value: object, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise NotFound(what) from None


def endpoint_list(*, namespace: Namespace) -> QuerySet[WebhookEndpoint]:
    return WebhookEndpoint.objects.filter(namespace=namespace).order_by("created_at", "id")


def endpoints_failing(*, namespace: Namespace) -> QuerySet[WebhookEndpoint]:
    """The endpoints a delivery gave up on, until their next success."""
    return endpoint_list(namespace=namespace).filter(failing_since__isnull=False)


def endpoint_get(*, namespace: Namespace, endpoint_id: object) -> WebhookEndpoint:
    missing = gettext_noop("Webhook endpoint not found.")
    endpoint = (
        WebhookEndpoint.objects.filter(namespace=namespace, pk=_uuid(endpoint_id, missing))
        .select_related("namespace")
        .first()
    )
    if endpoint is None:
        raise NotFound(missing)
    return endpoint


def delivery_list(*, endpoint: WebhookEndpoint) -> QuerySet[WebhookDelivery]:
    """The endpoint's deliveries, newest first, each with its event and attempts."""
    return (
        WebhookDelivery.objects.filter(namespace_id=endpoint.namespace_id, endpoint=endpoint)
        .select_related("event")
        .prefetch_related(
            Prefetch("tries", queryset=WebhookAttempt.objects.order_by("started_at", "id"))
        )
    )


def delivery_get(*, endpoint: WebhookEndpoint, delivery_id: object) -> WebhookDelivery:
    missing = gettext_noop("Delivery not found.")
    delivery = (
        WebhookDelivery.objects.filter(
            namespace_id=endpoint.namespace_id,
            endpoint=endpoint,
            pk=_uuid(delivery_id, missing),
        )
        .select_related("event", "endpoint", "endpoint__namespace")
        .first()
    )
    if delivery is None:
        raise NotFound(missing)
    return delivery


def endpoint_secrets(*, endpoint: WebhookEndpoint, keys: KeyCache | None = None) -> list[str]:
    """The secrets that sign a message now: the current one, and the previous one while a
    rotation's overlap lasts (decrypted; never logged or returned by the API)."""
    keys = keys or KeyCache()
    found = [
        open_field(keys, endpoint, endpoint.namespace_id, None, "secret", endpoint.secret_encrypted)
    ]
    until = endpoint.previous_secret_until
    if endpoint.previous_secret_encrypted and until and until > timezone.now():
        found.append(
            open_field(
                keys,
                endpoint,
                endpoint.namespace_id,
                None,
                "previous_secret",
                endpoint.previous_secret_encrypted,
            )
        )
    return found
