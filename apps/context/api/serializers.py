from __future__ import annotations

from rest_framework import serializers

from apps.context.assembly import DEFAULT_PRIORITIES, PLACEMENTS
from apps.context.services import STRATEGIES
from apps.recall.api.serializers import AsOfField
from memoryhub.api.serializers import StrictSerializer


class RecallOptionsSerializer(StrictSerializer):
    k = serializers.IntegerField(min_value=1, max_value=100, default=20)


class SectionOverrideSerializer(StrictSerializer):
    priority = serializers.IntegerField(min_value=0, max_value=1000, required=False)
    max_tokens = serializers.IntegerField(min_value=0, allow_null=True, required=False)


class SectionOverridesSerializer(StrictSerializer):
    procedural = SectionOverrideSerializer(required=False)
    turns = SectionOverrideSerializer(required=False)
    memories = SectionOverrideSerializer(required=False)
    summary = SectionOverrideSerializer(required=False)
    shared = SectionOverrideSerializer(required=False)


class ContextRequestSerializer(StrictSerializer):
    subject = serializers.CharField(max_length=255, allow_null=True, required=False, default=None)
    session = serializers.CharField(max_length=200, allow_null=True, required=False, default=None)
    query = serializers.CharField(max_length=4000, trim_whitespace=False)
    model = serializers.CharField(max_length=100, required=False, default="")
    max_context_tokens = serializers.IntegerField(
        min_value=1, allow_null=True, required=False, default=None
    )
    reserve_tokens = serializers.IntegerField(min_value=0, default=1024)
    strategy = serializers.ChoiceField(choices=STRATEGIES, default="summary_buffer")
    system_prompt = serializers.CharField(
        max_length=32_000, allow_blank=True, trim_whitespace=False, default=""
    )
    recall = RecallOptionsSerializer(required=False)
    window = serializers.IntegerField(
        min_value=0, max_value=1000, default=10, help_text="window: turns kept"
    )
    buffer_tokens = serializers.IntegerField(
        min_value=0, default=2000, help_text="summary_buffer: tokens of recent turns kept verbatim"
    )
    placement = serializers.ChoiceField(choices=PLACEMENTS, default="edges")
    sections = SectionOverridesSerializer(required=False)
    include_history = serializers.BooleanField(
        default=False,
        help_text="Also memories superseded or ended, each line marked "
        '"(superseded YYYY-MM-DD)" and ranked below the current ones.',
    )
    as_of = AsOfField(
        help_text="Time travel: the memories as they held at this moment (ISO 8601 with a "
        "timezone, not in the future). What was erased, deleted or archived since stays out.",
    )  # fmt: skip

    def validate_query(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("The query is empty.")
        return value


class ContextItemSerializer(serializers.Serializer):
    id = serializers.CharField()
    tokens = serializers.IntegerField()
    role = serializers.CharField(required=False)
    score = serializers.FloatField(required=False)
    components = serializers.DictField(child=serializers.FloatField(), required=False)
    current = serializers.BooleanField(
        required=False, help_text="false for a history line (include_history)"
    )
    valid_to = serializers.DateTimeField(
        required=False, help_text="when a history line stopped holding"
    )


class ContextSectionSerializer(serializers.Serializer):
    name = serializers.ChoiceField(choices=["system", *DEFAULT_PRIORITIES, "query"])
    tokens = serializers.IntegerField()
    items = ContextItemSerializer(many=True)


class ChatMessageSerializer(serializers.Serializer):
    role = serializers.CharField()
    content = serializers.CharField()


class DroppedSerializer(serializers.Serializer):
    section = serializers.CharField()
    id = serializers.CharField()
    tokens = serializers.IntegerField()
    reason = serializers.ChoiceField(
        choices=["budget", "section_cap", "window", "summarized", "limit"]
    )


class ContextResponseSerializer(serializers.Serializer):
    messages = ChatMessageSerializer(many=True)
    sections = ContextSectionSerializer(many=True)
    total_tokens = serializers.IntegerField()
    budget_tokens = serializers.IntegerField()
    tokenizer = serializers.CharField()
    exact = serializers.BooleanField()
    model = serializers.CharField()
    strategy = serializers.CharField()
    dropped = DroppedSerializer(many=True)
    cost_usd = serializers.FloatField()
    recall_id = serializers.UUIDField()
    timings_ms = serializers.DictField(child=serializers.FloatField())
