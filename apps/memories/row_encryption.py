"""Data keys and sealed content: the bridge between the pure crypto module and the models.

Every DEK is stored wrapped by the key-encryption provider (the `MEMORYHUB_KEK` keyring),
bound to its namespace, subject and version, so a wrapped key copied to another row does
not unwrap. Content is sealed with associated data naming its table, row, subject, field
and key version, so a ciphertext copied to another row, subject or field does not open.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from apps.memories import crypto
from apps.memories.models import DataKey, Memory, MemoryVersion, Subject
from apps.namespaces.models import Namespace


class Cipher(Protocol):
    def encrypt(
        self, data_key: bytes, plaintext: str, associated: crypto.AssociatedData
    ) -> bytes: ...
    def decrypt(self, data_key: bytes, blob: bytes, associated: crypto.AssociatedData) -> str: ...


class AesGcmCipher:
    encrypt = staticmethod(crypto.encrypt)
    decrypt = staticmethod(crypto.decrypt)


# The cipher for content. Only the write benchmark swaps it (for a no-op baseline).
cipher: Cipher = AesGcmCipher()


@lru_cache(maxsize=4)
def _keyring(entries: tuple[tuple[int, bytes], ...]) -> crypto.LocalKeyring:
    return crypto.LocalKeyring(dict(entries))


def key_provider() -> crypto.KeyEncryptionProvider:
    """The configured KEK provider (the local keyring from MEMORYHUB_KEK)."""
    return _keyring(tuple(sorted(settings.MEMORYHUB_KEYRING.items())))


def _wrap_context(namespace_id: int, subject_id: uuid.UUID | None, version: int) -> bytes:
    return f"namespace={namespace_id};subject={subject_id or ''};version={version}".encode()


def data_key_create(*, namespace: Namespace, subject: Subject | None = None) -> DataKey:
    """Generate and store (wrapped) a new data key. Call inside the caller's transaction."""
    return _data_key_insert(namespace.pk, subject.pk if subject else None)


def _data_key_insert(namespace_id: int, subject_id: uuid.UUID | None) -> DataKey:
    version = 1
    raw = crypto.new_data_key()
    kek_version, wrapped = key_provider().wrap(
        raw, context=_wrap_context(namespace_id, subject_id, version)
    )
    return DataKey.objects.create(
        namespace_id=namespace_id,
        subject_id=subject_id,
        version=version,
        wrapped=wrapped,
        kek_version=kek_version,
    )


def shared_data_key(namespace_id: int) -> DataKey:
    """The namespace's shared data key (shared memories, keyword hashes, fingerprints),
    created on first use, whoever created the namespace: a concurrent first use meets the
    one-shared-key constraint and takes the key that won."""
    stored = DataKey.objects.filter(namespace_id=namespace_id, subject__isnull=True).first()
    if stored is not None:
        return stored
    try:
        with transaction.atomic():
            return _data_key_insert(namespace_id, None)
    except IntegrityError:
        return DataKey.objects.get(namespace_id=namespace_id, subject__isnull=True)


def data_key_unwrap(data_key: DataKey) -> bytes:
    return _unwrap(
        data_key.wrapped,
        data_key.kek_version,
        data_key.namespace_id,
        data_key.subject_id,
        data_key.version,
    )


def _unwrap(
    wrapped: bytes | memoryview,
    kek_version: int,
    namespace_id: int,
    subject_id: uuid.UUID | None,
    version: int,
) -> bytes:
    return key_provider().unwrap(
        bytes(wrapped),
        kek_version=kek_version,
        context=_wrap_context(namespace_id, subject_id, version),
    )


def data_key_rewrap(data_key: DataKey) -> bool:
    """Re-wrap under the provider's current KEK. Returns False when it already was."""
    provider = key_provider()
    if data_key.kek_version == provider.current_version:
        return False
    raw = data_key_unwrap(data_key)
    data_key.kek_version, data_key.wrapped = provider.wrap(
        raw, context=_wrap_context(data_key.namespace_id, data_key.subject_id, data_key.version)
    )
    data_key.rewrapped_at = timezone.now()
    data_key.save(update_fields=["kek_version", "wrapped", "rewrapped_at"])
    return True


