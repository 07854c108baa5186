from __future__ import annotations

from rest_framework import serializers

from apps.privacy.models import Flow


class PortalSessionRequestSerializer(serializers.Serializer):
    return_url = serializers.CharField(required=False, allow_blank=True, max_length=2000)
    locale = serializers.CharField(required=False, default="en", max_length=16)
    flow = serializers.ChoiceField(choices=Flow.choices, required=False, default=Flow.OVERVIEW)


class PortalSessionSerializer(serializers.Serializer):
    url = serializers.CharField()
    expires_at = serializers.DateTimeField()
