"""A tool's arguments read from the REST serializer whose fields it passes on. The tool then
states them nowhere else: its schema (what the model is shown, and what the MCP SDK checks
before the call) carries the serializer's names, types, bounds, choices and help texts, and
a field added to the serializer is an argument of the tool. The REST view validates them
again, as it validates every request."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import ConfigDict, Field, TypeAdapter, create_model
from rest_framework import serializers
from rest_framework.fields import empty

from memoryhub.api.serializers import BoundedJSONObjectField

Tool = TypeVar("Tool", bound=Callable[..., Coroutine[Any, Any, Any]])

_JSON: TypeAdapter[Any] = TypeAdapter(Any)


def with_serializer_arguments(serializer: serializers.Serializer) -> Callable[[Tool], Tool]:
    """Give the decorated tool one keyword argument per field of `serializer`, collected by
    its `**arguments`. An optional field's argument may be left out or null: the serializer's
    default then applies (its plain default is shown in the schema)."""

    def decorate(tool: Tool) -> Tool:
        # Evaluated: a signature given as __signature__ is read as it is, strings and all.
        signature = inspect.signature(tool, eval_str=True)
        own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
        added = [_parameter(name, field) for name, field in serializer.fields.items()]
        # The MCP SDK reads a tool's arguments from its signature, which inspect takes from
        # __signature__ when a function has one.
        tool.__signature__ = signature.replace(parameters=[*own, *added])  # type: ignore[attr-defined]
        return tool

    return decorate


def request_body(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments given, as JSON for the REST call: those left out (None) are not sent."""
    return {
        name: _JSON.dump_python(value, mode="json", exclude_none=True)
        for name, value in arguments.items()
        if value is not None
    }


def _parameter(name: str, field: serializers.Field) -> inspect.Parameter:
    annotation, default = _argument(field)
    return inspect.Parameter(
        name,
        inspect.Parameter.KEYWORD_ONLY,
        annotation=annotation,
        default=inspect.Parameter.empty if default is empty else default,
    )


def _argument(field: serializers.Field) -> tuple[Any, Any]:
    """The annotated type of `field`'s argument (with None when it may be left out), and its
    default (`empty` when it is required)."""
    annotation = _annotation(field)
    default: Any = empty
    if not field.required:
        annotation = annotation | None
        plain = field.default is not empty and not callable(field.default)
        default = field.default if plain else None
    description = str(field.help_text) if field.help_text else None
    return Annotated[annotation, Field(description=description)], default


def _annotation(field: serializers.Field) -> Any:
    """The pydantic type of the values `field` accepts (with None when it allows null)."""
    annotation = _value_annotation(field)
    return annotation | None if field.allow_null else annotation


def _value_annotation(field: serializers.Field) -> Any:
    # Subclasses before their bases: a FloatField is no IntegerField, but a
    # BoundedJSONObjectField is a JSONField and a MultipleChoiceField a ChoiceField.
    if isinstance(field, serializers.BooleanField):
        return bool
    if isinstance(field, serializers.IntegerField):
        return Annotated[int, Field(ge=field.min_value, le=field.max_value)]
    if isinstance(field, serializers.FloatField):
        return Annotated[float, Field(ge=field.min_value, le=field.max_value)]
    if isinstance(field, serializers.MultipleChoiceField):
        raise TypeError(f"No tool argument reads a {type(field).__name__}.")
    if isinstance(field, serializers.ChoiceField):
        return Literal[tuple(field.choices)]
    if isinstance(field, serializers.CharField):
        shortest = field.min_length if field.min_length is not None else int(not field.allow_blank)
        return Annotated[str, Field(min_length=shortest, max_length=field.max_length)]
    if isinstance(field, serializers.DateTimeField):
        return datetime
    if isinstance(field, serializers.ListField):
        item = _annotation(field.child)
        length = Field(min_length=field.min_length, max_length=field.max_length)
        return Annotated[list[item], length]  # type: ignore[valid-type]  # built at run time
    if isinstance(field, BoundedJSONObjectField):
        return dict[str, Any]
    if isinstance(field, serializers.Serializer):
        return _model(field)
    raise TypeError(f"No tool argument reads a {type(field).__name__}.")


def _model(serializer: serializers.Serializer) -> Any:
    """A nested serializer's object: its fields, each optional as in the serializer, and no
    other (the API refuses fields it does not declare)."""
    fields: dict[str, Any] = {}
    for name, field in serializer.fields.items():
        annotation, default = _argument(field)
        fields[name] = annotation if default is empty else (annotation, default)
    name = type(serializer).__name__.removesuffix("Serializer")
    return create_model(name, __config__=ConfigDict(extra="forbid"), **fields)
