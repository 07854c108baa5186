"""What a namespace policy change would do, before it is saved: a dry run of each setting
that acts on stored memories (retention, the cap per subject, summaries of old episodes,
the PII policy, the review threshold). Nothing is changed here and nothing is audited."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import Count
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.audit.actors import Actor
from apps.memories.models import VECTOR_FIELDS, Memory, Status
from apps.memories.row_encryption import KeyCache, open_memory
from apps.namespaces import pii
from apps.namespaces.models import Extractor, Namespace
from apps.pipeline import lifecycle

PII_SAMPLE = 1000


@dataclass(frozen=True)
class Effect:
    setting: str
    text: str  # what the change would do, in words (translated)


def policy_preview(*, namespace: Namespace, changes: dict[str, Any]) -> list[Effect]:
    """The effects of `changes` (field -> new value) on the namespace's stored memories, as
    sentences; settings that only steer what happens next say so."""
    proposed = copy.copy(namespace)
    for name, value in changes.items():
        setattr(proposed, name, value)
    effects: list[Effect] = []
    system = Actor.system("policy-preview")
    if "retention_days" in changes:
        effects.append(Effect("retention_days", _retention(proposed)))
    if "max_memories_per_subject" in changes:
        if proposed.max_memories_per_subject:
            report = lifecycle.enforce_cap(actor=system, namespace=proposed, dry_run=True)
            text = (
                ngettext(
                    "This cap would archive %(archived)d memories of %(subjects)d subject now.",
                    "This cap would archive %(archived)d memories of %(subjects)d subjects now.",
                    report.counts["subjects"],
                )
                % report.counts
            )
        else:
            text = _("No cap: no memory is archived for being one too many.")
        effects.append(Effect("max_memories_per_subject", text))
    if "summarize_after_days" in changes:
        if proposed.summarize_after_days:
            report = lifecycle.summarize_old_episodes(
                actor=system, namespace=proposed, dry_run=True
            )
            text = (
                _(
                    "The next sweep would summarize %(archived)d old episodic memories into "
                    "%(summaries)d summaries."
                )
                % report.counts
            )
        else:
            text = _("Old episodes are never summarized.")
        effects.append(Effect("summarize_after_days", text))
    if "pii_policy" in changes:
        effects.append(Effect("pii_policy", _pii(namespace, proposed.pii_policy)))
    if "review_below" in changes:
        current = Memory.objects.filter(
            namespace=namespace, status=Status.ACTIVE, valid_to__isnull=True
        ).exclude(metadata__has_key="reviewed_at")
        below = current.filter(confidence__lt=proposed.review_threshold).count()
        text = _(
            "%(count)d current memories are less certain than %(threshold)s: they would be "
            "in the review queue; new facts below it wait for review."
        ) % {"count": below, "threshold": proposed.review_threshold}
        effects.append(Effect("review_below", text))
    if "erasure_grace_days" in changes:
        text = (
            _("Erasures asked for from now on wait %(days)d days, cancellable.")
            % {"days": proposed.erasure_grace_days}
            if proposed.erasure_grace_days
            else _("Erasures asked for in the portal run at once.")
        )
        effects.append(Effect("erasure_grace_days", text))
    if "extractor" in changes:
        effects.append(Effect("extractor", _extractor(proposed.extractor)))
    for name in (
        "recency_half_life_days",
        "keep_turns_when_paused",
        "name",
        "description",
        "portal_return_origins",
        "portal_frame_origins",
    ):
        if name in changes:
            effects.append(Effect(name, _("Changes no stored memory.")))
    return effects


def _extractor(chosen: str) -> str:
    label = Extractor(chosen or settings.MEMORYHUB_EXTRACTOR).label
    if not chosen:
        return _(
            "New conversations are read by the server's default extractor (%(extractor)s); "
            "stored memories stay as they are."
        ) % {"extractor": label}
    text = _("New conversations are read by: %(extractor)s; stored memories stay as they are.")
    return text % {"extractor": label}


def _retention(proposed: Namespace) -> str:
    if not proposed.retention_days:
        return _("No retention: memories are kept until deleted or expired.")
    cutoff = timezone.now() - timedelta(days=proposed.retention_days)
    old = Memory.objects.filter(
        namespace=proposed,
        status=Status.ACTIVE,
        expires_at__isnull=True,
        created_at__lt=cutoff,
    )
    figures = old.aggregate(memories=Count("id"), subjects=Count("subject", distinct=True))
    return (
        ngettext(
            "This retention change would archive %(memories)d memories of %(subjects)d subject.",
            "This retention change would archive %(memories)d memories of %(subjects)d subjects.",
            figures["subjects"],
        )
        % figures
    )


def _pii(namespace: Namespace, policy: str) -> str:
    recent = list(
        Memory.objects.filter(namespace=namespace)
        .order_by("-created_at")
        .defer(*VECTOR_FIELDS)[:PII_SAMPLE]
    )
    keys = KeyCache()
    keys.preload(namespace.pk, [m.subject_id for m in recent])
    # The writes in which the policy would have found personal data (the same scan it runs).
    touched = sum(1 for memory in recent if pii.scan(open_memory(keys, memory)))
    verb = {
        "allow": _("stored as written"),
        "tag": _("tagged"),
        "redact": _("redacted"),
        "reject": _("refused"),
    }.get(policy, policy)
    return _(
        "This PII policy would have %(verb)s %(count)d of the last %(total)d writes "
        "(memories already stored are not changed)."
    ) % {"verb": verb, "count": touched, "total": len(recent)}
