"""A person's correction in the portal stands: consolidation never replaces, merges into or
ends it with a value extracted from a turn said before the correction, nor with the wording
the person corrected away (an app re-sending the whole conversation). What they tell the app
afterwards is new information and is taken as usual."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.memories.models import Memory
from apps.memories.row_encryption import KeyCache, open_memory
from apps.pipeline.models import ConsolidationLog
from tests.privacy.conftest import open_portal

pytestmark = pytest.mark.django_db


def send(tenant, capture, content: str, *, when=None, session: str = "s9") -> None:
    message = {"role": "user", "content": content}
    if when is not None:
        message["created_at"] = when.isoformat()
    body = {"subject": "u1", "session": session, "messages": [message]}
    with capture(execute=True):
        response = tenant.client.post(tenant.url("messages"), body, format="json")
    assert response.status_code in (201, 202), response.json()


def current_facts(tenant) -> list[str]:
    keys = KeyCache()
    return sorted(
        open_memory(keys, m)
        for m in Memory.objects.filter(
            namespace=tenant.namespace,
            subject__external_id="u1",
            kind="semantic",
            valid_to=None,
            status="active",
        )
    )


@pytest.fixture
def corrected(acme, django_capture_on_commit_callbacks):
    """u1 said they live in Hangzhou (an hour ago); in the portal they corrected it."""
    hour_ago = timezone.now() - timedelta(hours=1)
    send(acme, django_capture_on_commit_callbacks, "I live in Hangzhou.", when=hour_ago)
    (fact,) = Memory.objects.filter(subject__external_id="u1", kind="semantic")
    portal = open_portal(acme)
    response = portal.client.post(
        portal.url(f"memories/{fact.pk}/correct/"), {"content": "The user lives in Suzhou."}
    )
    assert response.status_code == 302
    assert current_facts(acme) == ["The user lives in Suzhou."]
    return fact


def test_a_correction_survives_a_later_extraction_of_an_older_turn(
    acme, corrected, django_capture_on_commit_callbacks
) -> None:
    # A turn said before the correction, extracted only now (a late batch, a replay).
    earlier = timezone.now() - timedelta(minutes=30)
    send(acme, django_capture_on_commit_callbacks, "I live in Ningbo.", when=earlier)
    assert current_facts(acme) == ["The user lives in Suzhou."]
    kept = ConsolidationLog.objects.filter(related_id=corrected.pk, decision="noop")
    assert kept.filter(reason__startswith="kept the subject's correction").exists()


def test_a_replayed_conversation_does_not_bring_the_old_value_back(
    acme, corrected, django_capture_on_commit_callbacks
) -> None:
    # An app that sends the whole conversation again, stamped now: the turn repeats one the
    # session held before the correction, so it counts as said then.
    send(acme, django_capture_on_commit_callbacks, "I live in Hangzhou.")
    assert current_facts(acme) == ["The user lives in Suzhou."]


def test_the_same_words_said_anew_later_are_new_information(
    acme, corrected, django_capture_on_commit_callbacks
) -> None:
    # Not a replay: another conversation, after the correction. People do move back.
    send(acme, django_capture_on_commit_callbacks, "I live in Hangzhou.", session="s10")
    facts = current_facts(acme)
    assert len(facts) == 1
    assert "Hangzhou" in facts[0]


def test_an_older_negation_does_not_end_the_correction(
    acme, corrected, django_capture_on_commit_callbacks
) -> None:
    earlier = timezone.now() - timedelta(minutes=30)
    send(acme, django_capture_on_commit_callbacks, "I don't live in Suzhou.", when=earlier)
    assert current_facts(acme) == ["The user lives in Suzhou."]


def test_what_the_person_says_afterwards_is_new_information(
    acme, corrected, django_capture_on_commit_callbacks
) -> None:
    send(acme, django_capture_on_commit_callbacks, "I moved to Shanghai last week.")
    facts = current_facts(acme)
    assert len(facts) == 1
    assert "Shanghai" in facts[0]
    corrected.refresh_from_db()
    assert corrected.valid_to is not None  # superseded, kept as history


def test_without_a_correction_an_older_value_still_supersedes(
    acme, django_capture_on_commit_callbacks
) -> None:
    """The protection is the correction's: the same replay without one behaves as before."""
    hour_ago = timezone.now() - timedelta(hours=1)
    send(acme, django_capture_on_commit_callbacks, "I live in Hangzhou.", when=hour_ago)
    send(acme, django_capture_on_commit_callbacks, "I live in Ningbo.", when=hour_ago)
    facts = current_facts(acme)
    assert len(facts) == 1
    assert "Ningbo" in facts[0]
