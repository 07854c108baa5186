"""`memoryhub_erasures_total` and `memoryhub_purged_memories_total` count every way a subject
is erased or memories deleted, labelled `via`, once the transaction commits: never an erasure
rolled back. Each test reads the series before and after (prometheus_client's registry: the
tests run without the multiprocess directory)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone
from prometheus_client import REGISTRY

from apps.audit.actors import Actor
from apps.backups.services import erasures_reapply
from apps.governance.purge import purge_job_run
from apps.governance.services import purge_start
from apps.memories.models import Memory, Subject
from apps.memories.services import NewMemory, memories_create_bulk, subject_erase
from apps.namespaces.models import Namespace
from apps.namespaces.services import namespace_delete
from apps.pipeline import lifecycle
from apps.privacy.services import erasure_request, erasures_run_due, memories_forget
from memoryhub import erasure_ledger, metrics
from tests.conftest import Tenant
from tests.governance.conftest import Cast, build_cast

pytestmark = pytest.mark.django_db

ACTOR = Actor.system("tests")
Counting = Callable[[], AbstractContextManager[None]]


@pytest.fixture
def cast(db: None) -> Cast:
    return build_cast()


@pytest.fixture
def counting(django_capture_on_commit_callbacks) -> Counting:  # type: ignore[no-untyped-def]
    """Run the counts a block leaves for its commit (the test's transaction never commits),
    and nothing else it leaves (a data-key VACUUM cannot run inside a transaction)."""

    @contextmanager
    def block() -> Iterator[None]:
        with django_capture_on_commit_callbacks() as callbacks:
            yield
        for callback in callbacks:
            if isinstance(callback, metrics.Increment):
                callback()

    return block


def erasures(via: str) -> float:
    return REGISTRY.get_sample_value("memoryhub_erasures_total", {"via": via}) or 0.0


def purged(via: str) -> float:
    return REGISTRY.get_sample_value("memoryhub_purged_memories_total", {"via": via}) or 0.0


def notes(namespace: Namespace, count: int, subject: str = "u9") -> list[Memory]:
    return memories_create_bulk(
        actor=ACTOR,
        namespace=namespace,
        items=[
            NewMemory(content=f"Note {i}.", subject_external_id=subject, tags=["note"])
            for i in range(count)
        ],
        embed=False,
    )


def subject_of(namespace: Namespace, external_id: str) -> Subject:
    return Subject.objects.get(namespace=namespace, external_id=external_id)


def test_it_counts_an_erasure_through_the_api(acme: Tenant, counting: Counting) -> None:
    notes(acme.namespace, 2)
    before, memories_before = erasures("api"), purged("erasure")
    with counting():
        assert acme.client.post(acme.url("subjects/u9/erase")).status_code == 200
    assert erasures("api") == before + 1
    assert purged("erasure") == memories_before + 2


def test_it_counts_an_erasure_from_the_dashboard(cast: Cast, counting: Counting) -> None:
    before = erasures("dashboard")
    with counting():
        response = cast.client("olive").post(
            f"/n/acme/subjects/{cast.subject_id}/erase/", {"confirmation": "u1"}
        )
    assert response.status_code == 200
    assert not Subject.objects.filter(pk=cast.subject_id).exists()
    assert erasures("dashboard") == before + 1


def test_it_counts_an_erasure_the_subject_asked_for(acme: Tenant, counting: Counting) -> None:
    notes(acme.namespace, 1)
    before = erasures("portal")
    with counting():
        erasure_request(actor=ACTOR, subject=subject_of(acme.namespace, "u9"))
    assert erasures("portal") == before + 1


def test_it_counts_a_scheduled_erasure_when_it_runs_not_when_asked(
    acme: Tenant, counting: Counting
) -> None:
    Namespace.objects.filter(pk=acme.namespace.pk).update(erasure_grace_days=7)
    notes(acme.namespace, 1)
    before, portal_before = erasures("scheduled"), erasures("portal")
    with counting():
        erasure_request(actor=ACTOR, subject=subject_of(acme.namespace, "u9"))
    assert (erasures("scheduled"), erasures("portal")) == (before, portal_before)
    with counting():
        assert erasures_run_due(now=timezone.now() + timedelta(days=8)) == 1
    assert erasures("scheduled") == before + 1


def test_it_counts_an_erasure_by_the_command(acme: Tenant, counting: Counting) -> None:
    notes(acme.namespace, 1)
    before = erasures("command")
    with counting():
        call_command("erase_subject", "u9", "--namespace", acme.slug, stdout=None)
    assert erasures("command") == before + 1


def test_it_counts_nothing_for_an_erasure_rolled_back(acme: Tenant, counting: Counting) -> None:
    notes(acme.namespace, 2)
    before, memories_before = erasures("api"), purged("erasure")

    def erase_then_fail() -> None:
        with transaction.atomic():
            subject_erase(actor=ACTOR, subject=subject_of(acme.namespace, "u9"), via="api")
            raise RuntimeError("rolled back")

    with counting(), pytest.raises(RuntimeError):
        erase_then_fail()
    assert Memory.objects.filter(namespace=acme.namespace).count() == 2
    assert (erasures("api"), purged("erasure")) == (before, memories_before)


def test_it_refuses_a_way_not_in_the_list(acme: Tenant) -> None:
    notes(acme.namespace, 1)
    with pytest.raises(ValueError, match="not one of"):
        subject_erase(actor=ACTOR, subject=subject_of(acme.namespace, "u9"), via="elsewhere")


def test_it_counts_the_memories_a_subject_deletes_in_the_portal(
    acme: Tenant, counting: Counting
) -> None:
    chosen = notes(acme.namespace, 3)[:2]
    before = purged("portal")
    with counting():
        memories_forget(
            actor=ACTOR, subject=subject_of(acme.namespace, "u9"), ids=[m.pk for m in chosen]
        )
    assert purged("portal") == before + 2


def test_it_counts_the_memories_a_purge_job_deletes(acme: Tenant, counting: Counting) -> None:
    notes(acme.namespace, 3)
    before = purged("purge")
    with counting():
        job = purge_start(
            actor=ACTOR, namespace=acme.namespace, filters={"tag": "note"}, reason="tests",
            confirmation=acme.slug, expected=3,
        )  # fmt: skip
        purge_job_run(job_id=str(job.pk))
    assert not Memory.objects.filter(namespace=acme.namespace).exists()
    assert purged("purge") == before + 3


def test_it_counts_a_bulk_delete_from_the_explorer(cast: Cast, counting: Counting) -> None:
    before = purged("bulk")
    chosen = {"action": "delete", "ids": [str(cast.fact.pk), str(cast.pii.pk)]}
    with counting():
        response = cast.client("olive").post(
            "/n/acme/memories/bulk/", {**chosen, "confirm": "1", "reason": "spam"}
        )
    assert response.status_code in (200, 302)
    assert not Memory.objects.filter(pk__in=[cast.fact.pk, cast.pii.pk]).exists()
    assert purged("bulk") == before + 2


def test_it_counts_a_memory_deleted_on_its_own(acme: Tenant, counting: Counting) -> None:
    memory = notes(acme.namespace, 1)[0]
    before = purged("single")
    with counting():
        assert acme.client.delete(acme.url(f"memories/{memory.pk}")).status_code == 204
    assert purged("single") == before + 1


def test_it_counts_the_memories_of_a_namespace_deleted(acme: Tenant, counting: Counting) -> None:
    notes(acme.namespace, 2)
    notes(acme.namespace, 1, subject="u8")
    before = purged("namespace")
    with counting():
        namespace_delete(actor=ACTOR, namespace=acme.namespace)
    assert purged("namespace") == before + 3


def test_it_counts_expired_memories_not_archived_ones(acme: Tenant, counting: Counting) -> None:
    expiring = notes(acme.namespace, 2)
    notes(acme.namespace, 1)
    past = timezone.now() - timedelta(days=1)
    Memory.objects.filter(pk__in=[m.pk for m in expiring]).update(expires_at=past)
    Namespace.objects.filter(pk=acme.namespace.pk).update(retention_days=1)
    Memory.objects.filter(namespace=acme.namespace).update(created_at=past - timedelta(days=1))
    acme.namespace.refresh_from_db()
    before = purged("expiry")
    with counting():
        report = lifecycle.expire(actor=ACTOR, namespace=acme.namespace)
    assert report.counts == {"deleted": 2, "archived": 1, "versions_deleted": 2}
    assert purged("expiry") == before + 2


def test_it_counts_the_memories_a_restore_deletes_again(acme: Tenant, counting: Counting) -> None:
    memories = notes(acme.namespace, 2)
    start = erasure_ledger.head()
    # As in a backup older than the deletion: the ledger says they went, the rows are there.
    erasure_ledger.append(
        namespace_id=acme.namespace.pk, scope="memories", memory_ids=[m.pk for m in memories]
    )
    before = purged("restore")
    with counting():
        erasures_reapply(actor=ACTOR, after=start)
    assert not Memory.objects.filter(namespace=acme.namespace).exists()
    assert purged("restore") == before + 2
