"""The first-run demo: the namespace `demo`, loaded through the real write and read paths.

`demo_load` replays `data/demo.json` (synthetic, written for this project) as an app would:
the namespace is created and set to the `tag` PII policy, then, in the order of their
(simulated) times over the last month, the namespace's instructions and a document are
written, each subject's sessions are sent turn by turn through `messages_ingest` (extraction
and consolidation run in this process, so moves, new jobs and corrections supersede what
they replace), a few memories are written by the "app" directly, and recalls and context
assemblies are made so the recall log has rows. Every write goes through the services, with
their audit events, under one system actor.

Only one thing is done that no app could do: the services stamp their rows with the time of
the write, so after each step `_backdate` moves the rows that step made (memories, versions,
sessions, jobs, consolidation decisions, summaries, recall-log rows) back to the step's
simulated time, so per-day charts show a month of activity. Turns carry their own times
(`IncomingMessage.created_at`), which the extractor reads as "now" for time words ("last
week"). Audit events keep their real times: the chain is append-only, and the log should
say when the demo was actually loaded.

Everything happens in one transaction: a load that fails leaves nothing behind, and a second
loader started at the same time waits on the namespace's slug, then finds it taken.
`demo_remove` deletes the namespace with `namespace_delete` (its keys first: crypto-shredded).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.audit.services import audit_record
from apps.context.services import ContextRequest, context_assemble
from apps.evaluation.services import eval_set_import_jsonl
from apps.memories.models import Kind, Memory, MemoryVersion, Status, Subject
from apps.memories.row_encryption import KeyCache, open_memory
from apps.memories.services import NewMemory, memories_create_bulk, memory_create
from apps.namespaces.models import Namespace
from apps.namespaces.services import namespace_create, namespace_delete, namespace_update
from apps.pipeline.ingestion import IncomingMessage, document_ingest, messages_ingest
from apps.pipeline.jobs import ingest_job_run
from apps.pipeline.models import ConsolidationLog, Job, JobStatus, Message, Session, SessionSummary
from apps.recall.models import RecallLog
from apps.recall.search import RecallRequest, recall_memories
from memoryhub.exceptions import ApplicationError

DATA_DIR = Path(__file__).resolve().parent / "data"
DEMO_DATA = DATA_DIR / "demo.json"
EVAL_DATA = DATA_DIR / "eval.jsonl"  # the documented JSON-lines format of eval sets
SLUG = "demo"
EVAL_SET_NAME = "Demo questions"
LOAD_ACTION = "demo.load"
REMOVE_ACTION = "demo.remove"
# The newest simulated event happens at least this long before the load.
LATEST_BEFORE_NOW = timedelta(minutes=10)
TURN_SPACING = timedelta(seconds=40)


def demo_actor(*, name: str = "manage.py demo") -> Actor:
    """The system actor the demo writes as (no user: superusers see every namespace)."""
    return Actor.system(name)


@dataclass
class DemoReport:
    """What a demo command did: `done` is False when there was nothing to do (`message`
    says why); `counts` are the demo namespace's contents (after a load, or before a
    removal)."""

    done: bool
    message: str
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    tokens: list[int] = field(default_factory=list)  # prompt tokens of each assembly made


# --- reading the data -------------------------------------------------------------------------


def read_data(*, path: Path = DEMO_DATA) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def demo_subject_ids(*, data: dict[str, Any] | None = None) -> list[str]:
    data = data if data is not None else read_data()
    return [subject["external_id"] for subject in data["subjects"]]


@dataclass(order=True)
class _Event:
    at: datetime
    order: int  # ties: in the order of the file
    kind: str = field(compare=False)
    item: dict[str, Any] = field(compare=False)
    subject: str | None = field(default=None, compare=False)


def _naive_time(anchor: datetime, item: dict[str, Any]) -> datetime:
    hours, minutes = (int(part) for part in item.get("time", "12:00").split(":"))
    day = anchor - timedelta(days=int(item.get("days_ago", 0)))
    return day.replace(hour=hours, minute=minutes, second=0, microsecond=0)


def timeline(*, data: dict[str, Any], now: datetime) -> list[_Event]:
    """Every step of the demo at its simulated time, oldest first. Times are `days_ago` at
    `time` (UTC); should the newest step not be LATEST_BEFORE_NOW in the past yet, the whole
    timeline moves back by whole days (a `days_ago: 0` at 09:00, loaded at 07:00, happens
    the day before), keeping the times of day and the order."""
    anchor = now.astimezone(UTC)
    events: list[_Event] = []

    def add(kind: str, item: dict[str, Any], subject: str | None = None) -> None:
        events.append(_Event(_naive_time(anchor, item), len(events), kind, item, subject))

    for item in data.get("procedural", []):
        add("procedural", item)
    for item in data.get("documents", []):
        add("document", item)
    for subject in data["subjects"]:
        for session in subject["sessions"]:
            add("session", session, subject["external_id"])
    for item in data.get("memories", []):
        add("memory", item, item.get("subject"))
    for item in data.get("recalls", []):
        add("recall", item, item["subject"])
    for item in data.get("contexts", []):
        add("context", item, item["subject"])
    late = max(event.at for event in events) - (now - LATEST_BEFORE_NOW)
    if late > timedelta(0):
        days = timedelta(days=late.days + 1 if late % timedelta(days=1) else late.days)
        for event in events:
            event.at -= days
    return sorted(events)


# --- backdating (demo only) ---------------------------------------------------------------------


def _backdate(namespace: Namespace, since: datetime, at: datetime) -> None:
    """DEMO ONLY: move the times the services stamped on the rows of the demo namespace
    since `since` (the wall-clock start of a step) back to `at` (the step's simulated time),
    keeping their order. Times the data chose (turns' `created_at`, a fact's `valid_from` of
    "last week") are older than `since` and stay as they are. Audit events are not touched."""
    delta = at - since
    if delta >= timedelta(0):
        return
    shifts: list[tuple[Any, Q, tuple[str, ...]]] = [
        (Namespace, Q(pk=namespace.pk), ("created_at",)),
        (Memory, Q(namespace=namespace), ("created_at", "updated_at", "valid_from", "valid_to")),
        (MemoryVersion, Q(memory__namespace=namespace), ("created_at",)),
        (Subject, Q(namespace=namespace), ("created_at",)),
        (Session, Q(namespace=namespace), ("created_at", "updated_at")),
        (SessionSummary, Q(session__namespace=namespace), ("created_at",)),
        (Job, Q(namespace=namespace), ("created_at", "updated_at")),
        (ConsolidationLog, Q(namespace=namespace), ("created_at",)),
        (RecallLog, Q(namespace=namespace), ("created_at",)),
    ]
    for model, scope, columns in shifts:
        for column in columns:
            model.objects.filter(scope, **{f"{column}__gte": since}).update(
                **{column: F(column) + delta}
            )


# --- load ---------------------------------------------------------------------------------------


def demo_load(
    *, actor: Actor, data: dict[str, Any] | None = None, now: datetime | None = None
) -> DemoReport:
    """Load the demo namespace, unless it exists (then nothing is done, and the report says
    so). All in one transaction."""
    started = time.perf_counter()
    with_eval_set = data is None  # the demo's own data: its eval set fits it
    data = data if data is not None else read_data()
    slug = data["namespace"].get("slug", SLUG)
    if Namespace.objects.filter(slug=slug).exists():
        return DemoReport(False, f"The demo namespace {slug!r} exists already; nothing loaded.")
    tokens: list[int] = []
    try:
        with transaction.atomic():
            namespace = _load(actor, data, now or timezone.now(), tokens)
            if with_eval_set:  # ready to run on the quality page
                eval_set_import_jsonl(
                    actor=actor,
                    namespace=namespace,
                    name=EVAL_SET_NAME,
                    text=EVAL_DATA.read_text(encoding="utf-8"),
                    description="manage.py demo load",
                )
            counts = demo_counts(namespace=namespace)
            audit_record(
                actor=actor,
                action=LOAD_ACTION,
                namespace=namespace,
                object_type="namespace",
                object_id=str(namespace.pk),
                details={"counts": counts, "seconds": round(time.perf_counter() - started, 2)},
            )
    except ApplicationError as error:
        if error.code != "conflict":
            raise
        # Another loader made it meanwhile (it held the slug until it committed).
        return DemoReport(False, f"The demo namespace {slug!r} exists already; nothing loaded.")
    seconds = time.perf_counter() - started
    return DemoReport(True, f"Loaded the demo namespace {slug!r}.", counts, seconds, tokens)


def _load(actor: Actor, data: dict[str, Any], now: datetime, tokens: list[int]) -> Namespace:
    spec = data["namespace"]
    since = timezone.now()
    namespace = namespace_create(
        actor=actor,
        slug=spec.get("slug", SLUG),
        name=spec.get("name", "Demo"),
        description=spec.get("description", ""),
    )
    namespace = namespace_update(
        actor=actor, namespace=namespace, pii_policy=spec.get("pii_policy", "tag")
    )
    events = timeline(data=data, now=now)
    _backdate(namespace, since, events[0].at - timedelta(minutes=5))
    steps: dict[str, Callable[[Actor, Namespace, _Event, list[int]], None]] = {
        "procedural": _procedural,
        "document": _document,
        "session": _session,
        "memory": _memory,
        "recall": _recall,
        "context": _context,
    }
    for event in events:
        since = timezone.now()
        steps[event.kind](actor, namespace, event, tokens)
        _backdate(namespace, since, event.at)
    return namespace


def _procedural(actor: Actor, namespace: Namespace, event: _Event, tokens: list[int]) -> None:
    memory_create(
        actor=actor,
        namespace=namespace,
        item=NewMemory(
            content=event.item["content"],
            kind=Kind.PROCEDURAL,
            importance=float(event.item.get("importance", 0.8)),
            tags=["instruction"],
            source={"app": "demo"},
        ),
    )


def _document(actor: Actor, namespace: Namespace, event: _Event, tokens: list[int]) -> None:
    item = event.item
    document_ingest(
        actor=actor,
        namespace=namespace,
        text=item["text"],
        title=item.get("title", ""),
        tags=["document"],
        metadata={"app": "demo"},
        chunk_tokens=item.get("chunk_tokens"),
    )


def _session(actor: Actor, namespace: Namespace, event: _Event, tokens: list[int]) -> None:
    assert event.subject is not None
    messages = [
        IncomingMessage(role=role, content=content, created_at=event.at + index * TURN_SPACING)
        for index, (role, content) in enumerate(event.item["turns"])
    ]
    job, _ = messages_ingest(
        actor=actor,
        namespace=namespace,
        subject_external_id=event.subject,
        session_external_id=event.item["external_id"],
        messages=messages,
    )
    if job.status != JobStatus.SUCCEEDED:
        # A broker is configured: the worker gets the task after commit and finds it done.
        job = ingest_job_run(job_id=str(job.id))
    if job.status != JobStatus.SUCCEEDED:
        raise ApplicationError(
            gettext_noop("The demo's ingest job ended %(status)s: %(error)s"),
            params={"status": job.status, "error": job.error},
        )


def _memory(actor: Actor, namespace: Namespace, event: _Event, tokens: list[int]) -> None:
    item = event.item
    kind = item.get("kind", Kind.SEMANTIC)
    memories_create_bulk(
        actor=actor,
        namespace=namespace,
        items=[
            NewMemory(
                content=item["content"],
                subject_external_id=item.get("subject"),
                kind=kind,
                tags=list(item.get("tags", [])),
                importance=float(item.get("importance", 0.5)),
                confidence=float(item.get("confidence", 1.0)),
                status=item.get("status", Status.ACTIVE),
                occurred_at=event.at if kind == Kind.EPISODIC else None,
                source={"app": "demo"},
            )
        ],
    )


def _recall(actor: Actor, namespace: Namespace, event: _Event, tokens: list[int]) -> None:
    recall_memories(
        RecallRequest(
            actor=actor,
            namespace=namespace,
            subject_external_id=event.subject,
            query=event.item["query"],
            k=int(event.item.get("k", 5)),
            purpose="recall",
        )
    )


def _context(actor: Actor, namespace: Namespace, event: _Event, tokens: list[int]) -> None:
    item = event.item
    result = context_assemble(
        actor=actor,
        namespace=namespace,
        spec=ContextRequest(
            query=item["query"],
            subject=event.subject,
            session=item.get("session"),
            model=item.get("model", ""),
            recall_k=int(item.get("k", 8)),
        ),
    )
    tokens.append(int(result["total_tokens"]))


# --- counts, status, removal ----------------------------------------------------------------------


def demo_namespace(*, slug: str = SLUG) -> Namespace | None:
    return Namespace.objects.filter(slug=slug).first()


def demo_counts(*, namespace: Namespace) -> dict[str, int]:
    """What the demo namespace holds (counts only: nothing is decrypted)."""
    memories = Memory.objects.filter(namespace=namespace)
    figures = memories.aggregate(
        memories=Count("id"),
        episodic=Count("id", filter=Q(kind=Kind.EPISODIC)),
        semantic=Count("id", filter=Q(kind=Kind.SEMANTIC)),
        procedural=Count("id", filter=Q(kind=Kind.PROCEDURAL)),
        superseded=Count("id", filter=Q(valid_to__isnull=False)),
        pending_review=Count("id", filter=Q(status=Status.PENDING_REVIEW)),
        pii_tagged=Count("id", filter=Q(tags__overlap=["pii:email", "pii:phone"])),
        document_chunks=Count("id", filter=Q(source__has_key="document")),
    )
    recall_logs = RecallLog.objects.filter(namespace=namespace)
    return {
        "subjects": Subject.objects.filter(namespace=namespace).count(),
        "sessions": Session.objects.filter(namespace=namespace).count(),
        "messages": Message.objects.filter(session__namespace=namespace).count(),
        **figures,
        "recalls": recall_logs.filter(purpose="recall").count(),
        "context_assemblies": recall_logs.filter(purpose="context").count(),
    }


def demo_status() -> DemoReport:
    namespace = demo_namespace()
    if namespace is None:
        removed = AuditEvent.objects.filter(action=REMOVE_ACTION).exists()
        note = " (it was removed; `manage.py demo load` loads it again)" if removed else ""
        return DemoReport(False, f"The demo namespace {SLUG!r} is not loaded{note}.")
    return DemoReport(
        True, f"The demo namespace {SLUG!r} is loaded.", demo_counts(namespace=namespace)
    )


def first_start_skip_reason() -> str:
    """Why `load --if-enabled` (make run) leaves the demo out, or "" to load it: it is
    switched off, it was removed on purpose before, or this is not a first start (the
    install has namespaces of its own)."""
    if not settings.MEMORYHUB_DEMO:
        return "MEMORYHUB_DEMO is off"
    if demo_namespace() is not None:
        return ""  # demo_load says it exists already
    if AuditEvent.objects.filter(action=REMOVE_ACTION).exists():
        return "it was removed before (`manage.py demo load` loads it again)"
    if Namespace.objects.exists():
        return "this install has namespaces already (`manage.py demo load` loads it anyway)"
    return ""


def foreign_subjects(*, namespace: Namespace) -> list[str]:
    """External ids of subjects the demo did not make (a namespace `demo` of someone's)."""
    known = set(demo_subject_ids())
    return [
        external_id
        for external_id in Subject.objects.filter(namespace=namespace).values_list(
            "external_id", flat=True
        )
        if external_id not in known
    ]


def demo_remove(*, actor: Actor, force: bool = False) -> DemoReport:
    """Delete the demo namespace with everything in it (`namespace_delete`: keys first,
    crypto-shredded). A namespace `demo` holding subjects the demo did not make is someone's
    own: it is left alone unless `force`."""
    started = time.perf_counter()
    namespace = demo_namespace()
    if namespace is None:
        return DemoReport(False, f"There is no demo namespace {SLUG!r}; nothing removed.")
    others = foreign_subjects(namespace=namespace)
    if others and not force:
        raise ApplicationError(
            gettext_noop(
                "The namespace %(slug)s holds %(count)s subject(s) the demo did not make; it "
                "looks like real data, so it was not removed (--force removes it anyway)."
            ),
            params={"slug": repr(SLUG), "count": len(others)},
            code="conflict",
            status_code=409,
        )
    with transaction.atomic():
        counts = demo_counts(namespace=namespace)
        namespace_id = namespace.pk
        namespace_delete(actor=actor, namespace=namespace)
        audit_record(
            actor=actor,
            action=REMOVE_ACTION,
            namespace=namespace,
            object_type="namespace",
            object_id=str(namespace_id),
            details={"counts": counts},
        )
    seconds = time.perf_counter() - started
    return DemoReport(True, f"Removed the demo namespace {SLUG!r}.", counts, seconds)


# --- the eval set ---------------------------------------------------------------------------------


@dataclass
class EvalRow:
    subject: str
    query: str
    rank: int | None  # of the first memory stating an expected phrase; None: not in the top k


@dataclass
class EvalReport:
    k: int
    rows: list[EvalRow]

    @property
    def hit_rate(self) -> float:
        return sum(1 for row in self.rows if row.rank is not None) / max(len(self.rows), 1)

    @property
    def mrr(self) -> float:
        return sum(1 / row.rank for row in self.rows if row.rank) / max(len(self.rows), 1)


def read_eval(*, path: Path = EVAL_DATA) -> list[dict[str, Any]]:
    """The demo's eval set: questions for the demo's subjects, each answered by the current
    memories that hold one of its `expected_contains` phrases (a superseded value, such as
    Hangzhou, peanuts or nurse, is never expected: recall serves current memories only)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [
        {"subject": item["subject"], "query": item["question"], **item}
        for item in map(json.loads, filter(str.strip, lines))
    ]


def _expected(text: str, phrases: list[str]) -> bool:
    lowered = text.lower()
    return any(phrase.lower() in lowered for phrase in phrases)


def demo_eval(*, actor: Actor, k: int = 5, path: Path = EVAL_DATA) -> EvalReport:
    """Run the eval set against the loaded demo: for each query, the rank of the first
    recalled memory whose text holds one of its `expected_contains` phrases. Recalls made
    here are not written to the recall log."""
    namespace = demo_namespace()
    if namespace is None:
        raise ApplicationError(
            gettext_noop("The demo namespace %(slug)s is not loaded."),
            params={"slug": repr(SLUG)},
            status_code=404,
        )
    keys = KeyCache()
    rows = []
    for query in read_eval(path=path):
        outcome = recall_memories(
            RecallRequest(
                actor=actor,
                namespace=namespace,
                subject_external_id=query["subject"],
                query=query["query"],
                k=k,
                log=False,
                keys=keys,
            )
        )
        rank = next(
            (
                number
                for number, hit in enumerate(outcome.hits, start=1)
                if _expected(open_memory(keys, hit.memory), query["expected_contains"])
            ),
            None,
        )
        rows.append(EvalRow(query["subject"], query["query"], rank))
    return EvalReport(k, rows)


def iter_counts(*, counts: dict[str, int]) -> Iterator[str]:
    for name, value in counts.items():
        yield f"{name.replace('_', ' ')}: {value}"
