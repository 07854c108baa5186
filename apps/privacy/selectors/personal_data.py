"""What the portal says about personal data (e-mail addresses, phone numbers…) in what a person
told the app: what the namespace's PII policy does with each kind now; which memories kept
about them hold some (the policy marked them `pii:<kind>` when it stored them); and each write
in which the policy found some, when the person wrote it, what the policy did then, and what
of it is still kept. Every statement is computed from the rows the page shows, so the page
never says "kept out" beside a memory that holds the address."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _

from apps.audit.models import AuditEvent
from apps.memories.models import SEARCH_FIELDS, Memory, Subject
from apps.memories.row_encryption import KeyCache
from apps.namespaces import pii
from apps.pipeline.models import Job, Message
from apps.privacy.selectors import Item, items, origin_time, said_times

WRITES = 200  # the newest writes listed
MARKED = 500  # the marked memories read (a person has a handful)
LISTED = 5  # memories listed under one write

PII_NAMES: dict[str, Callable[[], str]] = {
    pii.EMAIL: lambda: _("e-mail address"),
    pii.PHONE: lambda: _("phone number"),
    pii.CARD: lambda: _("card number"),
    pii.IBAN: lambda: _("bank account (IBAN)"),
    pii.SSN: lambda: _("national id number"),
    pii.SECRET: lambda: _("password or secret key"),
}

# What a policy does with a kind of personal data it finds (`allow` does not look).
HANDLING: dict[str, Callable[[], str]] = {
    "allow": lambda: _("not looked for: stored as written"),
    "tag": lambda: _("stored, and marked as personal data"),
    "redact": lambda: _("removed before anything is stored"),
    "reject": lambda: _("refused: not stored"),
}

# What a policy did with a write in which it found some.
OUTCOMES: dict[str, Callable[[], str]] = {
    "allow": lambda: _("stored as written (the app allows it)"),
    "tag": lambda: _("stored, and marked as personal data"),
    "redact": lambda: _("removed before anything was stored"),
    "reject": lambda: _("refused: nothing was stored"),
}
STORING = ("allow", "tag")  # the policies under which the values were stored


def pii_name(category: str) -> str:
    return PII_NAMES[category]() if category in PII_NAMES else category.replace("_", " ")


@dataclass(frozen=True)
class KindNow:
    """One kind of personal data: what the policy does with it now, and the memories kept
    about the person that the policy marked as holding it."""

    kind: str
    name: str
    handling: str
    stored: list[Item]


@dataclass(frozen=True)
class Write:
    """A write about the person in which the policy found personal data."""

    when: datetime  # when the person wrote it: the turns' time, the memory's, or the write's
    categories: list[str]
    outcome: str  # what the policy did then, in words
    stored: list[Item] = field(default_factory=list)  # of it, the marked memories still kept
    more: int = 0  # marked memories of it still kept, beyond those listed
    gone: bool = False  # it was stored, and nothing of it is kept now


@dataclass(frozen=True)
class PersonalData:
    policy: str  # the namespace's PII policy now
    kinds: list[KindNow]
    writes: list[Write]

    @property
    def stored(self) -> int:
        """The memories kept now that hold personal data (each once)."""
        return len({item.memory.pk for kind in self.kinds for item in kind.stored})


def personal_data(subject: Subject, keys: KeyCache) -> PersonalData:
    """The portal's personal-data page for `subject`. Never a value that was refused or
    redacted (none was recorded); the marked memories are the person's own, opened."""
    policy = subject.namespace.pii_policy
    marked = list(
        Memory.objects.filter(
            namespace_id=subject.namespace_id,
            subject=subject,
            tags__overlap=[f"pii:{kind}" for kind in pii.TYPES],
        )
        .defer(*SEARCH_FIELDS)
        .order_by("-created_at", "-id")[:MARKED]
    )
    opened = {item.memory.pk: item for item in items(subject, marked, keys)}
    kinds = [
        KindNow(
            kind,
            pii_name(kind),
            HANDLING[policy]() if policy in HANDLING else policy,
            [opened[m.pk] for m in marked if f"pii:{kind}" in m.tags],
        )
        for kind in pii.TYPES
    ]
    return PersonalData(policy, kinds, _writes(subject, marked, opened))


def _writes(subject: Subject, marked: list[Memory], opened: dict[uuid.UUID, Item]) -> list[Write]:
    """The writes about the subject whose audit events name PII types, newest first, each
    dated by what the person wrote (its turns, or the memory it made), with the marked
    memories made of it that are still kept."""
    events = list(
        AuditEvent.objects.filter(
            namespace_id=subject.namespace_id, subject_id=subject.pk, details__has_key="pii"
        )
        .exclude(details__pii=[])
        .order_by("-id")[:WRITES]
    )
    turns = _turns_of_jobs(subject, [e.object_id for e in events if e.object_type == "job"])
    by_message: dict[str, list[Memory]] = {}
    for memory in marked:
        message = (memory.source or {}).get("message")
        if message:
            by_message.setdefault(str(message), []).append(memory)
    by_id = {str(memory.pk): memory for memory in marked}
    every = {
        str(m.pk): m
        for m in Memory.objects.filter(
            namespace_id=subject.namespace_id,
            subject=subject,
            pk__in=[
                e.object_id for e in events if e.object_type == "memory" and _uuid(e.object_id)
            ],
        ).only("id", "kind", "source", "created_at", "occurred_at")
    }
    said = said_times(subject, list(every.values()))
    found = []
    for event in events:
        details: dict[str, Any] = event.details or {}
        policy = details.get("pii_policy") or ("reject" if event.outcome == "denied" else "")
        when = event.created_at
        made: list[Memory] = []
        if event.object_type == "job" and event.object_id in turns:
            times, messages = turns[event.object_id]
            when = min(times, default=when)
            made = [m for message in messages for m in by_message.get(message, [])]
        elif event.object_type == "memory" and event.object_id in every:
            memory = every[event.object_id]
            when = origin_time(memory, said.get(memory.pk))
            made = [by_id[event.object_id]] if event.object_id in by_id else []
        made = list(dict.fromkeys(made))
        shown = [opened[m.pk] for m in made[:LISTED] if m.pk in opened]
        found.append(
            Write(
                when=when,
                categories=[pii_name(c) for c in details.get("pii", [])],
                outcome=OUTCOMES[policy]() if policy in OUTCOMES else _("screened"),
                stored=shown,
                more=max(len(made) - LISTED, 0),
                gone=policy in STORING and not made,
            )
        )
    return found


def _uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _turns_of_jobs(
    subject: Subject, job_ids: list[str]
) -> dict[str, tuple[list[datetime], list[str]]]:
    """For each ingestion job: the times of its turns still kept (when the person said them,
    which an app sending an earlier conversation sets), and the ids of all its turns."""
    jobs = Job.objects.filter(
        namespace_id=subject.namespace_id,
        subject=subject,
        pk__in=[j for j in job_ids if _uuid(j)],
    ).values_list("id", "payload", "created_at")
    messages = {str(pk): list((payload or {}).get("messages") or []) for pk, payload, _at in jobs}
    made = {str(pk): at for pk, _payload, at in jobs}
    wanted = [m for ids in messages.values() for m in ids if _uuid(m)]
    times = dict(
        Message.objects.filter(namespace_id=subject.namespace_id, pk__in=wanted).values_list(
            "id", "created_at"
        )
    )
    return {
        job: (
            [times[uuid.UUID(m)] for m in ids if _uuid(m) and uuid.UUID(m) in times] or [made[job]],
            ids,
        )
        for job, ids in messages.items()
    }
