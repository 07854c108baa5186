from __future__ import annotations

from rest_framework import serializers

from apps.memories.models import Subject
from apps.namespaces.models import Namespace
from apps.pipeline.models import Job, MessageRole
from memoryhub.api.serializers import BoundedJSONObjectField, StrictSerializer


class IncomingMessageSerializer(StrictSerializer):
    role = serializers.ChoiceField(choices=MessageRole.choices)
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
    namespace: serializers.SlugRelatedField[Namespace] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True
    )
    subject: serializers.SlugRelatedField[Subject] = serializers.SlugRelatedField(
        slug_field="external_id", read_only=True
    )
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
    chunk_tokens = serializers.IntegerField(min_value=64, max_value=2000, required=False)
    overlap_tokens = serializers.IntegerField(min_value=0, max_value=1000, required=False)


class DocumentIngestResultSerializer(serializers.Serializer):
    document = serializers.UUIDField()
    chunks = serializers.IntegerField()
    memories = serializers.ListField(child=serializers.UUIDField())
    tokens = serializers.ListField(child=serializers.IntegerField())
    job = JobSerializer(
        allow_null=True,
        help_text="The job embedding the chunks of a large document (null: embedded already).",
    )
