from __future__ import annotations

from rest_framework import serializers

from apps.webhooks.catalog import EVENT_TYPES
from apps.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint


class WebhookEndpointCreateSerializer(serializers.Serializer):
    url = serializers.CharField(max_length=2000)
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=EVENT_TYPES), allow_empty=False, max_length=50
    )
    include_content = serializers.BooleanField(required=False, default=False)


class WebhookEndpointSerializer(serializers.ModelSerializer):
    """An endpoint as listed: never its secret."""

    class Meta:
        model = WebhookEndpoint
        fields = ["id", "url", "events", "include_content", "created_by", "failing_since"]
        fields += ["created_at"]
        read_only_fields = fields  # all present in every answer


class WebhookEndpointCreatedSerializer(WebhookEndpointSerializer):
    secret = serializers.SerializerMethodField()

    class Meta(WebhookEndpointSerializer.Meta):
        fields = [*WebhookEndpointSerializer.Meta.fields, "secret"]
        read_only_fields = fields

    def get_secret(self, endpoint: WebhookEndpoint) -> str:
        return str(self.context["secret"])


class WebhookSecretSerializer(serializers.Serializer):
    secret = serializers.CharField()
    previous_secret_until = serializers.DateTimeField(allow_null=True)


class WebhookAttemptSerializer(serializers.ModelSerializer):
    response_body = serializers.SerializerMethodField()

    class Meta:
        model = WebhookAttempt
        fields = ["started_at", "latency_ms", "status_code", "response_body", "error"]
        read_only_fields = fields

    def get_response_body(self, attempt: WebhookAttempt) -> str:
        """The first 1 KiB of the answer, as text (undecodable bytes replaced)."""
        return bytes(attempt.response_body).decode("utf-8", errors="replace")


class WebhookDeliverySerializer(serializers.ModelSerializer):
    event_type = serializers.CharField(source="event.type")
    event_id = serializers.UUIDField(source="event.id")
    webhook_id = serializers.SerializerMethodField()
    attempts_made = serializers.IntegerField(source="attempts")
    attempts = WebhookAttemptSerializer(source="tries", many=True, read_only=True)

    class Meta:
        model = WebhookDelivery
        fields = ["id", "webhook_id", "event_id", "event_type", "status", "attempts_made"]
        fields += ["next_attempt_at", "last_status_code", "created_at", "attempts"]
        read_only_fields = fields

    def get_webhook_id(self, delivery: WebhookDelivery) -> str:
        return f"msg_{delivery.pk.hex}"
