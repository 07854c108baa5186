"""The synchronous client: `MemoryHub(base_url, api_key)`, then `.namespace(slug)`."""

from __future__ import annotations

import builtins
import dataclasses
import logging
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, TypeVar

import httpx

from memoryhub_client import calls
from memoryhub_client.calls import Call, Page
from memoryhub_client.errors import (
    JobFailed,
    JobTimeout,
    MemoryHubError,
    NetworkError,
    error_from_response,
)
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
)
from memoryhub_client.retries import RetryPolicy
from memoryhub_client.version import USER_AGENT

if sys.version_info >= (3, 11):
    from typing import Unpack
else:
    from typing_extensions import Unpack

T = TypeVar("T")
logger = logging.getLogger("memoryhub_client")


class MemoryHub:
    """A MemoryHub server, reached with one API key. Use it as a context manager, or call
    `close()`, to release its connections.

    `retries` says when a failed call is sent again (see `RetryPolicy`); `transport`
    replaces httpx's network transport (a proxy, a test double)."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 30.0,
        retries: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not api_key:
            raise ValueError("An API key is required.")
        self._retries = retries or RetryPolicy()
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers={
                "Authorization": f"Bearer {api_key}",
                "Accept": "application/json",
                "User-Agent": USER_AGENT,
            },
            timeout=timeout,
            transport=transport,
        )

    def namespace(self, slug: str) -> Namespace:
        """The calls of one namespace the key may use."""
        return Namespace(self, slug)

    def job(self, job_id: str) -> Job:
        return self._send(calls.job_get(job_id))

    def wait_for_job(
        self, job_id: str, *, timeout: float = 120.0, poll_interval: float = 0.5
    ) -> Job:
        """Poll a job until it has succeeded or failed (returned either way); JobTimeout
        after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            job = self.job(job_id)
            if job.done:
                return job
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise JobTimeout(job, timeout)
            time.sleep(min(poll_interval, remaining))
            poll_interval = min(poll_interval * 1.5, 5.0)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> MemoryHub:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _send(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            attempt += 1
            cause: Exception | None = None
            try:
                response = self._http.request(
                    call.method,
                    call.path,
                    params=call.params or None,
                    json=call.body,
                    headers=call.headers,
                )
            except httpx.TransportError as error:
                failure: MemoryHubError = NetworkError(f"{type(error).__name__}: {error}")
                cause = error
            else:
                if response.is_success:
                    return call.read(response)
                failure = error_from_response(response)
            delay = self._retries.delay(failure, attempt=attempt, repeatable=call.repeatable)
            if delay is None:
                raise failure from cause
            logger.info(
                "%s %s: %s; sending again in %.2f s", call.method, call.path, failure, delay
            )
            time.sleep(delay)

    def _pages(self, call: Call[Page[T]]) -> Iterator[T]:
        page = self._send(call)
        yield from page.items
        while page.next_cursor:
            page = self._send(calls.with_cursor(call, page.next_cursor))
            yield from page.items

    def _finished(self, job: Job, *, wait: bool, wait_timeout: float) -> Job:
        if not wait:
            return job
        if not job.done:
            job = self.wait_for_job(job.id, timeout=wait_timeout)
        if job.status == "failed":
            raise JobFailed(job)
        return job


class Namespace:
    """The endpoints of one namespace: `memories`, `subjects`, recall, context, the write
    pipeline and the audit log."""

    def __init__(self, hub: MemoryHub, slug: str) -> None:
        self._hub = hub
        self.slug = slug
        self.memories = Memories(hub, slug)
        self.subjects = Subjects(hub, slug)
        self.webhooks = Webhooks(hub, slug)

    def recall(
        self, query: str, *, subject: str | None = None, **options: Unpack[RecallOptions]
    ) -> RecallResponse:
        """Hybrid recall over the subject's memories (and the namespace's shared ones,
        unless include_shared=False). The options (`RecallOptions`: k, filters,
        include_shared, mmr, min_relevance, include_history) left out take the server's
        defaults; include_history=True adds superseded and ended facts (`current` False),
        ranked last."""
        return self._hub._send(
            calls.recall(self.slug, query=query, subject=subject, options=options)
        )

    def feedback(
        self, recall_id: str, *, memory_id: str, relevant: bool, note: str | None = None
    ) -> Feedback:
        """Whether a memory that a recall (or a context assembly) served was relevant."""
        return self._hub._send(
            calls.feedback_give(
                self.slug, recall_id, memory_id=memory_id, relevant=relevant, note=note
            )
        )

    def context(
        self,
        query: str,
        *,
        subject: str | None = None,
        session: str | None = None,
        model: str | None = None,
        max_context_tokens: int | None = None,
        reserve_tokens: int | None = None,
        strategy: Strategy | None = None,
        system_prompt: str | None = None,
        recall: ContextRecallOptions | None = None,
        window: int | None = None,
        buffer_tokens: int | None = None,
        placement: Placement | None = None,
        sections: SectionOverrides | None = None,
        include_history: bool | None = None,
        as_of: datetime | str | None = None,
    ) -> ContextResponse:
        """Chat messages for `model`'s budget: instructions, turns, recalled memories, the
        session summary and shared memories, packed by priority. `include_history` adds
        memories no longer current, each line marked "(superseded YYYY-MM-DD)"; `as_of`
        assembles the memories as they held at that moment (see `RecallOptions`)."""
        return self._hub._send(
            calls.context(
                self.slug,
                query=query,
                subject=subject,
                session=session,
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
        )

    def messages(
        self,
        *,
        subject: str,
        session: str,
        messages: Sequence[Turn],
        extract: bool | None = None,
        idempotency_key: str | None = None,
        wait: bool = True,
        wait_timeout: float = 120.0,
    ) -> Job:
        """Store conversation turns and extract memories from them. The call carries an
        Idempotency-Key (a new one unless given), so a retry stores nothing twice. With
        `wait`, returns the finished job (JobFailed if it failed); otherwise the job as the
        server answered (queued, with a broker)."""
        job = self._hub._send(
            calls.messages_ingest(
                self.slug,
                subject=subject,
                session=session,
                messages=messages,
                extract=extract,
                idempotency_key=idempotency_key,
            )
        )
        return self._hub._finished(job, wait=wait, wait_timeout=wait_timeout)

    def documents(
        self,
        text: str,
        *,
        subject: str | None = None,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        tags: Sequence[str] | None = None,
        chunk_tokens: int | None = None,
        overlap_tokens: int | None = None,
        idempotency_key: str | None = None,
        wait: bool = True,
        wait_timeout: float = 120.0,
    ) -> DocumentIngestResult:
        """Store a document as chunk memories. A large one is embedded by a job: with
        `wait`, the result holds the finished job."""
        result = self._hub._send(
            calls.document_ingest(
                self.slug,
                text=text,
                subject=subject,
                title=title,
                metadata=metadata,
                tags=tags,
                chunk_tokens=chunk_tokens,
                overlap_tokens=overlap_tokens,
                idempotency_key=idempotency_key,
            )
        )
        if result.job is None:
            return result
        job = self._hub._finished(result.job, wait=wait, wait_timeout=wait_timeout)
        return dataclasses.replace(result, job=job)

    def audit(
        self,
        *,
        action: str | None = None,
        outcome: Outcome | None = None,
        subject_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        page_size: int | None = None,
    ) -> Iterator[AuditEvent]:
        """The namespace's audit events, newest first, page after page."""
        return self._hub._pages(
            calls.audit_list(
                self.slug,
                action=action,
                outcome=outcome,
                subject_id=subject_id,
                since=since,
                until=until,
                page_size=page_size,
            )
        )


class Memories:
    def __init__(self, hub: MemoryHub, namespace: str) -> None:
        self._hub = hub
        self._namespace = namespace

    def create(
        self,
        content: str,
        *,
        subject: str | None = None,
        kind: MemoryKind | None = None,
        tags: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        importance: float | None = None,
        confidence: float | None = None,
        source: MemorySource | None = None,
        occurred_at: datetime | None = None,
        expires_at: datetime | None = None,
    ) -> Memory:
        """A memory about `subject` (None: shared by the namespace)."""
        return self._hub._send(
            calls.memory_create(
                self._namespace,
                content=content,
                subject=subject,
                kind=kind,
                tags=tags,
                metadata=metadata,
                importance=importance,
                confidence=confidence,
                source=source,
                occurred_at=occurred_at,
                expires_at=expires_at,
            )
        )

    def list(
        self,
        *,
        subject: str | None = None,
        kind: MemoryKind | None = None,
        tag: str | None = None,
        status: MemoryStatus | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        page_size: int | None = None,
    ) -> Iterator[Memory]:
        """Memories, newest first, fetched page after page as the iteration goes."""
        return self._hub._pages(
            calls.memory_list(
                self._namespace,
                subject=subject,
                kind=kind,
                tag=tag,
                status=status,
                since=since,
                until=until,
                page_size=page_size,
            )
        )

    def get(self, memory_id: str) -> Memory:
        return self._hub._send(calls.memory_get(self._namespace, memory_id))

    def update(
        self,
        memory_id: str,
        *,
        content: str | None = None,
        reason: str | None = None,
        kind: MemoryKind | None = None,
        tags: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        importance: float | None = None,
        confidence: float | None = None,
        status: MemoryStatus | None = None,
        occurred_at: datetime | Unset | None = UNSET,
        expires_at: datetime | Unset | None = UNSET,
    ) -> Memory:
        """Change the given fields (a new content is a new version, `reason` says why);
        `occurred_at=None` or `expires_at=None` clears that time."""
        return self._hub._send(
            calls.memory_update(
                self._namespace,
                memory_id,
                content=content,
                reason=reason,
                kind=kind,
                tags=tags,
                metadata=metadata,
                importance=importance,
                confidence=confidence,
                status=status,
                occurred_at=occurred_at,
                expires_at=expires_at,
            )
        )

    def delete(self, memory_id: str) -> None:
        self._hub._send(calls.memory_delete(self._namespace, memory_id))

    def versions(self, memory_id: str) -> builtins.list[MemoryVersion]:
        """The memory's versions, newest first."""
        return self._hub._send(calls.memory_versions(self._namespace, memory_id))


class Subjects:
    """The people memories are about, by the app's id for them."""

    def __init__(self, hub: MemoryHub, namespace: str) -> None:
        self._hub = hub
        self._namespace = namespace

    def get(self, external_id: str) -> Subject:
        return self._hub._send(calls.subject_get(self._namespace, external_id))

    def export(self, external_id: str) -> SubjectExport:
        """Everything kept about the subject, decrypted (needs `subjects:admin`)."""
        return self._hub._send(calls.subject_export(self._namespace, external_id))

    def erase(self, external_id: str) -> ErasureReceipt:
        """Erase the subject for good (their data keys are destroyed); never sent twice."""
        return self._hub._send(calls.subject_erase(self._namespace, external_id))

    def portal_session(
        self,
        external_id: str,
        *,
        return_url: str | None = None,
        locale: str | None = None,
        flow: Flow | None = None,
    ) -> PortalSession:
        """A one-time link to the privacy portal for the subject, to send them to."""
        return self._hub._send(
            calls.portal_session_create(
                self._namespace, external_id, return_url=return_url, locale=locale, flow=flow
            )
        )


class Webhooks:
    """The namespace's webhook endpoints and their deliveries (needs `webhooks:admin`)."""

    def __init__(self, hub: MemoryHub, namespace: str) -> None:
        self._hub = hub
        self._namespace = namespace

    def list(self) -> builtins.list[WebhookEndpoint]:
        return self._hub._send(calls.webhook_list(self._namespace))

    def create(
        self, url: str, *, events: Sequence[str], include_content: bool = False
    ) -> WebhookEndpointCreated:
        """A new endpoint; its `secret` is in this answer only."""
        return self._hub._send(
            calls.webhook_create(
                self._namespace, url=url, events=events, include_content=include_content
            )
        )

    def delete(self, endpoint_id: str) -> None:
        self._hub._send(calls.webhook_delete(self._namespace, endpoint_id))

    def rotate_secret(self, endpoint_id: str) -> WebhookSecret:
        """A new secret; the previous one keeps signing beside it for the overlap."""
        return self._hub._send(calls.webhook_rotate_secret(self._namespace, endpoint_id))

    def test(self, endpoint_id: str) -> WebhookDelivery:
        """Send a test event to the endpoint."""
        return self._hub._send(calls.webhook_test(self._namespace, endpoint_id))

    def deliveries(
        self, endpoint_id: str, *, page_size: int | None = None
    ) -> Iterator[WebhookDelivery]:
        """The endpoint's deliveries, newest first, with their attempts."""
        return self._hub._pages(
            calls.webhook_deliveries(self._namespace, endpoint_id, page_size=page_size)
        )

    def redeliver(self, endpoint_id: str, delivery_id: str) -> WebhookDelivery:
        """Send a delivery again, under the same `webhook-id`."""
        return self._hub._send(calls.webhook_redeliver(self._namespace, endpoint_id, delivery_id))
