from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.memories.encryption import KeyCache, open_memory, open_version
from apps.memories.models import Job, Kind, Memory, MemoryVersion, Role, Status
from apps.memories.services import memory_public_fields
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
    source = SourceSerializer(required=False)
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
    source = serializers.DictField(read_only=True)
    status = serializers.ChoiceField(choices=Status.choices, read_only=True)
    version = serializers.IntegerField(read_only=True)
    occurred_at = serializers.DateTimeField(read_only=True, allow_null=True)
    created_at = serializers.DateTimeField(read_only=True)
    updated_at = serializers.DateTimeField(read_only=True)
    valid_from = serializers.DateTimeField(read_only=True)
    valid_to = serializers.DateTimeField(read_only=True, allow_null=True)
    expires_at = serializers.DateTimeField(read_only=True, allow_null=True)

    def to_representation(self, memory: Memory) -> dict[str, Any]:
        keys: KeyCache = self.context["keys"]
        return {
            **memory_public_fields(memory),
            "subject": memory.subject.external_id if memory.subject_id else None,
            "content": open_memory(keys, memory),
        }


class MemoryVersionSerializer(serializers.Serializer):
    version = serializers.IntegerField(read_only=True)
    content = serializers.CharField(read_only=True)
    changed_by = serializers.CharField(read_only=True)
    reason = serializers.CharField(read_only=True)
    created_at = serializers.DateTimeField(read_only=True)

    def to_representation(self, version: MemoryVersion) -> dict[str, Any]:
        keys: KeyCache = self.context["keys"]
        memory: Memory = self.context["memory"]
        return {
            "version": version.version,
            "content": open_version(keys, version, memory.subject_id, memory.namespace_id),
            "changed_by": version.changed_by,
            "reason": version.reason,
            "created_at": version.created_at.isoformat(),
        }


class MemoryVersionListSerializer(serializers.Serializer):
    results = MemoryVersionSerializer(many=True)


class ErasureReceiptSerializer(serializers.Serializer):
    subject_id = serializers.UUIDField()
    subject_fingerprint = serializers.CharField()
    memories_deleted = serializers.IntegerField()
    versions_deleted = serializers.IntegerField()
    data_keys_destroyed = serializers.IntegerField()
    erased_at = serializers.DateTimeField()
    receipt_hash = serializers.CharField()
    audit_event_id = serializers.IntegerField()


class RecallFiltersSerializer(StrictSerializer):
    kind = serializers.ListField(
        child=serializers.ChoiceField(choices=Kind.choices), required=False, default=list
    )
    tags = serializers.ListField(
        child=serializers.CharField(max_length=64), max_length=50, required=False, default=list
    )
    since = serializers.DateTimeField(allow_null=True, required=False, default=None)
    until = serializers.DateTimeField(allow_null=True, required=False, default=None)
    metadata = BoundedJSONObjectField(required=False, default=dict, max_bytes=4096)


class RecallRequestSerializer(StrictSerializer):
    subject = serializers.CharField(max_length=255, allow_null=True, required=False, default=None)
    query = serializers.CharField(max_length=4000, trim_whitespace=False)
    k = serializers.IntegerField(min_value=1, max_value=100, default=10)
    filters = RecallFiltersSerializer(required=False)
    include_shared = serializers.BooleanField(default=True)
    mmr = serializers.FloatField(
        min_value=0.0, max_value=1.0, allow_null=True, required=False, default=None,
        help_text="Diversify (maximal marginal relevance): 1 = relevance only, 0 = diversity only.",
    )  # fmt: skip

    def validate_query(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("The query is empty.")
        return value


class RecallComponentsSerializer(serializers.Serializer):
    vector = serializers.FloatField()
    context = serializers.FloatField()
    keyword = serializers.FloatField()
    boosts = serializers.FloatField()
    recency = serializers.FloatField()
    importance = serializers.FloatField()
    final = serializers.FloatField()


class RecallHitSerializer(serializers.Serializer):
    memory = MemorySerializer()
    score = serializers.FloatField()
    components = RecallComponentsSerializer()


class RecallResponseSerializer(serializers.Serializer):
    results = RecallHitSerializer(many=True)
    recall_id = serializers.UUIDField(allow_null=True)
    timings_ms = serializers.DictField(child=serializers.FloatField())


class IncomingMessageSerializer(StrictSerializer):
    role = serializers.ChoiceField(choices=Role.choices)
    # No max_length: oversized content is a 413 from the service, not a 400.
    content = serializers.CharField(trim_whitespace=False)
    name = serializers.CharField(max_length=64, allow_null=True, required=False, default=None)
    created_at = serializers.DateTimeField(allow_null=True, required=False, default=None)


class MessagesIngestSerializer(StrictSerializer):
    subject = serializers.CharField(max_length=255)
    session = serializers.CharField(max_length=200)
    # The count limit is checked before this (413), so no max_length here.
    messages = IncomingMessageSerializer(many=True, allow_empty=False)
    extract = serializers.BooleanField(default=True)


class JobSerializer(serializers.ModelSerializer):
    namespace = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    subject = serializers.SlugRelatedField(slug_field="external_id", read_only=True)
    url = serializers.SerializerMethodField()

    class Meta:
        model = Job
        fields = [
            "id", "namespace", "subject", "kind", "status", "result", "error", "attempts",
            "created_at", "updated_at", "url",
        ]  # fmt: skip
        read_only_fields = fields

    def get_url(self, job: Job) -> str:
        return f"/api/v1/jobs/{job.id}"


class DocumentIngestSerializer(StrictSerializer):
    subject = serializers.CharField(max_length=255, allow_null=True, required=False, default=None)
    # No max_length: an oversized document is a 413 from the service, not a 400.
    text = serializers.CharField(trim_whitespace=False)
    title = serializers.CharField(max_length=200, required=False, default="")
    metadata = BoundedJSONObjectField(
        default=dict, help_text="Plaintext, for filtering: not for secrets."
    )
    tags = serializers.ListField(
        child=serializers.CharField(max_length=64), max_length=50, default=list
    )
    chunk_tokens = serializers.IntegerField(min_value=16, max_value=2000, required=False)
    overlap_tokens = serializers.IntegerField(min_value=0, max_value=1000, required=False)


class DocumentIngestResultSerializer(serializers.Serializer):
    document = serializers.UUIDField()
    chunks = serializers.IntegerField()
    memories = serializers.ListField(child=serializers.UUIDField())
    tokens = serializers.ListField(child=serializers.IntegerField())
