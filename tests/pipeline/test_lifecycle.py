"""Lifecycle sweeps: each previews with dry-run, changes what it should, is idempotent, and is
audited with its counts."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent
from apps.memories.models import Memory, MemoryVersion
from apps.memories.row_encryption import KeyCache, open_memory
from apps.memories.services import NewMemory, memory_create
from apps.namespaces.models import Namespace
from apps.namespaces.services import namespace_update
from apps.pipeline.lifecycle import enforce_cap, expire, summarize_old_episodes
from apps.pipeline.tasks import lifecycle_sweep
from apps.recall.models import RecallLog
from tests.conftest import Tenant

ACTOR = Actor.system("tests")


def remember(tenant: Tenant, content: str, **fields) -> Memory:
    return memory_create(
        actor=ACTOR,
        namespace=tenant.namespace,
        item=NewMemory(subject_external_id="u1", content=content, **fields),
    )


def statuses() -> dict[str, str]:
    keys = KeyCache()
    return {open_memory(keys, m): m.status for m in Memory.objects.all()}


@pytest.mark.django_db
def test_expiry_previews_then_deletes_expired_memories_once(acme: Tenant) -> None:
    gone = remember(acme, "temporary code 1234", expires_at=timezone.now() - timedelta(minutes=1))
    remember(acme, "stays", expires_at=timezone.now() + timedelta(days=1))
    preview = expire(actor=ACTOR, namespace=acme.namespace, dry_run=True)
    assert preview.counts == {"deleted": 1, "archived": 0}
    assert preview.memory_ids == [str(gone.id)]
    assert Memory.objects.count() == 2  # the preview wrote nothing
    done = expire(actor=ACTOR, namespace=acme.namespace)
    assert done.counts == {"deleted": 1, "archived": 0, "versions_deleted": 1}
    assert list(statuses()) == ["stays"]
    assert not MemoryVersion.objects.filter(memory_id=gone.id).exists()
    event = AuditEvent.objects.get(action="lifecycle.expire")
    assert event.details == {"counts": done.counts}
    again = expire(actor=ACTOR, namespace=acme.namespace)
    assert again.counts == {"deleted": 0, "archived": 0}
    assert AuditEvent.objects.filter(action="lifecycle.expire").count() == 1


@pytest.mark.django_db
def test_retention_archives_memories_older_than_the_namespace_allows(acme: Tenant) -> None:
    old = remember(acme, "an old note")
    Memory.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=40))
    remember(acme, "a new note")
    Namespace.objects.filter(pk=acme.namespace.pk).update(retention_days=30)
    acme.namespace.refresh_from_db()
    assert expire(actor=ACTOR, namespace=acme.namespace).counts["archived"] == 1
    assert statuses() == {"an old note": "archived", "a new note": "active"}


@pytest.mark.django_db
def test_the_cap_archives_the_lowest_value_memories_beyond_it(acme: Tenant) -> None:
    Namespace.objects.filter(pk=acme.namespace.pk).update(max_memories_per_subject=3)
    acme.namespace.refresh_from_db()
    low = remember(acme, "trivia one", importance=0.1)
    remember(acme, "trivia two", importance=0.1)
    remember(acme, "core fact", importance=0.9)
    remember(acme, "useful fact", importance=0.6)
    recalled = remember(acme, "trivia but often recalled", importance=0.1)
    RecallLog.objects.bulk_create(
        RecallLog(
            namespace=acme.namespace,
            subject=low.subject,
            actor_type="api_key",
            memory_ids=[recalled.id],
        )
        for _ in range(20)
    )
    preview = enforce_cap(actor=ACTOR, namespace=acme.namespace, dry_run=True)
    assert preview.counts == {"archived": 2, "subjects": 1}
    assert set(statuses().values()) == {"active"}
    enforce_cap(actor=ACTOR, namespace=acme.namespace)
    assert statuses() == {
        "trivia one": "archived",
        "trivia two": "archived",
        "core fact": "active",
        "useful fact": "active",
        "trivia but often recalled": "active",
    }
    assert enforce_cap(actor=ACTOR, namespace=acme.namespace).counts["archived"] == 0


@pytest.mark.django_db
def test_old_episodes_become_one_summary_linking_its_sources(acme: Tenant) -> None:
    acme.namespace = namespace_update(actor=ACTOR, namespace=acme.namespace, summarize_after_days=7)
    long_ago = timezone.now() - timedelta(days=30)
    turns = [
        "I adopted a dog named Biscuit last week.",
        "We walked along the river in Lyon for two hours.",
        "Biscuit loves chasing the ducks there.",
    ]
    sources = [
        remember(acme, text, kind="episodic", occurred_at=long_ago, source={"session": "s1"})
        for text in turns
    ]
    remember(
        acme, "Yesterday I started a pottery class.", kind="episodic", source={"session": "s1"}
    )
    preview = summarize_old_episodes(actor=ACTOR, namespace=acme.namespace, dry_run=True)
    assert preview.counts == {"summaries": 1, "archived": 3}
    assert Memory.objects.count() == 4
    summarize_old_episodes(actor=ACTOR, namespace=acme.namespace)
    summary = Memory.objects.get(tags__contains=["summary"])
    assert summary.metadata["summary_of"] == [str(m.id) for m in sources]
    text = open_memory(KeyCache(), summary)
    assert "Biscuit" in text
    assert "Lyon" in text
    for source in sources:
        source.refresh_from_db()
        assert source.status == "archived"
        assert source.metadata["summarized_into"] == str(summary.id)
    again = summarize_old_episodes(actor=ACTOR, namespace=acme.namespace)
    assert again.counts == {"summaries": 0, "archived": 0}


@pytest.mark.django_db
def test_the_periodic_task_runs_every_sweep_for_every_namespace(
    acme: Tenant, globex: Tenant
) -> None:
    remember(acme, "expired", expires_at=timezone.now() - timedelta(seconds=1))
    reports = lifecycle_sweep.delay(dry_run=True).get()
    assert {(r["namespace"], r["job"]) for r in reports} == {
        (slug, job) for slug in ("acme", "globex") for job in ("expire", "cap", "summarize")
    }
    assert (
        next(r for r in reports if r["namespace"] == "acme" and r["job"] == "expire")["counts"][
            "deleted"
        ]
        == 1
    )
