"""The Python SDK of MemoryHub's REST API.

from memoryhub_client import MemoryHub

with MemoryHub("http://127.0.0.1:8000", api_key) as hub:
    acme = hub.namespace("acme")
    acme.memories.create("Prefers answers in French", subject="user-42")
    for hit in acme.recall("Which language?", subject="user-42").results:
        print(hit.score, hit.memory.content)
"""

from memoryhub_client.async_client import (
    AsyncMemories,
    AsyncMemoryHub,
    AsyncNamespace,
    AsyncSubjects,
)
from memoryhub_client.errors import (
    AuthenticationFailed,
    Conflict,
    JobFailed,
    JobTimeout,
    MemoryHubError,
    NetworkError,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    RateLimited,
    ServerError,
    ServiceUnavailable,
    UnexpectedResponse,
    Unprocessable,
    ValidationError,
    WebhookVerificationFailed,
)
from memoryhub_client.inputs import (
    UNSET,
    ContextRecallOptions,
    MemorySource,
    RecallFilters,
    RecallOptions,
    SectionOverride,
    SectionOverrides,
    Turn,
)
from memoryhub_client.results import (
    AuditEvent,
    ChatMessage,
    ContextItem,
    ContextResponse,
    ContextSection,
    DocumentIngestResult,
    Dropped,
    ErasureReceipt,
    Feedback,
    Job,
    Memory,
    MemoryVersion,
    PortalSession,
    RecallComponents,
    RecallHit,
    RecallResponse,
    Subject,
    SubjectExport,
)
from memoryhub_client.retries import NO_RETRIES, RetryPolicy
from memoryhub_client.sync_client import Memories, MemoryHub, Namespace, Subjects
from memoryhub_client.version import VERSION as __version__
from memoryhub_client.webhooks import verify_webhook

__all__ = [
    "NO_RETRIES",
    "UNSET",
    "AsyncMemories",
    "AsyncMemoryHub",
    "AsyncNamespace",
    "AsyncSubjects",
    "AuditEvent",
    "AuthenticationFailed",
    "ChatMessage",
    "Conflict",
    "ContextItem",
    "ContextRecallOptions",
    "ContextResponse",
    "ContextSection",
    "DocumentIngestResult",
    "Dropped",
    "ErasureReceipt",
    "Feedback",
    "Job",
    "JobFailed",
    "JobTimeout",
    "Memories",
    "Memory",
    "MemoryHub",
    "MemoryHubError",
    "MemorySource",
    "MemoryVersion",
    "Namespace",
    "NetworkError",
    "NotFound",
    "PayloadTooLarge",
    "PermissionDenied",
    "PortalSession",
    "RateLimited",
    "RecallComponents",
    "RecallFilters",
    "RecallHit",
    "RecallOptions",
    "RecallResponse",
    "RetryPolicy",
    "SectionOverride",
    "SectionOverrides",
    "ServerError",
    "ServiceUnavailable",
    "Subject",
    "SubjectExport",
    "Subjects",
    "Turn",
    "UnexpectedResponse",
    "Unprocessable",
    "ValidationError",
    "WebhookVerificationFailed",
    "__version__",
    "verify_webhook",
]
