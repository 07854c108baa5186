"""Validity as data: a turn ends with the facts it stated.

A fact knows the turn it came from by the message both were made of (`source["message"]`).
When a fact ends (a new value, a negation, a reviewer's end, a dispute, a deletion) or is
replaced in place (a person's correction of its text), the turns that stated it stop being
current with it: the same `valid_to`, the same `superseded_by`, in the caller's transaction,
one audit event a turn. A turn is left current when it states the new value itself (the
turn "Actually, it's shellfish" both ends the peanut fact and states its successor). A turn
that also stated another fact ("I live in Leeds and work at Bosch") ends all the same: the
other fact is still served on its own, and the turn would tell the app the old value.

`metadata["ended_with"]` names the fact a turn ended with, so that reopening the fact (a
rolled-back supersede, a confirmed dispute) reopens exactly those turns. It is provenance:
what is served is decided by `valid_to` alone.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from django.db import transaction

from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.memories.models import SEARCH_FIELDS, Kind, Memory, Status
from apps.namespaces.models import Namespace

ENDED_WITH = "ended_with"


def _message(memory: Memory) -> str | None:
    message = (memory.source or {}).get("message")
    return str(message) if message else None


def turns_end_with(
    *,
    actor: Actor,
    fact: Memory,
    when: datetime,
    successor: uuid.UUID | None = None,
    replaced_in_place: bool = False,
) -> list[uuid.UUID]:
    """End, with `fact`, the current turns of its subject made of the message it came from,
    unless that message also made `successor` (it states the new value). A turn that also
    stated a fact that still holds ends too: that fact is served, and the turn would tell the
    app the old value beside it. Returns the ended
    turns' ids. With `replaced_in_place` (a person corrected the fact's text), the fact
    itself is the successor: it holds, but no longer says what its turn said.

    Runs in the caller's transaction and audits each turn (`memory.supersede`, reason
    "its fact ended"). Does nothing for a memory that is not a fact, or a fact with no
    source message (written through the API or the dashboard) or no subject."""
    message = _message(fact)
    if fact.kind != Kind.SEMANTIC or message is None or fact.subject_id is None:
        return []
    successor_id = fact.pk if replaced_in_place else successor
    same_message = Memory.objects.filter(
        namespace_id=fact.namespace_id, subject_id=fact.subject_id, source__message=message
    )
    if (
        not replaced_in_place
        and successor_id is not None
        and same_message.filter(pk=successor_id).exists()
    ):
        return []  # the turn states the new value
    turns = list(
        same_message.filter(kind=Kind.EPISODIC, valid_to__isnull=True).only(
            "id", "namespace_id", "subject_id", "metadata"
        )
    )
    for turn in turns:
        turn.valid_to = when
        turn.superseded_by_id = successor_id
        turn.metadata = {**turn.metadata, ENDED_WITH: str(fact.pk)}
        turn.metadata.pop("outdated_by", None)
        turn.updated_at = when
        turn.save(update_fields=["valid_to", "superseded_by", "metadata", "updated_at"])
        audit_record(
            actor=actor,
            action="memory.supersede",
            namespace=fact.namespace,
            subject_id=turn.subject_id,
            object_type="memory",
            object_id=str(turn.pk),
            details={
                "successor": str(successor_id) if successor_id else None,
                "with": str(fact.pk),
                "reason": "its fact ended",
            },
        )
    return [turn.pk for turn in turns]


def turns_reopen_with(*, actor: Actor, fact: Memory, when: datetime) -> list[uuid.UUID]:
    """Make current again the turns that ended with `fact` (`turns_end_with`), now that it
    holds again. Runs in the caller's transaction; audits each turn (`memory.reopen`)."""
    if fact.subject_id is None:
        return []
    turns = list(
        Memory.objects.filter(
            namespace_id=fact.namespace_id,
            subject_id=fact.subject_id,
            kind=Kind.EPISODIC,
            valid_to__isnull=False,
            metadata__contains={ENDED_WITH: str(fact.pk)},
        ).only("id", "namespace_id", "subject_id", "metadata")
    )
    for turn in turns:
        turn.valid_to = None
        turn.superseded_by_id = None
        turn.metadata = {key: value for key, value in turn.metadata.items() if key != ENDED_WITH}
        turn.updated_at = when
        turn.save(update_fields=["valid_to", "superseded_by", "metadata", "updated_at"])
        audit_record(
            actor=actor,
            action="memory.reopen",
            namespace=fact.namespace,
            subject_id=turn.subject_id,
            object_type="memory",
            object_id=str(turn.pk),
            details={"with": str(fact.pk)},
        )
    return [turn.pk for turn in turns]


def history_relink(*, actor: Actor, namespace: Namespace) -> int:
    """Apply `turns_end_with` again to every ended fact of the namespace (data stored before
    turns ended with their facts, or restored from elsewhere): each fact's turns end at its
    `valid_to`, with its successor; a disputed fact's turns end at its dispute. One
    transaction; returns the number of turns ended.
    Facts corrected in place are not found here (nothing but their versions says so)."""
    ended = 0
    with transaction.atomic():
        facts = Memory.objects.filter(
            namespace=namespace,
            kind=Kind.SEMANTIC,
            subject__isnull=False,
            valid_to__isnull=False,
            source__has_key="message",
        ).order_by("valid_to")
        for fact in facts.defer(*SEARCH_FIELDS).select_related("namespace"):
            assert fact.valid_to is not None
            ended += len(
                turns_end_with(
                    actor=actor, fact=fact, when=fact.valid_to, successor=fact.superseded_by_id
                )
            )
        disputed = Memory.objects.filter(
            namespace=namespace,
            kind=Kind.SEMANTIC,
            subject__isnull=False,
            status=Status.DISPUTED,
            valid_to__isnull=True,
            source__has_key="message",
        )
        for fact in disputed.defer(*SEARCH_FIELDS).select_related("namespace"):
            ended += len(turns_end_with(actor=actor, fact=fact, when=fact.updated_at))
    return ended
