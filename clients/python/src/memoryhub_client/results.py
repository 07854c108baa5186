"""What the API answers, typed. Each dataclass is named after the OpenAPI component it
reads (`/api/schema/`), and the project's tests check its fields against that component.

Fields the server adds later are ignored, so an older SDK keeps working against a newer
server. Timestamps are timezone-aware `datetime`s; ids are strings.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, TypedDict, TypeVar, Union, get_args, get_origin, get_type_hints

from memoryhub_client.errors import UnexpectedResponse

MemoryKind = Literal["semantic", "episodic", "procedural"]
MemoryStatus = Literal["active", "archived", "pending_review", "disputed"]
JobStatus = Literal["queued", "running", "succeeded", "failed"]
MessageRole = Literal["user", "assistant", "system", "tool"]
SectionName = Literal["system", "procedural", "turns", "memories", "summary", "shared", "query"]
DropReason = Literal["budget", "section_cap", "window", "summarized", "limit"]
ActorType = Literal["user", "api_key", "subject", "system", "anonymous"]
Outcome = Literal["success", "denied", "failed"]
Flow = Literal["overview", "memories", "export", "erase", "pause"]
Strategy = Literal["buffer", "window", "summary", "summary_buffer"]
Placement = Literal["edges", "ranked"]


@dataclass(frozen=True, kw_only=True)
class Memory:
    id: str
    subject: str | None
    content: str
    kind: MemoryKind
    tags: list[str]
    metadata: dict[str, Any]
    importance: float
    confidence: float
    source: dict[str, Any]
    status: MemoryStatus
    version: int
    occurred_at: datetime | None
    created_at: datetime
    updated_at: datetime
    valid_from: datetime
    valid_to: datetime | None
    expires_at: datetime | None
    # The memory that replaced this one: None while it holds, or when it ended with none.
    superseded_by: str | None = None


@dataclass(frozen=True, kw_only=True)
class MemoryVersion:
    version: int
    content: str
    changed_by: str
    reason: str
    created_at: datetime


@dataclass(frozen=True, kw_only=True)
class RecallComponents:
    """How a result's score was made: each signal's contribution, and the calibrated
    relevance (0..1)."""

    vector: float
    context: float
    keyword: float
    boosts: float
    recency: float
    importance: float
    final: float
    relevance: float


@dataclass(frozen=True, kw_only=True)
class RecallHit:
    memory: Memory
    current: bool = True  # False: history (include_history), no longer true
    score: float
    relevance: float
    components: RecallComponents


@dataclass(frozen=True, kw_only=True)
class RecallResponse:
    results: list[RecallHit]
    recall_id: str | None
    timings_ms: dict[str, float]


@dataclass(frozen=True, kw_only=True)
class Feedback:
    id: str
    recall_id: str
    memory_id: str
    relevant: bool
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, kw_only=True)
class ChatMessage:
    role: str
    content: str


@dataclass(frozen=True, kw_only=True)
class ContextItem:
    id: str
    tokens: int
    role: str | None = None
    score: float | None = None
    components: dict[str, float] | None = None
    current: bool | None = None  # False for a history line (include_history)
    valid_to: datetime | None = None  # when a history line stopped holding


@dataclass(frozen=True, kw_only=True)
class ContextSection:
    name: SectionName
    tokens: int
    items: list[ContextItem]


@dataclass(frozen=True, kw_only=True)
class Dropped:
    """An item left out of the context, and why."""

    section: str
    id: str
    tokens: int
    reason: DropReason


@dataclass(frozen=True, kw_only=True)
class ContextResponse:
    """Chat messages ready to send (OpenAI format), and how they were packed."""

    messages: list[ChatMessage]
    sections: list[ContextSection]
    total_tokens: int
    budget_tokens: int
    tokenizer: str
    exact: bool
    model: str
    strategy: str
    dropped: list[Dropped]
    cost_usd: float
    recall_id: str
    timings_ms: dict[str, float]


@dataclass(frozen=True, kw_only=True)
class Job:
    id: str
    namespace: str
    subject: str | None
    kind: str
    status: JobStatus
    result: Any
    error: str
    attempts: int
    created_at: datetime
    updated_at: datetime
    url: str

    @property
    def done(self) -> bool:
        return self.status in ("succeeded", "failed")


@dataclass(frozen=True, kw_only=True)
class DocumentIngestResult:
    document: str
    chunks: int
    memories: list[str]
    tokens: list[int]
    job: Job | None


@dataclass(frozen=True, kw_only=True)
class Subject:
    external_id: str
    paused: bool
    created_at: datetime
    memories: int


@dataclass(frozen=True, kw_only=True)
class ErasureReceipt:
    """What an erasure destroyed, without any content; `receipt_hash` is the audit chain's."""

    subject_id: str
    subject_fingerprint: str
    memories_deleted: int
    versions_deleted: int
    data_keys_destroyed: int
    erased_at: datetime
    receipt_hash: str
    audit_event_id: int


