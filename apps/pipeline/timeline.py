"""A person's facts as timelines: each fact slot's values in order, when each held, and how
each ended ("allergy: peanuts (3 Mar to 9 Mar, corrected in conversation) → shellfish (since
9 Mar)"), with the turns that stated them. The dashboard's subject page and the privacy
portal read the same timelines.

A timeline follows `superseded_by` from a fact to the one that replaced it. A fact a turn
ended without naming a successor ("Actually, I'm not allergic to peanuts, it's shellfish":
the peanut fact is ended, the shellfish fact is new) is followed to the fact that same turn
stated in the same kind of slot. A fact corrected in place by a person (its text edited) is
a step per version. Only slots with history are drawn: a fact that never changed is a
memory like any other.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from apps.memories.models import SEARCH_FIELDS, Kind, Memory, MemoryVersion, Status, Subject
from apps.memories.row_encryption import KeyCache, open_memory, open_version
from apps.pipeline.consolidation import slot_hash

# What a fact's slot kind is called (its slot's group, `facts.grammar.slot_group`).
KINDS: dict[str, Promise] = {
    "allergy": _("allergy"),
    "condition": _("health condition"),
    "medication": _("medication"),
    "home": _("home"),
    "employer": _("employer"),
    "job": _("job"),
    "diet": _("diet"),
    "marital": _("relationship status"),
    "name": _("name"),
    "nickname": _("nickname"),
    "pet": _("pet"),
    "plan": _("plans"),
    "opinion": _("likes and dislikes"),
    "study": _("studies"),
    "habit": _("habits"),
    "activity": _("activities"),
    "age": _("age"),
    "origin": _("where they are from"),
}
OTHER_KIND = _("fact")
# How a value ended, as the dashboard says it and as the portal says it to the person.
HOW: dict[str, tuple[Promise, Promise]] = {
    "corrected_in_conversation": (
        _("corrected by the person in conversation"),
        _("you corrected it in conversation"),
    ),
    "ended_in_conversation": (
        _("ended by the person in conversation"),
        _("you said it no longer holds"),
    ),
    "corrected_by_hand": (_("corrected by hand"), _("corrected by hand")),
    "replaced": (_("replaced"), _("replaced")),
    "merged": (_("merged into a duplicate"), _("merged into a duplicate")),
    "ended_by_reviewer": (_("ended by a reviewer"), _("ended by a reviewer")),
    "ended": (_("ended"), _("ended")),
    "disputed": (_("in doubt, waiting for a reviewer"), _("we're not sure this is still true")),
}


@dataclass(frozen=True)
class Step:
    """One value of a slot: its text, when it held (`until` None: it still holds), how it
    ended (`how`: a key of HOW, or None), and the turns that stated it."""

    memory: Memory
    text: str
    since: datetime
    until: datetime | None
    how: str | None  # a key of HOW
    turns: list[Memory] = field(default_factory=list)
    disputed: bool = False

    @property
    def how_said(self) -> Promise | None:
        return HOW[self.how][0] if self.how else None

    @property
    def how_said_to_the_person(self) -> Promise | None:
        return HOW[self.how][1] if self.how else None


@dataclass(frozen=True)
class Timeline:
    kind: Promise
    steps: list[Step]

    @property
    def current(self) -> Step | None:
        last = self.steps[-1]
        return last if last.until is None and not last.disputed else None


def fact_timelines(*, subject: Subject, keys: KeyCache | None = None) -> list[Timeline]:
    """The subject's fact slots that have history (a value replaced, ended, corrected or in
    doubt), newest change first, each oldest value first."""
    return fact_timelines_of(subjects=[subject], keys=keys).get(subject.pk, [])


def fact_timelines_of(
    *,
    subjects: list[Subject],
    keys: KeyCache | None = None,
    holding: Collection[uuid.UUID] | None = None,
) -> dict[uuid.UUID, list[Timeline]]:
    """`fact_timelines` of several subjects at once, by subject id (a subject without history
    is left out), in the same few queries as one subject's. `holding`: only the timelines
    that hold one of these facts (the others are neither decrypted nor returned)."""
    keys = keys or KeyCache()
    if not subjects:
        return {}
    facts = list(
        Memory.objects.filter(subject__in=[subject.pk for subject in subjects], kind=Kind.SEMANTIC)
        .exclude(status=Status.ARCHIVED)
        .defer(*SEARCH_FIELDS)
        .order_by("valid_from", "created_at")
    )
    by_id = {fact.pk: fact for fact in facts}
    following = _following(facts)
    # The chains with history, chosen from columns alone: only their facts are decrypted,
    # and only their versions and turns read.
    chains = [
        chain
        for chain in _chains(facts, by_id, following)
        if (
            len(chain) > 1
            or chain[-1].valid_to is not None
            or chain[-1].status == Status.DISPUTED
            or chain[-1].version > 1
        )
        and (holding is None or any(fact.pk in holding for fact in chain))
    ]
    drawn = [fact for chain in chains for fact in chain]
    known = _Known(
        keys=keys,
        by_id=by_id,
        following=following,
        versions=_versions(drawn),
        turns=_turns(drawn),
    )
    kinds = {
        namespace_id: _kind_names(namespace_id, keys)
        for namespace_id in {subject.namespace_id for subject in subjects}
    }
    found: dict[uuid.UUID | None, list[Timeline]] = defaultdict(list)
    for chain in chains:
        first = chain[0]
        found[first.subject_id].append(
            Timeline(
                kind=kinds[first.namespace_id].get(first.metadata.get("group", ""), OTHER_KIND),
                steps=[step for memory in chain for step in _steps(memory, known)],
            )
        )
    return {
        subject_id: sorted(
            timelines, key=lambda t: max(s.until or s.since for s in t.steps), reverse=True
        )
        for subject_id, timelines in found.items()
        if subject_id is not None  # always: the facts were chosen by their subjects
    }


def _chains(
    facts: list[Memory], by_id: dict[uuid.UUID, Memory], following: dict[uuid.UUID, uuid.UUID]
) -> list[list[Memory]]:
    """Each chain of values, from a fact nothing led to, following each to the next."""
    followed = set(following.values())
    chains = []
    for fact in facts:
        if fact.pk in followed:
            continue  # not the start of a chain
        chain = [fact]
        while (after := following.get(chain[-1].pk)) in by_id and by_id[after] not in chain:
            chain.append(by_id[after])
        chains.append(chain)
    return chains


@dataclass(frozen=True)
class _Known:
    """What the steps are drawn from, read once for the subject."""

    keys: KeyCache
    by_id: dict[uuid.UUID, Memory]
    following: dict[uuid.UUID, uuid.UUID]
    versions: dict[uuid.UUID, list[MemoryVersion]]
    turns: dict[str, list[Memory]]


def _following(facts: list[Memory]) -> dict[uuid.UUID, uuid.UUID]:
    """Each fact's next value: its successor, or the fact of the same kind of slot stated by
    the turn that ended it."""
    stated = {
        ((f.source or {}).get("message"), f.metadata.get("group")): f.pk
        for f in facts
        if (f.source or {}).get("message") and f.metadata.get("group")
    }
    following = {}
    for fact in facts:
        if fact.superseded_by_id is not None:
            following[fact.pk] = fact.superseded_by_id
        elif ended_by := fact.metadata.get("ended_by"):
            successor = stated.get((ended_by, fact.metadata.get("group")))
            if successor is not None and successor != fact.pk:
                following[fact.pk] = successor
    return following


def _versions(facts: list[Memory]) -> dict[uuid.UUID, list[MemoryVersion]]:
    found: dict[uuid.UUID, list[MemoryVersion]] = defaultdict(list)
    edited = [fact.pk for fact in facts if fact.version > 1]
    for version in MemoryVersion.objects.filter(memory_id__in=edited).order_by("version"):
        found[version.memory_id].append(version)
    return found


def _kind_names(namespace_id: int, keys: KeyCache) -> dict[str, Promise]:
    """Slot groups (keyed hashes) to the name of their kind."""
    return {slot_hash(keys, namespace_id, kind): name for kind, name in KINDS.items()}


def _turns(facts: list[Memory]) -> dict[str, list[Memory]]:
    """The turns each fact's message made (the turns that stated it), by message."""
    messages = {(f.source or {}).get("message") for f in facts} - {None, ""}
    if not messages:
        return {}
    found: dict[str, list[Memory]] = defaultdict(list)
    turns = Memory.objects.filter(
        subject__in={f.subject_id for f in facts},
        kind=Kind.EPISODIC,
        source__message__in=list(messages),
    ).defer(*SEARCH_FIELDS)
    for turn in turns:
        found[turn.source["message"]].append(turn)
    return found


