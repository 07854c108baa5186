"""Each endpoint as a `Call`: its method, path, body and how its answer is read. The sync
and the async clients send the same calls; only their I/O differs."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar, cast
from urllib.parse import parse_qs, quote, urlsplit

import httpx

from memoryhub_client.errors import UnexpectedResponse
from memoryhub_client.inputs import (
    UNSET,
    ContextRecallOptions,
    MemorySource,
    RecallOptions,
    SectionOverrides,
    Turn,
    Unset,
)
from memoryhub_client.results import (
    AuditEvent,
    ContextResponse,
    DocumentIngestResult,
    ErasureReceipt,
    Feedback,
    Flow,
    Job,
    Memory,
    MemoryKind,
    MemoryStatus,
    MemoryVersion,
    Outcome,
    Placement,
    PortalSession,
    RecallResponse,
    Strategy,
    Subject,
    SubjectExport,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEndpointCreated,
    WebhookSecret,
    from_json,
)

T = TypeVar("T")
API = "/api/v1"


# --- Calls ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request. `repeatable`: safe to send again after a 503 or a lost connection."""

    method: str
    path: str
    read: Callable[[httpx.Response], T]
    params: dict[str, str] = field(default_factory=dict)
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    repeatable: bool = False


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next_cursor: str | None


def with_cursor(call: Call[Page[T]], cursor: str) -> Call[Page[T]]:
    return Call(
        call.method,
        call.path,
        call.read,
        params={**call.params, "cursor": cursor},
        headers=call.headers,
        repeatable=call.repeatable,
    )


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        raise UnexpectedResponse(
            "The answer is not JSON.", status_code=response.status_code
        ) from None


def _one(cls: type[T]) -> Callable[[httpx.Response], T]:
    return lambda response: from_json(cls, _json(response))


def _page(cls: type[T]) -> Callable[[httpx.Response], Page[T]]:
    def read(response: httpx.Response) -> Page[T]:
        data = _json(response)
        if not isinstance(data, dict) or not isinstance(data.get("results"), list):
            raise UnexpectedResponse("Expected a page of results.")
        return Page([from_json(cls, item) for item in data["results"]], _cursor(data.get("next")))

    return read


def _cursor(next_url: Any) -> str | None:
    """The cursor of the next page. The server's `next` is an absolute URL built from the
    Host it saw (wrong behind some proxies), so only its cursor is kept."""
    if not next_url:
        return None
    values = parse_qs(urlsplit(str(next_url)).query).get("cursor")
    return values[0] if values else None


def _nothing(response: httpx.Response) -> None:
    return None


def _segment(value: str) -> str:
    return quote(str(value), safe="")


def _ns(namespace: str, path: str = "") -> str:
    return f"{API}/namespaces/{_segment(namespace)}/{path}"


def _timestamp(value: datetime | str | None) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else value


def _present(**values: Any) -> dict[str, Any]:
    """The body's fields that were given: an omitted one takes the server's default."""
    return {
        name: _timestamp(value) if isinstance(value, datetime) else value
        for name, value in values.items()
        if value is not None and value is not UNSET
    }


# --- Memories -------------------------------------------------------------------------------


def memory_create(
    namespace: str,
    *,
    content: str,
    subject: str | None,
    kind: MemoryKind | None,
    tags: Sequence[str] | None,
    metadata: Mapping[str, Any] | None,
    importance: float | None,
    confidence: float | None,
    source: MemorySource | None,
    occurred_at: datetime | None,
    expires_at: datetime | None,
) -> Call[Memory]:
    body = _present(
        subject=subject,
        content=content,
        kind=kind,
        tags=list(tags) if tags is not None else None,
        metadata=dict(metadata) if metadata is not None else None,
        importance=importance,
        confidence=confidence,
        source=source,
        occurred_at=occurred_at,
        expires_at=expires_at,
    )
    return Call("POST", _ns(namespace, "memories"), _one(Memory), body=body)


def memory_list(
    namespace: str,
    *,
    subject: str | None,
    kind: MemoryKind | None,
    tag: str | None,
    status: MemoryStatus | None,
    since: datetime | None,
    until: datetime | None,
    page_size: int | None,
) -> Call[Page[Memory]]:
    params = _present(
        subject=subject,
        kind=kind,
        tag=tag,
        status=status,
        since=since,
        until=until,
        page_size=page_size,
    )
    return Call(
        "GET",
        _ns(namespace, "memories"),
        _page(Memory),
        params={name: str(value) for name, value in params.items()},
        repeatable=True,
    )


def memory_get(namespace: str, memory_id: str) -> Call[Memory]:
    path = _ns(namespace, f"memories/{_segment(memory_id)}")
    return Call("GET", path, _one(Memory), repeatable=True)


