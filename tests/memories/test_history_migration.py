"""The data migration that ends stored turns with every fact they stated
(memories/0025_turns_end_with_every_fact.py), run on rows stored by the rules before it: a
compound turn left current beside a fact that ended, a turn of a disputed fact, and a
correction turn that states the new value (which stays current)."""

from __future__ import annotations

import importlib

import pytest
from django.db import connection
from django.utils import timezone

from apps.audit.actors import Actor
from apps.memories.models import Memory
from apps.memories.row_encryption import KeyCache, open_memory
from apps.pipeline.ingestion import IncomingMessage, messages_ingest
from tests.conftest import Tenant

MIGRATION = importlib.import_module("apps.memories.migrations.0025_turns_end_with_every_fact")


def _said(tenant: Tenant, text: str) -> tuple[list[Memory], Memory]:
    job, _ = messages_ingest(
        actor=Actor.system("tests"), namespace=tenant.namespace, subject_external_id="u1",
        session_external_id="s1", messages=[IncomingMessage("user", text)],
    )  # fmt: skip
    job.refresh_from_db()
    assert job.status == "succeeded"
    rows = Memory.objects.filter(namespace=tenant.namespace).order_by("-created_at")
    turn = rows.filter(kind="episodic").first()
    assert turn is not None
    facts = list(rows.filter(kind="semantic", source__message=turn.source["message"]))
    return facts, turn


@pytest.mark.django_db
def test_it_ends_the_turns_of_ended_and_disputed_facts_and_keeps_a_correction(
    acme: Tenant,
) -> None:
    compound_facts, compound = _said(acme, "I live in Leeds and I work as a nurse.")
    keys = KeyCache()
    (home,) = [f for f in compound_facts if "Leeds" in open_memory(keys, f)]
    disputed_facts, disputed_turn = _said(acme, "I'm allergic to kiwi.")
    ended_at = timezone.now()
    # As the rules before it left them: the fact ended or disputed, its turn current.
    Memory.objects.filter(pk=home.pk).update(valid_to=ended_at)
    Memory.objects.filter(pk=disputed_facts[0].pk).update(
        status="disputed", metadata={"disputed_at": ended_at.isoformat()}
    )
    Memory.objects.filter(pk__in=[compound.pk, disputed_turn.pk]).update(valid_to=None)
    with connection.cursor() as cursor:
        cursor.execute(MIGRATION.END_WITH_ENDED_FACTS)
        cursor.execute(MIGRATION.END_WITH_DISPUTED_FACTS)
    compound.refresh_from_db()
    assert compound.valid_to == ended_at
    assert compound.metadata["ended_with"] == str(home.pk)
    disputed_turn.refresh_from_db()
    assert disputed_turn.valid_to == ended_at
    assert disputed_turn.metadata["ended_with"] == str(disputed_facts[0].pk)


@pytest.mark.django_db
def test_it_leaves_current_a_turn_that_states_the_new_value(acme: Tenant) -> None:
    old_facts, _ = _said(acme, "I'm allergic to peanuts.")
    new_facts, correction = _said(acme, "Actually, I'm not allergic to peanuts, it's shellfish.")
    new = next(f for f in new_facts if f.valid_to is None)
    # The old fact names the correction's own fact as its successor.
    Memory.objects.filter(pk=old_facts[0].pk).update(
        valid_to=timezone.now(), superseded_by=new, source=correction.source
    )
    with connection.cursor() as cursor:
        cursor.execute(MIGRATION.END_WITH_ENDED_FACTS)
    correction.refresh_from_db()
    assert correction.valid_to is None
