"""A database made by the layout before the split (sessions, messages, summaries, jobs, the
consolidation and recall logs in the memories app) migrates forward with every row intact,
and its encrypted turns and summaries still open."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from apps.memories.row_encryption import KeyCache, data_key_create, open_row, seal_row
from apps.namespaces.models import Namespace

BEFORE_THE_SPLIT = [
    ("memories", "0011_gin_pending_list_limit"),
    ("pipeline", None),
    ("recall", None),
]


def _migrate(targets: list[tuple[str, str | None]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor


def _leaf_nodes() -> list[tuple[str, str]]:
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


@pytest.mark.django_db(transaction=True)
def test_it_moves_every_row_of_the_old_layout_to_the_new_apps() -> None:
    executor = _migrate(BEFORE_THE_SPLIT)
    old = executor.loader.project_state(BEFORE_THE_SPLIT[:1]).apps
    Subject = old.get_model("memories", "Subject")
    Session = old.get_model("memories", "Session")
    Message = old.get_model("memories", "Message")
    SessionSummary = old.get_model("memories", "SessionSummary")
    Job = old.get_model("memories", "Job")
    ConsolidationLog = old.get_model("memories", "ConsolidationLog")
    RecallLog = old.get_model("memories", "RecallLog")
    Memory = old.get_model("memories", "Memory")
    MemoryVersion = old.get_model("memories", "MemoryVersion")

    namespace = Namespace.objects.create(slug="before", name="Before")
    subject = Subject.objects.create(namespace_id=namespace.pk, external_id="user-1")
    data_key_create(namespace=namespace, subject=subject)
    keys = KeyCache()
    session = Session.objects.create(namespace_id=namespace.pk, subject=subject, external_id="s1")
    messages = []
    for position, text in enumerate(["I moved to Lisbon", "Nice! Since when?"]):
        message = Message(id=uuid.uuid4(), session=session, position=position, role="user")
        seal_row(keys, message, namespace.pk, subject.pk, text)
        message.save()
        messages.append((message.pk, text))
    summary = SessionSummary(
        id=uuid.uuid4(), session=session, version=1, through_position=1, summarizer="offline"
    )
    seal_row(keys, summary, namespace.pk, subject.pk, "The user lives in Lisbon.")
    summary.save()
    job = Job.objects.create(
        namespace_id=namespace.pk,
        subject=subject,
        kind="ingest",
        status="succeeded",
        idempotency_key="retry-1",
        actor_id="key1",
        payload={"messages": [str(pk) for pk, _ in messages]},
        result={"memories": []},
    )
    ConsolidationLog.objects.create(
        namespace_id=namespace.pk, subject=subject, job=job, decision="add", reason="new fact"
    )
    memory = Memory.objects.create(
        namespace_id=namespace.pk, subject=subject, content_encrypted=b"sealed", key_version=1
    )
    version = MemoryVersion.objects.create(
        memory=memory, version=1, changed_by="key1", content_encrypted=b"sealed", key_version=1
    )
    served = [uuid.uuid4(), uuid.uuid4()]
    recall = RecallLog.objects.create(
        namespace_id=namespace.pk,
        subject=subject,
        actor_type="api_key",
        actor_id="key1",
        memory_ids=served,
    )

    _migrate(_leaf_nodes())

    from apps.memories.models import MemoryVersion as MemoryVersionNow
    from apps.memories.models import Subject as SubjectNow
    from apps.pipeline.models import ConsolidationLog as ConsolidationLogNow
    from apps.pipeline.models import Job as JobNow
    from apps.pipeline.models import Message as MessageNow
    from apps.pipeline.models import Session as SessionNow
    from apps.pipeline.models import SessionSummary as SessionSummaryNow
    from apps.recall.models import RecallLog as RecallLogNow

    subject_now = SubjectNow.objects.get(pk=subject.pk)
    session_now = SessionNow.objects.get(pk=session.pk)
    assert session_now.subject == subject_now
    keys = KeyCache()
    for pk, text in messages:
        message = MessageNow.objects.get(pk=pk)
        assert (message.session_id, message.namespace_id) == (session.pk, namespace.pk)
        assert open_row(keys, message, namespace.pk, subject.pk) == text
    summary_now = SessionSummaryNow.objects.get(pk=summary.pk)
    assert open_row(keys, summary_now, namespace.pk, subject.pk) == "The user lives in Lisbon."
    assert summary_now.namespace_id == namespace.pk
    assert MemoryVersionNow.objects.get(pk=version.pk).namespace_id == namespace.pk
    job_now = JobNow.objects.get(pk=job.pk)
    assert (job_now.idempotency_key, job_now.status) == ("retry-1", "succeeded")
    assert job_now.payload == {"messages": [str(pk) for pk, _ in messages]}
    assert ConsolidationLogNow.objects.get(job=job_now).reason == "new fact"
    assert RecallLogNow.objects.get(pk=recall.pk).memory_ids == served
    # Erasing the subject still reaches the moved rows through their foreign keys.
    subject_now.delete()
    assert not MessageNow.objects.exists()
    assert not RecallLogNow.objects.exists()
