from rest_framework import serializers

from apps.audit.models import AuditEvent, Outcome
from apps.audit.services import COLUMNS
from memoryhub.api.serializers import StrictSerializer


class AuditEventSerializer(serializers.ModelSerializer):
    class Meta:
        model = AuditEvent
        # The chained columns and the hash (the namespace is shown by its slug).
        fields = [column for column in COLUMNS if column != "namespace_id"]
        read_only_fields = fields


class AuditQuerySerializer(StrictSerializer):
    action = serializers.CharField(max_length=64, required=False)
    outcome = serializers.ChoiceField(choices=Outcome.choices, required=False)
    subject_id = serializers.UUIDField(required=False)
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)
    cursor = serializers.CharField(required=False)
    page_size = serializers.IntegerField(min_value=1, max_value=200, required=False)