def _steps(fact: Memory, known: _Known) -> list[Step]:
    """The fact's values: one per version a person corrected it to, else one."""
    stated = known.turns.get((fact.source or {}).get("message") or "", [])
    edits = known.versions.get(fact.pk, [])
    steps = []
    for n, version in enumerate(edits[:-1]):  # every version but the current one
        text = open_version(known.keys, version, fact.subject_id, fact.namespace_id)
        since = fact.valid_from if n == 0 else version.created_at
        until = edits[n + 1].created_at
        turns = stated if n == 0 else []
        steps.append(Step(fact, text, since, until, "corrected_by_hand", turns))
    disputed = fact.status == Status.DISPUTED
    steps.append(
        Step(
            memory=fact,
            text=open_memory(known.keys, fact),
            since=edits[-1].created_at if len(edits) > 1 else fact.valid_from,
            until=fact.valid_to,
            how=_how(fact, known) if fact.valid_to is not None or disputed else None,
            turns=[] if len(edits) > 1 else stated,
            disputed=disputed,
        )
    )
    return steps


def _how(fact: Memory, known: _Known) -> str:
    """How a fact that ended, ended (or that it is in doubt): a key of HOW."""
    if fact.status == Status.DISPUTED:
        return "disputed"
    if fact.metadata.get("merged"):
        return "merged"
    following = known.following.get(fact.pk)
    after = known.by_id.get(following) if following is not None else None
    if after is not None and (after.source or {}).get("message"):
        return "corrected_in_conversation"
    if fact.superseded_by_id is not None:
        return "replaced"
    if fact.metadata.get("ended_by"):
        return "ended_in_conversation"
    if fact.metadata.get("ended") == "ended by a reviewer":
        return "ended_by_reviewer"
    return "ended"
