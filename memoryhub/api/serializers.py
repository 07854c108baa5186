"""Shared serializer pieces: strict input (unknown fields are errors) and the error shape."""

from __future__ import annotations

import json
from typing import Any

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers


class StrictSerializer(serializers.Serializer):
    """Rejects fields it does not declare, naming them, instead of silently ignoring them."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)


class StrictSerializerSchema(OpenApiSerializerExtension):
    """Documents what StrictSerializer enforces: no properties beyond the declared ones."""

    target_class = StrictSerializer
    match_subclasses = True

    def map_serializer(self, auto_schema: Any, direction: Any) -> Any:
        schema = auto_schema._map_basic_serializer(self.target, direction)
        schema["additionalProperties"] = False
        return schema


@extend_schema_field({"type": "object", "additionalProperties": {}})
class BoundedJSONObjectField(serializers.JSONField):
    """A JSON object (not a list or scalar) of bounded serialized size, without NUL bytes."""

    def __init__(self, *, max_bytes: int = 16_384, **kwargs: Any) -> None:
        self.max_bytes = max_bytes
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        if not isinstance(value, dict):
            raise serializers.ValidationError("Must be a JSON object.")
        encoded = json.dumps(value)
        if len(encoded.encode()) > self.max_bytes:
            raise serializers.ValidationError(f"Must be at most {self.max_bytes} bytes as JSON.")
        if "\\u0000" in encoded:
            raise serializers.ValidationError("Must not contain NUL characters.")
        return value


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    details = serializers.DictField()


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


def error_responses(*statuses: int) -> dict[int, type[ErrorSerializer]]:
    return {status: ErrorSerializer for status in statuses}
