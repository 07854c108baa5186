"""`manage.py lifecycle [--dry-run] [--namespace SLUG] [--job NAME]`: one JSON report per
namespace and sweep; the dry run changes and audits nothing, the real run does the work and
audits it as the command."""

from __future__ import annotations

import io
import json
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.memories.models import Memory
from apps.memories.services import NewMemory, memory_create
from apps.namespaces.services import namespace_update
from tests.conftest import Tenant

ACTOR = Actor.system("tests")


def remember(tenant: Tenant, content: str, **fields) -> Memory:
    return memory_create(
        actor=ACTOR,
        namespace=tenant.namespace,
        item=NewMemory(subject_external_id="u1", content=content, **fields),
    )


def lifecycle(*args: str) -> list[dict]:
    out = io.StringIO()
    call_command("lifecycle", *args, stdout=out)
    return [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]


def report(reports: list[dict], namespace: str, job: str) -> dict:
    (found,) = [r for r in reports if r["namespace"] == namespace and r["job"] == job]
    return found


@pytest.fixture
def expired(acme: Tenant, globex: Tenant) -> dict[str, Memory]:
    """One expired and one live memory in each namespace."""
    past = timezone.now() - timedelta(minutes=5)
    made = {}
    for tenant in (acme, globex):
        made[tenant.slug] = remember(tenant, f"{tenant.slug} door code 4711", expires_at=past)
        remember(tenant, f"{tenant.slug} likes tea")
    return made


@pytest.mark.django_db
def test_a_dry_run_reports_every_sweep_of_every_namespace_and_changes_nothing(
    expired: dict[str, Memory],
) -> None:
    events = AuditEvent.objects.count()
    reports = lifecycle("--dry-run")
    assert {(r["namespace"], r["job"]) for r in reports} == {
        (slug, job) for slug in ("acme", "globex") for job in ("expire", "cap", "summarize")
    }
    assert all(r["dry_run"] is True for r in reports)
    acme_expiry = report(reports, "acme", "expire")
    assert acme_expiry["counts"] == {"deleted": 1, "archived": 0}
    assert acme_expiry["memory_ids"] == [str(expired["acme"].id)]
    assert Memory.objects.count() == 4
    assert AuditEvent.objects.count() == events


@pytest.mark.django_db
def test_a_run_deletes_what_the_dry_run_announced_and_audits_it_as_the_command(
    expired: dict[str, Memory], acme: Tenant
) -> None:
    reports = lifecycle()
    assert report(reports, "acme", "expire")["counts"] == {
        "deleted": 1, "archived": 0, "versions_deleted": 1,
    }  # fmt: skip
    assert all(r["dry_run"] is False for r in reports)
    assert not Memory.objects.filter(pk__in=[m.pk for m in expired.values()]).exists()
    assert Memory.objects.count() == 2
    events = AuditEvent.objects.filter(action="lifecycle.expire")
    assert events.count() == 2  # one per namespace that had something to do
    event = events.get(namespace_id=acme.namespace.pk)
    assert event.actor_name == "manage.py lifecycle"
    assert event.details == {"counts": {"deleted": 1, "archived": 0, "versions_deleted": 1}}


@pytest.mark.django_db
def test_a_second_run_finds_nothing_and_audits_nothing(expired: dict[str, Memory]) -> None:
    lifecycle()
    events = AuditEvent.objects.count()
    again = lifecycle()
    assert all(not any(r["counts"].values()) for r in again)
    assert AuditEvent.objects.count() == events


@pytest.mark.django_db
def test_it_can_run_one_sweep_of_one_namespace(
    expired: dict[str, Memory], acme: Tenant, globex: Tenant
) -> None:
    # Over a cap of one: the cap sweep, had it run, would archive one of the two left.
    remember(acme, "acme likes cake")
    namespace_update(actor=ACTOR, namespace=acme.namespace, max_memories_per_subject=1)
    reports = lifecycle("--namespace", "acme", "--job", "expire")
    assert [(r["namespace"], r["job"]) for r in reports] == [("acme", "expire")]
    assert not Memory.objects.filter(pk=expired["acme"].pk).exists()
    assert Memory.objects.filter(pk=expired["globex"].pk).exists()
    assert not Memory.objects.filter(status="archived").exists()


@pytest.mark.django_db
def test_it_refuses_an_unknown_namespace(expired: dict[str, Memory]) -> None:
    with pytest.raises(CommandError, match="No such namespace: initech"):
        lifecycle("--namespace", "initech")
    assert Memory.objects.count() == 4
