"""A tool's arguments read from a REST serializer (`apps.mcp_server.parameters`): the schema
the MCP SDK publishes and checks carries the serializer's fields, and what arrives is sent on
as JSON, leaving out what was not given."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError
from rest_framework import serializers

from apps.mcp_server.parameters import request_body, with_serializer_arguments
from apps.mcp_server.tools import invalid_arguments
from memoryhub.api.serializers import BoundedJSONObjectField, StrictSerializer


class WindowSerializer(StrictSerializer):
    since = serializers.DateTimeField(allow_null=True, required=False, default=None)
    labels = serializers.ListField(
        child=serializers.CharField(max_length=8), max_length=3, required=False, default=list
    )
    extra = BoundedJSONObjectField(required=False, default=dict)


class SearchOptionsSerializer(StrictSerializer):
    size = serializers.IntegerField(
        min_value=1, max_value=20, required=False, default=None, help_text="How many."
    )
    weight = serializers.FloatField(min_value=0.0, max_value=1.0, allow_null=True, default=None)
    colour = serializers.ChoiceField(choices=["red", "green"], required=False)
    strict = serializers.BooleanField(default=True)
    window = WindowSerializer(required=False)


def tool_server() -> MCPServer:
    """An MCP server with one tool, `search`, that answers with the request body it would
    send: its own argument and SearchOptionsSerializer's."""
    mcp = MCPServer(name="test")

    @mcp.tool()
    @with_serializer_arguments(SearchOptionsSerializer())
    async def search(text: str, **options: Any) -> dict[str, Any]:
        return {"text": text, **request_body(options)}

    return mcp


def schema() -> dict[str, Any]:
    (tool,) = asyncio.run(tool_server().list_tools())
    return dict(tool.input_schema)


def call(arguments: dict[str, Any]) -> dict[str, Any]:
    result = asyncio.run(tool_server().call_tool("search", arguments))
    assert not result.is_error, result.content
    return dict(result.structured_content or {})


def refusal(arguments: dict[str, Any]) -> dict[str, list[str]]:
    with pytest.raises(ToolError) as refused:
        asyncio.run(tool_server().call_tool("search", arguments))
    assert isinstance(refused.value.__cause__, ValidationError)
    return invalid_arguments(refused.value.__cause__)


def test_it_takes_each_field_of_the_serializer_as_an_argument() -> None:
    found = schema()
    assert set(found["properties"]) == {"text", "size", "weight", "colour", "strict", "window"}
    assert found["required"] == ["text"]


def test_it_keeps_the_fields_bounds_choices_help_and_plain_defaults() -> None:
    properties = schema()["properties"]
    size, weight = properties["size"], properties["weight"]
    assert size["anyOf"][0] == {"type": "integer", "minimum": 1, "maximum": 20}
    assert size["description"] == "How many."
    assert size["default"] is None
    assert weight["anyOf"][0] == {"type": "number", "minimum": 0.0, "maximum": 1.0}
    assert properties["colour"]["anyOf"][0] == {"type": "string", "enum": ["red", "green"]}
    assert properties["strict"]["default"] is True


def test_it_describes_a_nested_serializer_as_an_object_of_its_fields_and_no_other() -> None:
    found = schema()
    window = found["$defs"]["Window"]
    assert window["additionalProperties"] is False
    assert set(window["properties"]) == {"since", "labels", "extra"}
    labels = window["properties"]["labels"]["anyOf"][0]
    assert labels["maxItems"] == 3
    assert labels["items"] == {"type": "string", "minLength": 1, "maxLength": 8}
    assert window["properties"]["extra"]["anyOf"][0]["type"] == "object"


def test_it_sends_only_what_was_given_as_json() -> None:
    assert call({"text": "tea"}) == {"text": "tea", "strict": True}
    sent = call(
        {
            "text": "tea",
            "size": 3,
            "colour": "red",
            "window": {"since": "2024-05-01T10:00:00+02:00", "labels": ["a"]},
        }
    )
    assert sent == {
        "text": "tea",
        "size": 3,
        "colour": "red",
        "strict": True,
        "window": {"since": "2024-05-01T10:00:00+02:00", "labels": ["a"]},
    }


def test_it_refuses_what_the_serializer_refuses_naming_the_argument() -> None:
    assert refusal({"text": "tea", "size": 21}) == {
        "size": ["Ensure this value is less than or equal to 20."]
    }
    assert refusal({"text": "tea", "weight": "heavy"}) == {
        "weight": ["A valid number is required."]
    }
    assert refusal({"text": "tea", "window": {"labels": ["a", "b", "c", "d"]}}) == {
        "window.labels": ["Ensure this field has no more than 3 elements."]
    }
    assert refusal({"text": "tea", "window": {"colour": "red"}}) == {
        "window.colour": ["Unknown field."]
    }


def test_it_refuses_a_field_it_cannot_describe() -> None:
    class PriceSerializer(serializers.Serializer):
        price = serializers.DecimalField(max_digits=5, decimal_places=2)

    async def tool(**options: Any) -> None:
        return None

    with pytest.raises(TypeError, match="DecimalField"):
        with_serializer_arguments(PriceSerializer())(tool)
