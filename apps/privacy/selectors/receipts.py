"""An erasure's receipt, fetched again by the code the person was shown when they erased
everything (apps/privacy/services.py, `erasure_receipt_code_issue`). The receipt is read
from the erasure's own audit event: counts, times and hashes, nothing about the person, whose
data is crypto-shredded. Without the code (stored only as its hash) nobody reads it here."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils.dateparse import parse_datetime

from apps.audit import chain
from apps.audit.models import AuditEvent
from apps.audit.services import event_as_chain_fields
from apps.privacy.links import by_secret
from apps.privacy.models import ErasureReceiptCode

RECEIPT_FORMAT = "memoryhub-erasure-receipt/1"
# The receipt's fields its number is the SHA-256 of (as sorted-key JSON), as the erasure wrote.
NUMBERED_FIELDS = (
    "subject_id",
    "subject_fingerprint",
    "memories_deleted",
    "versions_deleted",
    "data_keys_destroyed",
    "erased_at",
)
COUNTS = ("memories_deleted", "versions_deleted", "data_keys_destroyed")


@dataclass(frozen=True)
class Receipt:
    number: str  # the receipt number: SHA-256 of its numbered fields
    erased_at: datetime
    counts: dict[str, int]
    namespace: str  # its slug
    namespace_name: str
    event_id: int  # the erasure's audit event, and its link in the hash chain
    event_hash: str
    previous_hash: str  # the link before it
    numbered: dict[str, Any]  # the fields its number is the hash of, as recorded
    intact: bool  # the number matches the fields, and the event its hash
    locale: str  # the language the person erased in


def erasure_receipt(*, code: str) -> Receipt | None:
    """The receipt this code fetches, or None for any other code."""
    if not code or len(code) > 200:
        return None
    codes = ErasureReceiptCode.objects.select_related("namespace")
    kept = by_secret(codes, "code_hash", code).first()
    if kept is None:
        return None
    event = AuditEvent.objects.filter(
        pk=kept.audit_event_id, namespace_id=kept.namespace_id, action="subject.erase"
    ).first()
    if event is None:
        return None
    details: dict[str, Any] = event.details or {}
    numbered = {name: details.get(name) for name in NUMBERED_FIELDS}
    number = str(details.get("receipt_hash", ""))
    recomputed = hashlib.sha256(json.dumps(numbered, sort_keys=True).encode()).hexdigest()
    erased_at = parse_datetime(str(details.get("erased_at", ""))) or event.created_at
    return Receipt(
        number=number,
        erased_at=erased_at,
        counts={name: int(details.get(name) or 0) for name in COUNTS},
        namespace=event.namespace_slug,
        namespace_name=kept.namespace.name,
        event_id=event.pk,
        event_hash=event.hash,
        previous_hash=event.prev_hash,
        numbered=numbered,
        intact=recomputed == number
        and chain.link_hash(event_as_chain_fields(event=event)) == event.hash,
        locale=kept.locale,
    )


def receipt_document(receipt: Receipt) -> dict[str, Any]:
    """The receipt as a file to keep: what was erased, when, and how to check it."""
    return {
        "format": RECEIPT_FORMAT,
        "receipt_number": receipt.number,
        "namespace": receipt.namespace,
        **receipt.numbered,
        "audit_event": {
            "id": receipt.event_id,
            "hash": receipt.event_hash,
            "prev_hash": receipt.previous_hash,
        },
        "how_to_verify": (
            "receipt_number is the SHA-256 of the JSON object of "
            + ", ".join(NUMBERED_FIELDS)
            + " (keys sorted, Python json.dumps separators). audit_event.hash is the"
            " erasure's link in the operator's hash-chained audit log (audit_verify)."
        ),
    }