@dataclass
class KeyCache:
    """Unwrapped data keys for one operation (a request, a task), fetched at most once each.

    Keys live only in this object's memory and die with it; nothing is cached across
    requests, so an erased subject's key cannot linger in a process.
    """

    _keys: dict[tuple[int, uuid.UUID | None], tuple[bytes, int]] = field(default_factory=dict)

    def key_for(self, namespace_id: int, subject_id: uuid.UUID | None) -> tuple[bytes, int]:
        """(raw data key, its version) for a subject, or the namespace's shared key."""
        cache_key = (namespace_id, subject_id)
        if cache_key not in self._keys:
            stored = (
                shared_data_key(namespace_id)
                if subject_id is None
                else DataKey.objects.get(namespace_id=namespace_id, subject_id=subject_id)
            )
            self._keys[cache_key] = (data_key_unwrap(stored), stored.version)
        return self._keys[cache_key]

    def preload(self, namespace_id: int, subject_ids: Iterable[uuid.UUID | None]) -> None:
        """Fetch the data keys of these subjects in one query (a page of rows from many
        subjects would otherwise cost one query each)."""
        wanted = {s for s in subject_ids if s is not None} - {
            subject for (ns, subject) in self._keys if ns == namespace_id
        }
        if not wanted:
            return
        for stored in DataKey.objects.filter(namespace_id=namespace_id, subject_id__in=wanted):
            self._keys[(namespace_id, stored.subject_id)] = (
                data_key_unwrap(stored),
                stored.version,
            )

    def subject_with_keys(self, namespace_id: int, external_id: str | None) -> Subject | None:
        """The namespace's subject of `external_id` (None: no such subject yet), with its data
        key and the namespace's shared one fetched into this cache, in one query (a recall
        needs all three before anything else).

        Written as SQL: building the ORM's join for it took three times as long as running
        it, on the thread that overlaps the query's embedding (the GIL both need)."""
        subject = None
        with connection.cursor() as cursor:
            cursor.execute(
                f"""
                SELECT k.subject_id, k.version, k.kek_version, k.wrapped,
                       s.external_id, s.paused, s.created_at
                FROM {DataKey._meta.db_table} k
                LEFT JOIN {Subject._meta.db_table} s ON s.id = k.subject_id
                WHERE k.namespace_id = %(namespace)s
                  AND (k.subject_id IS NULL
                       OR (s.namespace_id = %(namespace)s AND s.external_id = %(external)s))
                """,  # noqa: S608 (only the tables' names are interpolated)
                {"namespace": namespace_id, "external": external_id},
            )
            rows = cursor.fetchall()
        for subject_id, version, kek_version, wrapped, found, paused, created_at in rows:
            if subject_id is not None:
                subject = Subject.from_db(
                    connection.alias,
                    ["id", "namespace_id", "external_id", "paused", "created_at"],
                    [subject_id, namespace_id, found, paused, created_at],
                )
            raw = _unwrap(wrapped, kek_version, namespace_id, subject_id, version)
            self._keys.setdefault((namespace_id, subject_id), (raw, version))
        if subject is None and external_id is not None:  # none, or one without a key yet
            subject = Subject.objects.filter(
                namespace_id=namespace_id, external_id=external_id
            ).first()
        return subject

    def index_key(self, namespace_id: int) -> bytes:
        shared, _ = self.key_for(namespace_id, None)
        return crypto.derive_key(shared, "keyword-index")

    def fingerprint_key(self, namespace_id: int) -> bytes:
        shared, _ = self.key_for(namespace_id, None)
        return crypto.derive_key(shared, "subject-fingerprint")

    def subject_fingerprint(self, namespace_id: int, external_id: str) -> str:
        """The HMAC of a subject's external id that its erasure receipt and the erasure
        ledger carry instead of the id."""
        key = self.fingerprint_key(namespace_id)
        return hmac.new(key, external_id.encode(), hashlib.sha256).hexdigest()


def _version_ad(
    version: MemoryVersion, subject_id: uuid.UUID | None, key_version: int
) -> crypto.AssociatedData:
    return crypto.AssociatedData(
        # Bound into every version's ciphertext: a name for all time, whatever the table.
        table="memories_memoryversion",
        row_id=f"{version.memory_id}:{version.version}",
        subject=str(subject_id or ""),
        field="content",
        key_version=key_version,
    )


def seal_memory(keys: KeyCache, memory: Memory, content: str) -> None:
    seal_row(keys, memory, memory.namespace_id, memory.subject_id, content)


def open_memory(keys: KeyCache, memory: Memory) -> str:
    return open_row(keys, memory, memory.namespace_id, memory.subject_id)


def seal_version(
    keys: KeyCache,
    version: MemoryVersion,
    subject_id: uuid.UUID | None,
    namespace_id: int,
    content: str,
) -> None:
    raw, key_version = keys.key_for(namespace_id, subject_id)
    version.key_version = key_version
    version.content_encrypted = cipher.encrypt(
        raw, content, _version_ad(version, subject_id, key_version)
    )


def open_version(
    keys: KeyCache, version: MemoryVersion, subject_id: uuid.UUID | None, namespace_id: int
) -> str:
    raw, _ = keys.key_for(namespace_id, subject_id)
    return cipher.decrypt(
        raw, bytes(version.content_encrypted), _version_ad(version, subject_id, version.key_version)
    )


def _row_ad(
    table: str,
    row_id: object,
    subject_id: uuid.UUID | None,
    key_version: int,
    field: str = "content",
) -> crypto.AssociatedData:
    """Where a row's ciphertext lives: its table, id, subject ("" for shared rows) and
    field."""
    return crypto.AssociatedData(
        table=table,
        row_id=str(row_id),
        subject=str(subject_id or ""),
        field=field,
        key_version=key_version,
    )


def seal_row(
    keys: KeyCache,
    row: Any,  # a model with id, content_encrypted, key_version (Message, SessionSummary, ...)
    namespace_id: int,
    subject_id: uuid.UUID | None,
    content: str,
) -> None:
    """Encrypt a message or summary row's content under the subject's key, bound to the row."""
    _, row.key_version = keys.key_for(namespace_id, subject_id)
    row.content_encrypted = seal_field(keys, row, namespace_id, subject_id, "content", content)


def seal_field(
    keys: KeyCache,
    row: Any,
    namespace_id: int,
    subject_id: uuid.UUID | None,
    field: str,
    text: str,
) -> bytes:
    """The ciphertext of another text of a sealed row (`seal_row` first: the row's
    key_version is used), bound to the row and to `field`."""
    raw, _ = keys.key_for(namespace_id, subject_id)
    return cipher.encrypt(
        raw, text, _row_ad(row._meta.db_table, row.id, subject_id, row.key_version, field)
    )


def open_field(
    keys: KeyCache,
    row: Any,
    namespace_id: int,
    subject_id: uuid.UUID | None,
    field: str,
    blob: bytes,
) -> str:
    raw, _ = keys.key_for(namespace_id, subject_id)
    return cipher.decrypt(
        raw, bytes(blob), _row_ad(row._meta.db_table, row.id, subject_id, row.key_version, field)
    )


def open_row(keys: KeyCache, row: Any, namespace_id: int, subject_id: uuid.UUID | None) -> str:
    return open_field(keys, row, namespace_id, subject_id, "content", row.content_encrypted)
