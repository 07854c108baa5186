"""The SDK checked against the live server's OpenAPI schema (`/api/schema/`): every result
type against the component it is named after, every call's parameters against the request
body or query it fills, and every call's path and method against the schema's paths. A
renamed, removed, retyped or added field fails here."""

from __future__ import annotations

import dataclasses
import inspect
import types
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import (
    Any,
    Literal,
    Union,
    Unpack,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)

import httpx
import pytest
from memoryhub_client import (
    NO_RETRIES,
    Memories,
    MemoryHub,
    Namespace,
    NotFound,
    Subjects,
    results,
)
from memoryhub_client.inputs import Unset

JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}
# Parameters of the SDK's own (not sent in the body, or sent as a header).
SDK_ONLY = {"idempotency_key", "wait", "wait_timeout"}
# A call, the request component (or "METHOD path" for query parameters) it fills, and the
# parameters that go in the path.
REQUESTS: list[tuple[Callable[..., Any], str, set[str]]] = [
    (Memories.create, "MemoryCreateRequest", set()),
    (Memories.update, "PatchedMemoryUpdateRequest", {"memory_id"}),
    (Memories.list, "get /api/v1/namespaces/{namespace}/memories", set()),
    (Namespace.recall, "RecallRequestRequest", set()),
    (Namespace.feedback, "FeedbackRequestRequest", {"recall_id"}),
    (Namespace.context, "ContextRequestRequest", set()),
    (Namespace.messages, "MessagesIngestRequest", set()),
    (Namespace.documents, "DocumentIngestRequest", set()),
    (Namespace.audit, "get /api/v1/namespaces/{namespace}/audit", set()),
    (Subjects.portal_session, "PortalSessionRequestRequest", {"external_id"}),
]


def parameters(method: Callable[..., Any]) -> dict[str, Any]:
    """A call's parameters and their annotations; `**options: Unpack[SomeTypedDict]` stands
    for the TypedDict's keys."""
    hints = get_type_hints(method)
    found: dict[str, Any] = {}
    for name, parameter in inspect.signature(method).parameters.items():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            assert get_origin(hints[name]) is Unpack, f"{method.__qualname__}: **{name} untyped"
            found.update(get_type_hints(get_args(hints[name])[0]))
        else:
            found[name] = hints.get(name)
    return found


@pytest.fixture
def schema(server_url: str) -> dict[str, Any]:
    response = httpx.get(f"{server_url}/api/schema/", params={"format": "json"})
    assert response.status_code == 200
    return dict(response.json())


@pytest.fixture
def components(schema: dict[str, Any]) -> dict[str, Any]:
    return dict(schema["components"]["schemas"])