def memory_update(
    namespace: str,
    memory_id: str,
    *,
    content: str | None,
    reason: str | None,
    kind: MemoryKind | None,
    tags: Sequence[str] | None,
    metadata: Mapping[str, Any] | None,
    importance: float | None,
    confidence: float | None,
    status: MemoryStatus | None,
    occurred_at: datetime | Unset | None,
    expires_at: datetime | Unset | None,
) -> Call[Memory]:
    body = _present(
        content=content,
        reason=reason,
        kind=kind,
        tags=list(tags) if tags is not None else None,
        metadata=dict(metadata) if metadata is not None else None,
        importance=importance,
        confidence=confidence,
        status=status,
    )
    # None is meaningful for these two (clear the time); UNSET leaves them out.
    for name, value in (("occurred_at", occurred_at), ("expires_at", expires_at)):
        if value is not UNSET:
            body[name] = _timestamp(value)
    path = _ns(namespace, f"memories/{_segment(memory_id)}")
    return Call("PATCH", path, _one(Memory), body=body)


def memory_delete(namespace: str, memory_id: str) -> Call[None]:
    path = _ns(namespace, f"memories/{_segment(memory_id)}")
    return Call("DELETE", path, _nothing, repeatable=True)


def memory_versions(namespace: str, memory_id: str) -> Call[list[MemoryVersion]]:
    def read(response: httpx.Response) -> list[MemoryVersion]:
        data = _json(response)
        if not isinstance(data, dict) or not isinstance(data.get("results"), list):
            raise UnexpectedResponse("Expected a list of versions.")
        return [from_json(MemoryVersion, item) for item in data["results"]]

    path = _ns(namespace, f"memories/{_segment(memory_id)}/versions")
    return Call("GET", path, read, repeatable=True)


# --- Subjects -------------------------------------------------------------------------------


def subject_get(namespace: str, external_id: str) -> Call[Subject]:
    path = _ns(namespace, f"subjects/{_segment(external_id)}")
    return Call("GET", path, _one(Subject), repeatable=True)


def subject_export(namespace: str, external_id: str) -> Call[SubjectExport]:
    def read(response: httpx.Response) -> SubjectExport:
        data = _json(response)
        if not isinstance(data, dict) or "memories" not in data:
            raise UnexpectedResponse("Expected a subject export.")
        return cast(SubjectExport, data)

    path = _ns(namespace, f"subjects/{_segment(external_id)}/export")
    return Call("GET", path, read, repeatable=True)


def subject_erase(namespace: str, external_id: str) -> Call[ErasureReceipt]:
    # Not repeatable: a second erasure finds no subject (404) and its receipt is lost.
    path = _ns(namespace, f"subjects/{_segment(external_id)}/erase")
    return Call("POST", path, _one(ErasureReceipt))


def portal_session_create(
    namespace: str,
    external_id: str,
    *,
    return_url: str | None,
    locale: str | None,
    flow: Flow | None,
) -> Call[PortalSession]:
    body = _present(return_url=return_url, locale=locale, flow=flow)
    path = _ns(namespace, f"subjects/{_segment(external_id)}/portal-sessions")
    return Call("POST", path, _one(PortalSession), body=body)


# --- Recall and context ---------------------------------------------------------------------


def recall(
    namespace: str, *, query: str, subject: str | None, options: RecallOptions
) -> Call[RecallResponse]:
    unknown = sorted(set(options) - RecallOptions.__optional_keys__)
    if unknown:
        # What a misspelt keyword argument would raise, before anything is sent.
        raise TypeError(f"recall() got unexpected keyword arguments: {', '.join(unknown)}")
    filters = options.get("filters")
    body = _present(
        subject=subject,
        query=query,
        **{**options, "filters": _present(**filters) if filters is not None else None},
    )
    # A read: sent again, it only logs the recall once more.
    return Call("POST", _ns(namespace, "recall"), _one(RecallResponse), body=body, repeatable=True)


def feedback_give(
    namespace: str, recall_id: str, *, memory_id: str, relevant: bool, note: str | None
) -> Call[Feedback]:
    body = _present(memory_id=memory_id, relevant=relevant, note=note)
    path = _ns(namespace, f"recall/{_segment(recall_id)}/feedback")
    # Given again, feedback replaces the same key's earlier judgement: safe to repeat.
    return Call("POST", path, _one(Feedback), body=body, repeatable=True)


def context(
    namespace: str,
    *,
    query: str,
    subject: str | None,
    session: str | None,
    model: str | None,
    max_context_tokens: int | None,
    reserve_tokens: int | None,
    strategy: Strategy | None,
    system_prompt: str | None,
    recall: ContextRecallOptions | None,
    window: int | None,
    buffer_tokens: int | None,
    placement: Placement | None,
    sections: SectionOverrides | None,
    include_history: bool | None = None,
    as_of: datetime | str | None = None,
) -> Call[ContextResponse]:
    body = _present(
        subject=subject,
        session=session,
        query=query,
        model=model,
        max_context_tokens=max_context_tokens,
        reserve_tokens=reserve_tokens,
        strategy=strategy,
        system_prompt=system_prompt,
        recall=recall,
        window=window,
        buffer_tokens=buffer_tokens,
        placement=placement,
        sections=sections,
        include_history=include_history,
        as_of=as_of,
    )
    return Call(
        "POST", _ns(namespace, "context"), _one(ContextResponse), body=body, repeatable=True
    )


