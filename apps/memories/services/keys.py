"""Writes for data keys: re-wrapping every data key under the newest key-encryption key."""

from __future__ import annotations

import time

from django.db import transaction

from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.memories import row_encryption
from apps.memories.models import DataKey


def data_keys_rotate(*, actor: Actor, batch_size: int = 500) -> int:
    """Re-wrap every data key under the newest KEK, online, in short batches.

    Readers are never blocked for long: each batch locks only its own rows, skipping rows
    another transaction holds (they are picked up by the next pass). Returns how many keys
    were re-wrapped; one audit event records the count. Afterwards the old KEK can go.
    """
    current = row_encryption.key_provider().current_version
    rewrapped = 0
    while True:
        with transaction.atomic():
            batch = list(
                DataKey.objects.exclude(kek_version=current)
                .select_for_update(skip_locked=True)
                .order_by("pk")[:batch_size]
            )
            for data_key in batch:
                rewrapped += row_encryption.data_key_rewrap(data_key)
        if not batch:
            if not DataKey.objects.exclude(kek_version=current).exists():
                break
            time.sleep(0.05)  # only locked rows remain: retry once their holders commit
    audit_record(
        actor=actor,
        action="keys.rotate",
        object_type="data_key",
        details={"rewrapped": rewrapped, "kek_version": current},
    )
    return rewrapped
