"""Standard Webhooks signing (https://www.standardwebhooks.com): secrets and headers.

Pure: no Django. A secret is `whsec_` + base64 of 32 random bytes. A message is signed with
every secret given (the current one, and during a rotation's overlap the previous one too):
the signatures go space-separated in one `webhook-signature` header, and a receiver that
knows either secret verifies it.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Sequence
from datetime import datetime

from standardwebhooks import Webhook

SECRET_PREFIX = "whsec_"  # noqa: S105 (the prefix, not a secret)
SECRET_BYTES = 32


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def signed_headers(
    *, message_id: str, timestamp: datetime, body: bytes, secrets_in_use: Sequence[str]
) -> dict[str, str]:
    """The three Standard Webhooks headers (and the content type) for `body`."""
    if not secrets_in_use:
        raise ValueError("at least one secret signs a message")
    signatures = [Webhook(secret).sign(message_id, timestamp, body) for secret in secrets_in_use]
    return {
        "content-type": "application/json",
        "webhook-id": message_id,
        "webhook-timestamp": str(int(timestamp.timestamp())),
        "webhook-signature": " ".join(signatures),
    }
