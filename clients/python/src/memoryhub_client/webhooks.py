"""Verifying the webhooks MemoryHub sends (the Standard Webhooks scheme), with the standard
library alone.

A request carries `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`:
space-separated `v1,<base64 HMAC-SHA256>` entries, each over `"{id}.{timestamp}.{body}"` with
one of the endpoint's secrets. While a rotated secret's overlap lasts, a request carries a
signature by the old secret and one by the new; any one matching the receiver's secret is
enough, so a receiver that still holds the old secret keeps working until it takes the new.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

from memoryhub_client.errors import WebhookVerificationFailed

SECRET_PREFIX = "whsec_"  # noqa: S105 (the prefix of every secret, not one)
# How far a request's timestamp may be from the receiver's clock, either way (seconds):
# beyond it a captured request can no longer be replayed.
TOLERANCE_SECONDS = 5 * 60


def verify_webhook(headers: Mapping[str, str], body: bytes | str, secret: str) -> dict[str, Any]:
    """The payload (`{"type", "timestamp", "data"}`) of a webhook request whose signature
    matches `secret` (`whsec_…`, as the endpoint's creation or rotation answered it).

    `headers` are the request's (any letter case), `body` its raw bytes exactly as received,
    before any JSON parsing. Raises WebhookVerificationFailed, whose `code` says why:
    `missing_headers`, `invalid_secret`, `invalid_timestamp`, `timestamp_too_old`,
    `timestamp_too_new`, `no_matching_signature` or `invalid_payload`. The `webhook-id` is the
    delivery's idempotency key: a receiver may get the same one more than once."""
    lowered = {name.lower(): value for name, value in headers.items()}
    message_id = lowered.get("webhook-id", "").strip()
    timestamp = lowered.get("webhook-timestamp", "").strip()
    signatures = lowered.get("webhook-signature", "").split()
    if not (message_id and timestamp and signatures):
        raise WebhookVerificationFailed(
            "webhook-id, webhook-timestamp and webhook-signature are required.",
            code="missing_headers",
        )
    _check_timestamp(timestamp)
    payload = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    signed = f"{message_id}.{timestamp}.".encode() + payload
    expected = hmac.new(_secret_key(secret), signed, hashlib.sha256).digest()
    if not any(_matches(entry, expected) for entry in signatures):
        raise WebhookVerificationFailed(
            "No signature matches this secret.", code="no_matching_signature"
        )
    try:
        parsed = json.loads(payload)
    except ValueError:
        raise WebhookVerificationFailed("The body is not JSON.", code="invalid_payload") from None
    if not isinstance(parsed, dict):
        raise WebhookVerificationFailed("The body is not a JSON object.", code="invalid_payload")
    return parsed


def _secret_key(secret: str) -> bytes:
    encoded = secret.strip().removeprefix(SECRET_PREFIX)
    try:
        key = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if not key:
        raise WebhookVerificationFailed(
            "The secret is not whsec_ followed by base64.", code="invalid_secret"
        )
    return key


def _check_timestamp(timestamp: str) -> None:
    if not timestamp.isdigit():
        raise WebhookVerificationFailed(
            "webhook-timestamp is not a number of seconds.", code="invalid_timestamp"
        )
    age = time.time() - int(timestamp)
    if age > TOLERANCE_SECONDS:
        raise WebhookVerificationFailed(
            "The request is older than five minutes.", code="timestamp_too_old"
        )
    if age < -TOLERANCE_SECONDS:
        raise WebhookVerificationFailed(
            "The request is dated more than five minutes ahead.", code="timestamp_too_new"
        )


def _matches(entry: str, expected: bytes) -> bool:
    """Whether one `v1,<base64>` entry is the expected signature (other versions never are)."""
    version, _, encoded = entry.partition(",")
    if version != "v1":
        return False
    try:
        candidate = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return False
    return hmac.compare_digest(candidate, expected)
