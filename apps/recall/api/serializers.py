from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.memories.api.serializers import MemorySerializer
from apps.memories.models import Kind
from memoryhub.api.serializers import BoundedJSONObjectField, StrictSerializer


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


@extend_schema_field(OpenApiTypes.DATETIME)
class AsOfField(serializers.CharField):
    """A moment as the caller wrote it: parsed by `time_travel.as_of_parse`, whose refusal
    (`invalid_as_of`) names what is wrong; the schema says date-time."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_length=64, allow_null=True, required=False, default=None, **kwargs)


class RecallOptionsSerializer(StrictSerializer):
    """The recall's options, beside its subject and query. Stated here once: they are the
    REST request's fields and the arguments of the MCP tool `search_memories`
    (apps.mcp_server.parameters), and the SDK's RecallOptions names the same ones."""

    k = serializers.IntegerField(
        min_value=1, max_value=100, required=False, default=None,
        help_text="Results (default: the namespace's recall configuration, 10 unless changed).",
    )  # fmt: skip
    filters = RecallFiltersSerializer(
        required=False,
        help_text="Only memories of one of these kinds, with one of these tags, that happened "
        "(or were stored) from since to before until, whose metadata holds these keys and values.",
    )
    include_shared = serializers.BooleanField(
        default=True, help_text="Also the namespace's shared memories (about no one subject)."
    )
    include_history = serializers.BooleanField(
        default=False,
        help_text="Also facts superseded or ended (kept as history), each marked current: "
        "false and ranked below every current memory found.",
    )
    as_of = AsOfField(
        help_text="Time travel: what held at this moment (ISO 8601 with a timezone, not in "
        "the future) instead of now: memories recorded and valid then, with the text they "
        "had then. What was erased, deleted or archived since stays out.",
    )  # fmt: skip
    mmr = serializers.FloatField(
        min_value=0.0, max_value=1.0, allow_null=True, required=False, default=None,
        help_text="Diversify (maximal marginal relevance): 1 = relevance only, 0 = diversity only.",
    )  # fmt: skip
    min_relevance = serializers.FloatField(
        min_value=0.0, max_value=1.0, allow_null=True, required=False, default=None,
        help_text="Abstention: leave out results whose relevance is below this (0.2 is the "
        "documented default; none: the namespace's setting, off unless changed). A question "
        "about something never stored then gets no results.",
    )  # fmt: skip


class RecallRequestSerializer(RecallOptionsSerializer):
    """A recall: whose memories (`subject`, else only the shared ones), the query, and the
    recall's options."""

    subject = serializers.CharField(max_length=255, allow_null=True, required=False, default=None)
    query = serializers.CharField(max_length=4000, trim_whitespace=False)

    def validate_query(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("The query is empty.")
        return value


class RecallComponentsSerializer(serializers.Serializer):
    vector = serializers.FloatField()
    # DRF's metaclass moves declared fields off the class: this is not Field.context.
    context = serializers.FloatField()  # type: ignore[assignment]  # DRF stubs: see above
    keyword = serializers.FloatField()
    boosts = serializers.FloatField()
    recency = serializers.FloatField()
    importance = serializers.FloatField()
    final = serializers.FloatField()
    relevance = serializers.FloatField(
        help_text="Calibrated relevance, 0..1: for the first result, the probability that the "
        "memories answer the query; later results are discounted by their gap to it."
    )


class RecallHitSerializer(serializers.Serializer):
    memory = MemorySerializer()
    current = serializers.BooleanField(
        help_text="False for history (include_history): superseded or ended, no longer true."
    )
    score = serializers.FloatField()
    relevance = serializers.FloatField()
    components = RecallComponentsSerializer()


class RecallResponseSerializer(serializers.Serializer):
    results = RecallHitSerializer(many=True)
    recall_id = serializers.UUIDField(allow_null=True)
    timings_ms = serializers.DictField(child=serializers.FloatField())


class FeedbackRequestSerializer(serializers.Serializer):
    memory_id = serializers.CharField(max_length=64)
    relevant = serializers.BooleanField()
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class FeedbackSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    recall_id = serializers.UUIDField()
    memory_id = serializers.UUIDField()
    relevant = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
