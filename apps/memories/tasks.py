"""Background jobs of the memory store. Tasks take ids, hold no logic, and are idempotent."""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import connection
from django.utils.translation import gettext_noop

from apps.memories.models import DataKey

logger = logging.getLogger(__name__)


@shared_task(name="memories.vacuum_data_keys")
def vacuum_data_keys() -> None:
    """Reclaim dead rows of the data-key table after an erasure.

    A deleted row lingers in its page until VACUUM; for data keys that would leave a wrapped
    (KEK-decryptable) copy of an erased subject's key on disk. The table is small, so this
    is quick; it runs after the erasure commits (VACUUM cannot run inside a transaction).
    """
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM {DataKey._meta.db_table}")


@shared_task(name="memories.reembed")
def reembed(batch_size: int = 256) -> int:
    """Fill the configured models' vectors (`memories_reembed`). Resumable: a worker killed
    mid-way leaves the task unacknowledged, and the next worker continues where it stopped
    (each batch commits)."""
    from apps.audit.actors import Actor
    from apps.memories.vector_fill import memories_reembed

    return memories_reembed(actor=Actor.system(gettext_noop("re-embedding")), batch_size=batch_size)
