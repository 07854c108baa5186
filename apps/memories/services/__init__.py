"""Writes of the store (HOUSE_STYLE: services, keyword-only, each with its audit event in its
transaction), by what they write: `memories`, `subjects` (with export and erasure), `keys`."""

from apps.memories.services.keys import data_keys_rotate
from apps.memories.services.memories import (
    NewMemory,
    memories_create_bulk,
    memories_insert,
    memories_reembed,
    memory_archive,
    memory_create,
    memory_delete,
    memory_update,
    screen_content,
    validate_content,
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

__all__ = [
    "EXPORT_SCHEMA_ID",
    "ErasureReceipt",
    "ExportPart",
    "NewMemory",
    "data_keys_rotate",
    "memories_create_bulk",
    "memories_insert",
    "memories_reembed",
    "memory_archive",
    "memory_create",
    "memory_delete",
    "memory_update",
    "screen_content",
    "subject_erase",
    "subject_export",
    "subject_export_part_register",
    "subject_get_or_create",
    "subject_set_paused",
    "validate_content",
]