class Checker:
    """Compares Python annotations with OpenAPI schemas; collects what differs."""

    def __init__(self, components: dict[str, Any], *, response: bool) -> None:
        self.components = components
        self.response = response  # a result must accept every null the schema allows
        self.problems: list[str] = []

    def resolve(self, schema: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
        """The schema behind a $ref (or a one-item allOf), and the component's name."""
        schema = dict(schema)
        if len(schema.get("allOf", [])) == 1:
            nullable = schema.get("nullable", False)
            schema = {**schema.pop("allOf")[0], "nullable": nullable, **schema}
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[-1]
            return {
                **self.components[name],
                **{k: v for k, v in schema.items() if k != "$ref"},
            }, name
        return schema, None

    def fields(
        self, where: str, names: Mapping[str, Any], required: set[str], schema: Mapping[str, Any]
    ) -> None:
        """`names` (field -> annotation) against an object schema's properties."""
        properties = schema.get("properties", {})
        for name in sorted(set(names) - set(properties)):
            self.problems.append(f"{where}.{name}: not in the schema")
        for name in sorted(set(properties) - set(names)):
            self.problems.append(f"{where}.{name}: in the schema, missing from the SDK")
        if self.response:
            for name in sorted(required - set(schema.get("required", []))):
                self.problems.append(f"{where}.{name}: required by the SDK, optional in the schema")
        for name in sorted(set(names) & set(properties)):
            self.value(f"{where}.{name}", names[name], properties[name])

    def value(self, where: str, annotation: Any, schema: Mapping[str, Any]) -> None:
        schema, component = self.resolve(schema)
        options = (
            get_args(annotation)
            if get_origin(annotation) in (Union, types.UnionType)
            else (annotation,)
        )
        options = tuple(
            option for option in options if option is not type(None) and option is not Unset
        )
        accepts_none = len(options) < len(get_args(annotation) or (annotation,))
        if self.response and schema.get("nullable") and not accepts_none:
            self.problems.append(f"{where}: nullable in the schema, not in the SDK")
        if set(options) == {datetime, str}:  # a request's timestamp, given either way
            options = (datetime,)
        if len(options) != 1:
            self.problems.append(f"{where}: {annotation} has no single type to check")
            return
        (annotation,) = options
        origin = get_origin(annotation)
        if annotation is Any:
            return
        if annotation is datetime:
            self.expect(where, schema, "string", "date-time")
        elif origin is Literal:
            if set(get_args(annotation)) != set(schema.get("enum", [])):
                self.problems.append(
                    f"{where}: {get_args(annotation)} != enum {schema.get('enum')}"
                )
        elif annotation in JSON_TYPES:
            self.expect(where, schema, JSON_TYPES[annotation], None)
        elif origin in (list, Sequence):
            self.expect(where, schema, "array", None)
            (item,) = get_args(annotation)
            self.value(f"{where}[]", item, schema.get("items", {}))
        elif origin in (dict, Mapping):
            self.expect(where, schema, "object", None)
            if "properties" in schema:
                self.problems.append(
                    f"{where}: a dict in the SDK, an object with properties in the schema"
                )
        elif dataclasses.is_dataclass(annotation):
            if component != annotation.__name__:
                self.problems.append(
                    f"{where}: {annotation.__name__} but the schema has {component}"
                )
        elif is_typeddict(annotation):
            hints = get_type_hints(annotation)
            self.fields(where, hints, set(annotation.__required_keys__), schema)
        else:
            self.problems.append(f"{where}: cannot check {annotation}")

    def expect(
        self, where: str, schema: Mapping[str, Any], json_type: str, format: str | None
    ) -> None:
        found = (
            schema.get("type"),
            schema.get("format") if schema.get("format") == "date-time" else None,
        )
        if found != (json_type, format):
            wanted = f"{json_type} ({format})" if format else json_type
            self.problems.append(f"{where}: {wanted} in the SDK, {found} in the schema")


def test_it_matches_each_result_type_to_its_schema_component(components) -> None:
    checker = Checker(components, response=True)
    for cls in results.RESULT_TYPES:
        if cls.__name__ not in components:
            checker.problems.append(f"{cls.__name__}: no such component in the schema")
            continue
        hints = get_type_hints(cls)
        fields = {field.name: hints[field.name] for field in dataclasses.fields(cls)}
        required = {
            field.name for field in dataclasses.fields(cls) if field.default is dataclasses.MISSING
        }
        checker.fields(cls.__name__, fields, required, components[cls.__name__])
    assert checker.problems == []


def test_it_reads_memory_pages_by_the_schemas_fields(components) -> None:
    assert {"next", "results"} <= set(components["PaginatedMemoryList"]["properties"])
    assert {"next", "results"} <= set(components["PaginatedAuditEventList"]["properties"])


def test_it_sends_each_calls_parameters_as_the_schema_names_them(schema, components) -> None:
    checker = Checker(components, response=False)
    for method, target, in_path in REQUESTS:
        params = {
            name: hint
            for name, hint in parameters(method).items()
            if name != "self" and name not in SDK_ONLY | in_path
        }
        if " " in target:
            verb, path = target.split(" ", 1)
            operation = schema["paths"][path][verb]
            query = {p["name"]: p["schema"] for p in operation["parameters"] if p["in"] == "query"}
            query.pop("cursor")  # the SDK follows the cursors itself
            checker.fields(method.__qualname__, params, set(), {"properties": query})
        else:
            checker.fields(method.__qualname__, params, set(), components[target])
    assert checker.problems == []


def test_it_sends_every_call_to_a_path_and_method_of_the_schema(schema) -> None:
    """Every SDK call, sent to a recorder; and every documented endpoint has its call."""
    sent: set[tuple[str, str]] = set()

    def record(request: httpx.Request) -> httpx.Response:
        sent.add((request.method.lower(), request.url.path))
        return httpx.Response(
            404, json={"error": {"code": "not_found", "message": "", "details": {}}}
        )

    hub = MemoryHub(
        "http://recorder", "key", retries=NO_RETRIES, transport=httpx.MockTransport(record)
    )
    ns = hub.namespace("{namespace}")
    every_call: list[Callable[[], object]] = [
        lambda: ns.memories.create(""),
        lambda: list(ns.memories.list()),
        lambda: ns.memories.get("{memory_id}"),
        lambda: ns.memories.update("{memory_id}", content=""),
        lambda: ns.memories.delete("{memory_id}"),
        lambda: ns.memories.versions("{memory_id}"),
        lambda: ns.subjects.get("{external_id}"),
        lambda: ns.subjects.export("{external_id}"),
        lambda: ns.subjects.erase("{external_id}"),
        lambda: ns.subjects.portal_session("{external_id}"),
        lambda: ns.recall(""),
        lambda: ns.feedback("{recall_id}", memory_id="", relevant=True),
        lambda: ns.context(""),
        lambda: ns.messages(subject="", session="", messages=[]),
        lambda: ns.documents(""),
        lambda: list(ns.audit()),
        lambda: hub.job("{job_id}"),
        lambda: ns.webhooks.list(),
        lambda: ns.webhooks.create("", events=[]),
        lambda: ns.webhooks.delete("{endpoint_id}"),
        lambda: ns.webhooks.rotate_secret("{endpoint_id}"),
        lambda: ns.webhooks.test("{endpoint_id}"),
        lambda: list(ns.webhooks.deliveries("{endpoint_id}")),
        lambda: ns.webhooks.redeliver("{endpoint_id}", "{delivery_id}"),
    ]
    for call in every_call:
        with pytest.raises(NotFound):
            call()
    documented = {
        (verb, path)
        for path, item in schema["paths"].items()
        for verb in item
        if path.startswith("/api/v1/")
    }
    assert sent - documented == set(), "sent where the schema documents nothing"
    assert documented - sent == set(), "documented, but no SDK call sends it"


def test_it_keeps_the_subject_export_type_to_its_json_schema(server_url: str) -> None:
    document = httpx.get(f"{server_url}/api/v1/schemas/subject-export-v1.json").json()
    export = results.SubjectExport
    properties = set(document["properties"]) - {"$schema"}
    assert set(get_type_hints(export)) == properties
    assert set(export.__required_keys__) == set(document["required"]) - {"$schema"}
