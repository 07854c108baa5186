"""`namespace_delete` removes everything in the namespace (its subjects, data keys, memories
and their versions, sessions with their turns and summaries, jobs, consolidation and recall
logs, saved playground set-ups), leaves every other namespace's rows as they were, keeps the
audit log, and writes one `namespace.delete` event with the counts."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.db.models import Model, QuerySet

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.context.models import PlaygroundConfig
from apps.context.services import playground_config_save
from apps.memories.models import DataKey, Memory, MemoryVersion, Subject
from apps.memories.row_encryption import KeyCache, open_memory
from apps.memories.services import NewMemory, memory_create, memory_update
from apps.namespaces.models import Namespace
from apps.namespaces.services import namespace_delete
from apps.pipeline.ingestion import IncomingMessage, messages_ingest
from apps.pipeline.models import ConsolidationLog, Job, JobStatus, Message, Session, SessionSummary
from apps.recall.models import RecallLog
from apps.recall.search import RecallRequest, recall_memories
from tests.conftest import Tenant

ACTOR = Actor.system("tests")

# What a namespace holds, each as the rows of one namespace (by id, so the test does not
# lean on the relations the deletion itself follows).
HOLDINGS: dict[str, Callable[[int], QuerySet]] = {
    "subjects": lambda ns: Subject.objects.filter(namespace_id=ns),
    "data keys": lambda ns: DataKey.objects.filter(namespace_id=ns),
    "memories": lambda ns: Memory.objects.filter(namespace_id=ns),
    "versions": lambda ns: MemoryVersion.objects.filter(memory__namespace_id=ns),
    "sessions": lambda ns: Session.objects.filter(namespace_id=ns),
    "messages": lambda ns: Message.objects.filter(session__namespace_id=ns),
    "summaries": lambda ns: SessionSummary.objects.filter(session__namespace_id=ns),
    "jobs": lambda ns: Job.objects.filter(namespace_id=ns),
    "consolidation logs": lambda ns: ConsolidationLog.objects.filter(namespace_id=ns),
    "recall logs": lambda ns: RecallLog.objects.filter(namespace_id=ns),
    "playground configs": lambda ns: PlaygroundConfig.objects.filter(namespace_id=ns),
}
MODELS: dict[str, type[Model]] = {name: rows(0).model for name, rows in HOLDINGS.items()}


def populate(tenant: Tenant) -> None:
    """A bit of everything, through the services the API and the pipeline use."""
    namespace = tenant.namespace
    tea = memory_create(
        actor=ACTOR,
        namespace=namespace,
        item=NewMemory(subject_external_id="u1", content="Likes tea"),
    )
    memory_update(actor=ACTOR, memory=tea, content="Likes green tea")
    memory_create(
        actor=ACTOR, namespace=namespace, item=NewMemory(content="Support hours are 9 to 5")
    )  # shared
    job, _ = messages_ingest(
        actor=ACTOR,
        namespace=namespace,
        subject_external_id="u2",
        session_external_id="s1",
        messages=[
            IncomingMessage("user", "I live in Lyon and I am allergic to peanuts."),
            IncomingMessage("assistant", "Noted, no peanuts."),
        ],
    )
    assert job.status == JobStatus.SUCCEEDED, job.error
    recall_memories(
        RecallRequest(actor=ACTOR, namespace=namespace, subject_external_id="u1", query="tea")
    )
    playground_config_save(actor=ACTOR, user=None, namespace=namespace, config={"query": "tea"})


def holdings(namespace_id: int) -> dict[str, set]:
    return {
        name: set(rows(namespace_id).values_list("pk", flat=True))
        for name, rows in HOLDINGS.items()
    }


@pytest.fixture
def world(acme: Tenant, globex: Tenant) -> dict[str, dict[str, set]]:
    populate(acme)
    populate(globex)
    held = {tenant.slug: holdings(tenant.namespace.pk) for tenant in (acme, globex)}
    for slug, rows in held.items():
        empty = [name for name, ids in rows.items() if not ids]
        assert not empty, f"{slug} holds no {', '.join(empty)}: the test would prove nothing"
    return held


@pytest.mark.django_db
def test_it_removes_everything_in_the_namespace(
    acme: Tenant, world: dict[str, dict[str, set]]
) -> None:
    namespace_delete(actor=ACTOR, namespace=acme.namespace)
    assert not Namespace.objects.filter(pk=acme.namespace.pk).exists()
    left = {
        name: MODELS[name]._default_manager.filter(pk__in=ids).count()
        for name, ids in world["acme"].items()
    }
    assert left == dict.fromkeys(HOLDINGS, 0)


@pytest.mark.django_db
def test_it_leaves_another_namespace_as_it_was(
    acme: Tenant, globex: Tenant, world: dict[str, dict[str, set]]
) -> None:
    namespace_delete(actor=ACTOR, namespace=acme.namespace)
    assert holdings(globex.namespace.pk) == world["globex"]
    keys = KeyCache()
    texts = {open_memory(keys, m) for m in Memory.objects.filter(namespace=globex.namespace)}
    assert {"Likes green tea", "Support hours are 9 to 5"} <= texts  # its keys still open them


@pytest.mark.django_db
def test_it_writes_one_namespace_delete_event_with_the_counts(
    acme: Tenant, world: dict[str, dict[str, set]]
) -> None:
    expected = {
        "memories": len(world["acme"]["memories"]),
        "subjects": len(world["acme"]["subjects"]),
    }
    assert expected["subjects"] == 2  # u1 and u2; the shared memory has none
    counts = namespace_delete(actor=ACTOR, namespace=acme.namespace)
    assert counts == expected
    (event,) = AuditEvent.objects.filter(action="namespace.delete")
    assert event.namespace_id == acme.namespace.pk
    assert event.object_id == str(acme.namespace.pk)
    assert event.details == {**expected, "slug": "acme"}


@pytest.mark.django_db
def test_the_namespaces_audit_log_outlives_it(
    acme: Tenant, world: dict[str, dict[str, set]]
) -> None:
    before = set(
        AuditEvent.objects.filter(namespace_id=acme.namespace.pk).values_list("id", flat=True)
    )
    namespace_delete(actor=ACTOR, namespace=acme.namespace)
    after = set(
        AuditEvent.objects.filter(namespace_id=acme.namespace.pk).values_list("id", flat=True)
    )
    assert before < after  # every earlier event, and the deletion


@pytest.mark.django_db
def test_its_api_key_no_longer_reaches_it(acme: Tenant, world: dict[str, dict[str, set]]) -> None:
    namespace_delete(actor=ACTOR, namespace=acme.namespace)
    response = acme.client.get(acme.url("memories"))
    assert response.status_code == 404
