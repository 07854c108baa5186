from __future__ import annotations

from typing import Any, cast

from rest_framework import serializers

from apps.memories.models import Kind, Status, Subject
from apps.memories.selectors import OpenedMemory, OpenedVersion, memory_public_fields
from memoryhub.api.serializers import BoundedJSONObjectField, StrictSerializer

Tag = serializers.CharField(max_length=64, allow_blank=False)


class SourceSerializer(StrictSerializer):
    app = serializers.CharField(max_length=200, required=False)
    session = serializers.CharField(max_length=200, required=False)
    message_ids = serializers.ListField(
        child=serializers.CharField(max_length=200), max_length=100, required=False
    )


class MemoryCreateSerializer(StrictSerializer):
    subject = serializers.CharField(max_length=255, allow_null=True, required=False, default=None)
    # No max_length here: oversized content is a 413 from the service, not a 400.
    content = serializers.CharField(trim_whitespace=False)
    kind = serializers.ChoiceField(choices=Kind.choices, default=Kind.SEMANTIC)
    tags = serializers.ListField(
        child=serializers.CharField(max_length=64), max_length=50, default=list
    )
    metadata = BoundedJSONObjectField(
        default=dict, help_text="Plaintext, for filtering: not for secrets."
    )
    importance = serializers.FloatField(min_value=0.0, max_value=1.0, default=0.5)
    confidence = serializers.FloatField(min_value=0.0, max_value=1.0, default=1.0)
    # DRF's metaclass moves declared fields off the class, so this does not replace Field.source.
    source = SourceSerializer(required=False)  # type: ignore[assignment]  # DRF stubs: see above
    occurred_at = serializers.DateTimeField(allow_null=True, required=False, default=None)
    expires_at = serializers.DateTimeField(allow_null=True, required=False, default=None)


class MemoryUpdateSerializer(StrictSerializer):
    content = serializers.CharField(trim_whitespace=False, required=False)
    reason = serializers.CharField(max_length=200, required=False, default="")
    kind = serializers.ChoiceField(choices=Kind.choices, required=False)
    tags = serializers.ListField(
        child=serializers.CharField(max_length=64), max_length=50, required=False
    )
    metadata = BoundedJSONObjectField(required=False)
    importance = serializers.FloatField(min_value=0.0, max_value=1.0, required=False)
    confidence = serializers.FloatField(min_value=0.0, max_value=1.0, required=False)
    status = serializers.ChoiceField(choices=Status.choices, required=False)
    occurred_at = serializers.DateTimeField(allow_null=True, required=False)
    expires_at = serializers.DateTimeField(allow_null=True, required=False)


class MemoryListQuerySerializer(StrictSerializer):
    subject = serializers.CharField(max_length=255, required=False)
    kind = serializers.ChoiceField(choices=Kind.choices, required=False)
    tag = serializers.CharField(max_length=64, required=False)
    status = serializers.ChoiceField(choices=Status.choices, required=False)
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)
    cursor = serializers.CharField(required=False)
    page_size = serializers.IntegerField(min_value=1, max_value=200, required=False)


class MemorySerializer(serializers.Serializer):
    """A memory as the API returns it: decrypted content, never the embedding."""

    id = serializers.UUIDField(read_only=True)
    subject = serializers.CharField(read_only=True, allow_null=True)
    content = serializers.CharField(read_only=True)
    kind = serializers.ChoiceField(choices=Kind.choices, read_only=True)
    tags = serializers.ListField(child=serializers.CharField(), read_only=True)
    metadata = serializers.DictField(read_only=True)
    importance = serializers.FloatField(read_only=True)
    confidence = serializers.FloatField(read_only=True)
    source = serializers.DictField(read_only=True)  # type: ignore[assignment]  # DRF stubs, as above
    status = serializers.ChoiceField(choices=Status.choices, read_only=True)
    version = serializers.IntegerField(read_only=True)
    occurred_at = serializers.DateTimeField(read_only=True, allow_null=True)
    created_at = serializers.DateTimeField(read_only=True)
    updated_at = serializers.DateTimeField(read_only=True)
    valid_from = serializers.DateTimeField(read_only=True)
    valid_to = serializers.DateTimeField(read_only=True, allow_null=True)
    # The memory that replaced this one (null while it holds, or when it ended with none).
    superseded_by = serializers.UUIDField(read_only=True, allow_null=True)
    expires_at = serializers.DateTimeField(read_only=True, allow_null=True)

    def to_representation(self, opened: OpenedMemory) -> dict[str, Any]:
        memory = opened.memory
        return {
            **memory_public_fields(memory),
            "subject": cast(Subject, memory.subject).external_id if memory.subject_id else None,
            "content": opened.content,
        }


class MemoryVersionSerializer(serializers.Serializer):
    version = serializers.IntegerField(read_only=True)
    content = serializers.CharField(read_only=True)
    changed_by = serializers.CharField(read_only=True)
    reason = serializers.CharField(read_only=True)
    created_at = serializers.DateTimeField(read_only=True)

    def to_representation(self, opened: OpenedVersion) -> dict[str, Any]:
        version = opened.version
        return {
            "version": version.version,
            "content": opened.content,
            "changed_by": version.changed_by,
            "reason": version.reason,
            "created_at": version.created_at.isoformat(),
        }


class MemoryVersionListSerializer(serializers.Serializer):
    results = MemoryVersionSerializer(many=True)


class SubjectSerializer(serializers.Serializer):
    external_id = serializers.CharField()
    paused = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    memories = serializers.IntegerField(help_text="Memories kept about the subject.")


class ErasureReceiptSerializer(serializers.Serializer):
    subject_id = serializers.UUIDField()
    subject_fingerprint = serializers.CharField()
    memories_deleted = serializers.IntegerField()
    versions_deleted = serializers.IntegerField()
    data_keys_destroyed = serializers.IntegerField()
    erased_at = serializers.DateTimeField()
    receipt_hash = serializers.CharField()
    audit_event_id = serializers.IntegerField()
