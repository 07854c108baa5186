"""Writes of the store (HOUSE_STYLE: services, keyword-only, each with its audit event in its
transaction), by what they write: `memories`, `subjects` (with export and erasure), `keys`."""

from apps.memories.services.keys import data_keys_rotate
from apps.memories.services.memories import (
    NewMemory,
    capture_check,
    memories_create_bulk,
    memories_insert,
    memory_archive,
    memory_create,
    memory_delete,
    memory_update,
    pii_rejection_record,
    screen_content,
    screen_for_subject,
    validate_content,
)
from apps.memories.services.review import (
    BULK_ACTIONS,
    BulkOutcome,
    memories_bulk_change,
    memories_purge_batch,
    memory_approve,
    memory_end,
    memory_merge,
    memory_restore,
    memory_supersede_rollback,
)
from apps.memories.services.subjects import (
    EXPORT_SCHEMA_ID,
    ErasureReceipt,
    ExportPart,
    subject_erase,
    subject_export,
    subject_export_part_register,
    subject_get_or_create,
    subject_set_paused,
)
from apps.memories.vector_fill import memories_reembed

__all__ = [
    "BULK_ACTIONS",
    "EXPORT_SCHEMA_ID",
    "BulkOutcome",
    "ErasureReceipt",
    "ExportPart",
    "NewMemory",
    "capture_check",
    "data_keys_rotate",
    "memories_bulk_change",
    "memories_create_bulk",
    "memories_insert",
    "memories_purge_batch",
    "memories_reembed",
    "memory_approve",
    "memory_archive",
    "memory_create",
    "memory_delete",
    "memory_end",
    "memory_merge",
    "memory_restore",
    "memory_supersede_rollback",
    "memory_update",
    "pii_rejection_record",
    "screen_content",
    "screen_for_subject",
    "subject_erase",
    "subject_export",
    "subject_export_part_register",
    "subject_get_or_create",
    "subject_set_paused",
    "validate_content",
]
