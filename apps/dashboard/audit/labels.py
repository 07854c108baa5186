"""What the audit viewer calls an event's object and subject: "semantic memory of demo-user-1",
linked to the object's page where it has one.

Resolved when the page renders, for the page's events only, and never written back: the
events stay content-free and their hashes untouched. One query per kind of object on the
page (memories, subjects, erased subjects, users), however many rows name them. The
subjects' external ids are shown where the viewer owns or edits the namespace (or is a
superuser); a viewer sees "a subject" instead. An erased subject is "erased subject" with
the fingerprint its erasure receipt carries (an HMAC of the external id, not the id).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext_lazy

from apps.audit.models import AuditEvent
from apps.audit.selectors import AuditScope, audit_erased_subjects
from apps.memories.selectors import MemoryNaming, memory_namings, subject_external_ids

# The kinds of object an event may name, as a person calls them (the rest show their type).
OBJECT_TYPES = {
    "memory": gettext_lazy("memory"),
    "subject": gettext_lazy("subject"),
    "namespace": gettext_lazy("namespace"),
    "user": gettext_lazy("user"),
    "api_key": gettext_lazy("API key"),
    "job": pgettext_lazy("an audit event's object", "job"),
    "webhook_endpoint": gettext_lazy("webhook endpoint"),
    "chain_verification": gettext_lazy("chain verification"),
    "document": gettext_lazy("document"),
    "portal_session": gettext_lazy("portal session"),
    "portal_link": gettext_lazy("portal link"),
    "audit_export": gettext_lazy("audit export"),
}
MEMORY_KINDS = {
    "semantic": gettext_lazy("semantic memory"),
    "episodic": gettext_lazy("episodic memory"),
    "procedural": gettext_lazy("procedural memory"),
}


@dataclass(frozen=True)
class Label:
    """A name to show for an object or a subject, with the page it links to ("" for none)."""

    text: str
    url: str = ""
    fingerprint: str = ""  # an erased subject's receipt fingerprint


@dataclass(frozen=True)
class EventLabels:
    object: Label | None  # None: the event names no object
    subject: Label | None  # None: the event names no subject
    object_names_subject: bool = False  # the object's label already says whose it is

    @property
    def subject_apart(self) -> Label | None:
        """The subject, where the object's label does not already name it (the log's row)."""
        return None if self.object_names_subject else self.subject


@dataclass(frozen=True)
class _Subjects:
    """The page's subjects: external ids of those that exist, fingerprints of erased ones."""

    names: dict[str, str]
    erased: dict[str, str]


def audit_event_labels(
    *, events: Sequence[AuditEvent], scope: AuditScope
) -> dict[int, EventLabels]:
    """Each event's labels, by event id (see the module's docstring). The events are ones
    the viewer may see; one query per kind of object named (memories, subjects, erased
    subjects, users), whatever their number."""
    memories = memory_namings({e.object_id for e in events if e.object_type == "memory"})
    subjects = _subjects(events, memories)
    users = _user_names(events)
    labels: dict[int, EventLabels] = {}
    for event in events:
        subject = _subject_label(event, str(event.subject_id or ""), subjects, scope)
        names_subject = False
        label: Label | None
        if event.object_type == "memory":
            memory = memories.get(event.object_id)
            label = _memory_label(event, memory, subjects, scope)
            names_subject = memory is None or memory.subject_id == event.subject_id
        elif event.object_type == "subject":
            label = _subject_label(event, event.object_id, subjects, scope)
            names_subject = event.object_id == str(event.subject_id or "")
        else:
            label = _other_label(event, scope, users)
        labels[event.pk] = EventLabels(label, subject, object_names_subject=names_subject)
    return labels


def _subjects(events: Sequence[AuditEvent], memories: dict[str, MemoryNaming]) -> _Subjects:
    ids = {e.subject_id for e in events if e.subject_id}
    ids |= {m.subject_id for m in memories.values() if m.subject_id}
    names = subject_external_ids(ids)
    missing = [pk for pk in ids if str(pk) not in names]
    return _Subjects(names=names, erased=audit_erased_subjects(subject_ids=missing))