@dataclass(frozen=True, kw_only=True)
class PortalSession:
    """A link to the privacy portal for one person: it works once, until `expires_at`."""

    url: str
    expires_at: datetime


@dataclass(frozen=True, kw_only=True)
class AuditEvent:
    id: int
    created_at: datetime
    actor_type: ActorType
    actor_id: str
    actor_name: str
    action: str
    namespace_slug: str
    subject_id: str | None
    object_type: str
    object_id: str
    request_id: str
    ip: str | None
    outcome: Outcome
    details: Any
    prev_hash: str
    hash: str


# The subject export is a document to keep (and verify) as it is, so it stays a dict. Its
# JSON Schema: /api/v1/schemas/subject-export-v1.json.
class _SubjectExportRequired(TypedDict):
    namespace: str
    subject: dict[str, Any]
    exported_at: str
    memories: list[dict[str, Any]]


class SubjectExport(_SubjectExportRequired, total=False):
    sessions: list[dict[str, Any]]
    recalls: list[dict[str, Any]]
    eval_cases: list[dict[str, Any]]


# --- Webhooks (needs `webhooks:admin`) -----------------------------------------------------

DeliveryStatus = Literal["pending", "delivered", "failed"]


@dataclass(frozen=True, kw_only=True)
class WebhookEndpoint:
    """Where a namespace's events go (never with its secret, except once, at creation)."""

    id: str
    url: str
    events: list[str]
    include_content: bool
    created_by: str
    failing_since: datetime | None
    created_at: datetime


@dataclass(frozen=True, kw_only=True)
class WebhookEndpointCreated(WebhookEndpoint):
    secret: str  # `whsec_…`, shown this once


@dataclass(frozen=True, kw_only=True)
class WebhookSecret:
    secret: str
    previous_secret_until: datetime | None


@dataclass(frozen=True, kw_only=True)
class WebhookAttempt:
    started_at: datetime
    latency_ms: float
    status_code: int | None
    response_body: str
    error: str


@dataclass(frozen=True, kw_only=True)
class WebhookDelivery:
    """One event to one endpoint; `webhook_id` is the receiver's idempotency key."""

    id: str
    webhook_id: str
    event_id: str
    event_type: str
    status: DeliveryStatus
    attempts_made: int
    next_attempt_at: datetime | None
    last_status_code: int | None
    created_at: datetime
    attempts: list[WebhookAttempt]


RESULT_TYPES: tuple[type[Any], ...] = (
    WebhookEndpoint,
    WebhookEndpointCreated,
    WebhookSecret,
    WebhookAttempt,
    WebhookDelivery,
    Memory,
    MemoryVersion,
    RecallComponents,
    RecallHit,
    RecallResponse,
    Feedback,
    ChatMessage,
    ContextItem,
    ContextSection,
    Dropped,
    ContextResponse,
    Job,
    DocumentIngestResult,
    Subject,
    ErasureReceipt,
    PortalSession,
    AuditEvent,
)

T = TypeVar("T")
_HINTS: dict[type[Any], dict[str, Any]] = {}


def from_json(cls: type[T], data: Any) -> T:
    """`cls` built from a decoded JSON object: nested results, lists and timestamps
    converted by the field's type; unknown keys ignored; a missing field refused."""
    if not isinstance(data, Mapping):
        raise UnexpectedResponse(f"Expected a JSON object for {cls.__name__}.")
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = get_type_hints(cls)
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]  # cls is a dataclass
        if field.name in data:
            values[field.name] = _convert(hints[field.name], data[field.name])
        elif field.default is dataclasses.MISSING:
            raise UnexpectedResponse(f"The answer's {cls.__name__} lacks {field.name!r}.")
    return cls(**values)


def _convert(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = get_origin(hint)
    if origin is Union or origin is types.UnionType:
        options = [arg for arg in get_args(hint) if arg is not type(None)]
        return _convert(options[0], value) if len(options) == 1 else value
    if hint is datetime:
        return parse_datetime(value)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return from_json(hint, value)
    if origin is list:
        (item,) = get_args(hint)
        return [_convert(item, element) for element in value]
    if origin is dict:
        _, item = get_args(hint)
        return {key: _convert(item, element) for key, element in value.items()}
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def parse_datetime(value: str) -> datetime:
    """An ISO 8601 timestamp, including the `Z` suffix (which Python 3.10 does not read)."""
    try:
        return datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
    except (TypeError, ValueError):
        raise UnexpectedResponse(f"Not a timestamp: {value!r}.") from None