# --- The write pipeline ---------------------------------------------------------------------


def _idempotency(key: str | None) -> dict[str, str]:
    # One key per SDK call, so that every retry of it is recognised as the same request.
    return {"Idempotency-Key": key or f"sdk-{uuid.uuid4().hex}"}


def messages_ingest(
    namespace: str,
    *,
    subject: str,
    session: str,
    messages: Sequence[Turn],
    extract: bool | None,
    idempotency_key: str | None,
) -> Call[Job]:
    body = _present(
        subject=subject,
        session=session,
        messages=[_present(**turn) for turn in messages],
        extract=extract,
    )
    return Call(
        "POST",
        _ns(namespace, "messages"),
        _one(Job),
        body=body,
        headers=_idempotency(idempotency_key),
        repeatable=True,
    )


def document_ingest(
    namespace: str,
    *,
    text: str,
    subject: str | None,
    title: str | None,
    metadata: Mapping[str, Any] | None,
    tags: Sequence[str] | None,
    chunk_tokens: int | None,
    overlap_tokens: int | None,
    idempotency_key: str | None,
) -> Call[DocumentIngestResult]:
    body = _present(
        subject=subject,
        text=text,
        title=title,
        metadata=dict(metadata) if metadata is not None else None,
        tags=list(tags) if tags is not None else None,
        chunk_tokens=chunk_tokens,
        overlap_tokens=overlap_tokens,
    )
    return Call(
        "POST",
        _ns(namespace, "documents"),
        _one(DocumentIngestResult),
        body=body,
        headers=_idempotency(idempotency_key),
        repeatable=True,
    )


def job_get(job_id: str) -> Call[Job]:
    return Call("GET", f"{API}/jobs/{_segment(job_id)}", _one(Job), repeatable=True)


# --- Audit ----------------------------------------------------------------------------------


def audit_list(
    namespace: str,
    *,
    action: str | None,
    outcome: Outcome | None,
    subject_id: str | None,
    since: datetime | None,
    until: datetime | None,
    page_size: int | None,
) -> Call[Page[AuditEvent]]:
    params = _present(
        action=action,
        outcome=outcome,
        subject_id=subject_id,
        since=since,
        until=until,
        page_size=page_size,
    )
    return Call(
        "GET",
        _ns(namespace, "audit"),
        _page(AuditEvent),
        params={name: str(value) for name, value in params.items()},
        repeatable=True,
    )


# --- Webhooks (`webhooks:admin`) ------------------------------------------------------------


def _hook(namespace: str, endpoint_id: str, rest: str = "") -> str:
    return _ns(namespace, f"webhooks/{_segment(endpoint_id)}{rest}")


def webhook_list(namespace: str) -> Call[list[WebhookEndpoint]]:
    def read(response: httpx.Response) -> list[WebhookEndpoint]:
        data = _json(response)
        if not isinstance(data, list):
            raise UnexpectedResponse("Expected a list of webhook endpoints.")
        return [from_json(WebhookEndpoint, item) for item in data]

    return Call("GET", _ns(namespace, "webhooks"), read, repeatable=True)


def webhook_create(
    namespace: str, *, url: str, events: Sequence[str], include_content: bool
) -> Call[WebhookEndpointCreated]:
    body = {"url": url, "events": list(events), "include_content": include_content}
    return Call("POST", _ns(namespace, "webhooks"), _one(WebhookEndpointCreated), body=body)


def webhook_delete(namespace: str, endpoint_id: str) -> Call[None]:
    return Call("DELETE", _hook(namespace, endpoint_id), _nothing)


def webhook_rotate_secret(namespace: str, endpoint_id: str) -> Call[WebhookSecret]:
    # Not repeatable: a second rotation would retire the secret the first one returned.
    return Call("POST", _hook(namespace, endpoint_id, "/rotate-secret"), _one(WebhookSecret))


def webhook_test(namespace: str, endpoint_id: str) -> Call[WebhookDelivery]:
    return Call("POST", _hook(namespace, endpoint_id, "/test"), _one(WebhookDelivery))


def webhook_deliveries(
    namespace: str, endpoint_id: str, *, page_size: int | None
) -> Call[Page[WebhookDelivery]]:
    params = _present(page_size=page_size)
    return Call(
        "GET",
        _hook(namespace, endpoint_id, "/deliveries"),
        _page(WebhookDelivery),
        params={name: str(value) for name, value in params.items()},
        repeatable=True,
    )


def webhook_redeliver(namespace: str, endpoint_id: str, delivery_id: str) -> Call[WebhookDelivery]:
    path = _hook(namespace, endpoint_id, f"/deliveries/{_segment(delivery_id)}/redeliver")
    return Call("POST", path, _one(WebhookDelivery), repeatable=True)