def _user_names(events: Sequence[AuditEvent]) -> dict[str, str]:
    ids = {e.object_id for e in events if e.object_type == "user" and e.object_id.isdigit()}
    if not ids:
        return {}
    found = User.objects.filter(pk__in=[int(pk) for pk in ids]).values_list("pk", "username")
    return {str(pk): username for pk, username in found}


def _subject_label(
    event: AuditEvent,
    subject_id: str,
    subjects: _Subjects,
    scope: AuditScope,
) -> Label | None:
    if not subject_id:
        return None
    if subject_id in subjects.erased:
        return Label(_("erased subject"), fingerprint=subjects.erased[subject_id])
    if subject_id not in subjects.names:
        return Label(_("deleted subject"))
    url = ""
    if event.namespace_slug:
        url = reverse("dashboard:subjects:detail", args=[event.namespace_slug, subject_id])
    if not scope.shows_external_ids(event.namespace_id):
        return Label(_("a subject"), url)
    name = subjects.names[subject_id]
    return Label(_("subject %(name)s") % {"name": name}, url)


def _memory_label(
    event: AuditEvent, memory: MemoryNaming | None, subjects: _Subjects, scope: AuditScope
) -> Label:
    kind = memory.kind if memory else str((event.details or {}).get("kind", ""))
    what = str(MEMORY_KINDS.get(kind, OBJECT_TYPES["memory"]))
    subject_id = memory.subject_id if memory else event.subject_id
    if subject_id is not None:
        text = _whose(what, str(subject_id), subjects, scope.shows_external_ids(event.namespace_id))
    elif memory is not None:
        text = _("%(memory)s shared by the namespace") % {"memory": what}
    else:  # gone, and whose it was is not known
        text = f"{what} {_short(event.object_id)}"
    if memory is None:
        return Label(_("%(label)s (deleted)") % {"label": text})
    if not event.namespace_slug:
        return Label(text)
    url = reverse("dashboard:memories:detail", args=[event.namespace_slug, event.object_id])
    return Label(text, url)


def _whose(what: str, subject_id: str, subjects: _Subjects, external_ids: bool) -> str:
    """ "semantic memory of demo-user-1", or of a subject not named to this viewer."""
    if subject_id in subjects.erased:
        return _("%(memory)s of an erased subject") % {"memory": what}
    if subject_id not in subjects.names:
        return _("%(memory)s of a deleted subject") % {"memory": what}
    if not external_ids:
        return _("%(memory)s of a subject") % {"memory": what}
    return _("%(memory)s of %(subject)s") % {"memory": what, "subject": subjects.names[subject_id]}


def _other_label(event: AuditEvent, scope: AuditScope, users: dict[str, str]) -> Label | None:
    if not event.object_type:
        return None
    kind = str(OBJECT_TYPES.get(event.object_type, event.object_type))
    name, url = _short(event.object_id), ""
    slug = event.namespace_slug
    if event.object_type == "user":
        name = users.get(event.object_id, name)
    elif event.object_type == "api_key" and event.object_id:
        url = reverse("dashboard:keys:detail", args=[event.object_id])
    elif event.object_type == "namespace" and slug and event.object_id == str(event.namespace_id):
        name, url = slug, reverse("dashboard:memories:list", args=[slug])
    elif event.object_type == "webhook_endpoint" and slug and event.object_id:
        url = reverse("dashboard:webhooks:detail", args=[slug, event.object_id])
    elif event.object_type == "chain_verification" and scope.everything and name.isdigit():
        url = reverse("dashboard:audit:verification", args=[int(event.object_id)])
    text = f"{kind} {name}".strip()
    return Label(text, url)


def _short(object_id: str) -> str:
    """Long ids (UUIDs) cut to their first eight characters, as the log always showed them."""
    return f"{object_id[:8]}…" if len(object_id) > 12 else object_id
