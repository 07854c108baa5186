"""Writes of the privacy portal: links asked for by apps (or admins), the sessions they open,
and what a person does there (correct, delete, erase, pause, language).

Every function is keyword-only and writes its audit event in its own transaction; a person's
own actions are audited with actor type `subject`. Tokens and session keys are random, shown
once, and stored only as SHA-256 hashes (256-bit secrets: no dictionary can guess them).
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.audit.actors import Actor
from apps.audit.services import audit_denied, audit_record
from apps.memories.models import Kind, Memory, Status, Subject
from apps.memories.row_encryption import KeyCache, open_memory
from apps.memories.services import (
    ErasureReceipt,
    memories_purge_batch,
    memory_update,
    subject_erase,
    subject_set_paused,
)
from apps.namespaces.models import Namespace
from apps.namespaces.origins import url_allowed
from apps.pipeline.models import Message
from apps.pipeline.summaries import session_summaries_forget
from apps.privacy.links import by_secret, secret_hash, secret_issue
from apps.privacy.models import (
    ErasureReceiptCode,
    Flow,
    PortalLink,
    PortalSession,
    ScheduledErasure,
)
from memoryhub import erasure_ledger
from memoryhub.exceptions import ApplicationError

logger = logging.getLogger(__name__)

LOCALES = ("en", "zh-hans")
# What the corrected memory's metadata says: when its subject corrected it (consolidation
# never replaces such a memory by a value extracted from an earlier turn).
CORRECTED_AT = "corrected_at"
CORRECTION_REASON = gettext_noop("corrected by the subject")


def locale_of(*, value: str) -> str:
    """A supported locale for what an app sent (`zh-CN`, `zh_Hans`, `en-GB`...); raises the
    API's validation error for anything else."""
    tag = (value or "en").strip().lower().replace("_", "-")
    if tag in LOCALES:
        return tag
    if tag.split("-")[0] == "zh":
        return "zh-hans"
    if tag.split("-")[0] == "en":
        return "en"
    raise ApplicationError(
        gettext_noop("Unsupported locale."), details={"locale": [f"one of: {', '.join(LOCALES)}"]}
    )


@dataclass(frozen=True)
class IssuedLink:
    url: str
    expires_at: datetime
    link: PortalLink


def portal_link_create(
    *,
    actor: Actor,
    namespace: Namespace,
    subject: Subject,
    base_url: str,
    flow: str = Flow.OVERVIEW,
    locale: str = "en",
    return_url: str = "",
) -> IssuedLink:
    """A single-use link to the portal for `subject`, valid MEMORYHUB_PORTAL_LINK_MINUTES.
    `return_url` must be at one of the namespace's portal return origins."""
    if flow not in Flow.values:
        raise ApplicationError(
            gettext_noop("Unknown flow."), details={"flow": [f"one of: {', '.join(Flow)}"]}
        )
    locale = locale_of(value=locale)
    return_url = (return_url or "").strip()
    if len(return_url) > 2000:
        raise ApplicationError(
            gettext_noop("return_url is too long."),
            details={"return_url": ["at most 2000 characters"]},
        )
    if return_url and not url_allowed(return_url, namespace.portal_return_origins):
        raise ApplicationError(
            gettext_noop("return_url is not at one of the namespace's allowed portal origins."),
            details={"return_url": ["origin not allowed"]},
        )
    token = secret_issue(namespace.pk)
    now = timezone.now()
    with transaction.atomic():
        link = PortalLink.objects.create(
            namespace=namespace,
            subject=subject,
            token_hash=secret_hash(token),
            flow=flow,
            locale=locale,
            return_url=return_url,
            created_by=actor.display[:200],
            created_at=now,
            expires_at=now + timedelta(minutes=settings.MEMORYHUB_PORTAL_LINK_MINUTES),
        )
        audit_record(
            actor=actor,
            action="portal.link.create",
            namespace=namespace,
            subject_id=subject.pk,
            object_type="portal_link",
            object_id=str(link.pk),
            details={"flow": flow, "locale": locale, "return_url": bool(return_url)},
        )
    url = base_url.rstrip("/") + reverse("privacy:enter", kwargs={"token": token})
    return IssuedLink(url=url, expires_at=link.expires_at, link=link)


class PortalEntryRefused(Exception):
    """A link that cannot open the portal: `reason` is `unknown`, `used` or `expired`."""

    def __init__(self, reason: str, locale: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.locale = locale


def portal_enter(*, token: str, request: Any = None) -> tuple[PortalSession, str]:
    """Exchange a link's token for a new portal session (its key returned once, for the
    cookie). The link is spent; a replayed, expired or unknown token is refused, audited."""
    now = timezone.now()
    refused: tuple[str, PortalLink | None] | None = None
    with transaction.atomic():
        links = PortalLink.objects.select_for_update().select_related("namespace", "subject")
        link = by_secret(links, "token_hash", token).first()
        if link is None:
            refused = ("unknown", None)
        elif link.used_at is not None:
            refused = ("used", link)
        elif link.expires_at <= now:
            refused = ("expired", link)
        else:
            link.used_at = now
            link.save(update_fields=["used_at"])
            key = secret_issue(link.namespace_id)
            session = PortalSession.objects.create(
                namespace=link.namespace,
                subject=link.subject,
                link=link,
                key_hash=secret_hash(key),
                locale=link.locale,
                return_url=link.return_url,
                created_at=now,
                last_seen_at=now,
            )
            # Who asked for the link: every later action of the session names the session
            # (the actor's name), so it leads back here even after the subject is erased.
            audit_record(
                actor=Actor.for_subject(link.subject_id, request, session=session.pk),
                action="portal.session.start",
                namespace=link.namespace,
                subject_id=link.subject_id,
                object_type="portal_session",
                object_id=str(session.pk),
                details={"flow": link.flow, "link": str(link.pk), "link_by": link.created_by},
            )
            return session, key
    reason, spent = refused
    audit_denied(
        actor=Actor.anonymous(request),
        action="portal.session.start",
        namespace=spent.namespace if spent else None,
        subject_id=spent.subject_id if spent else None,
        reason=f"{reason}_link",
    )
    raise PortalEntryRefused(reason, spent.locale if spent else "")


def portal_session_for(*, key: str, subject_id: str) -> PortalSession | None:
    """The live session of this cookie key, if it is bound to `subject_id`; None when the
    key is unknown, ended, idle too long, or bound to anyone else. Marks it seen."""
    if not key or len(key) > 200:
        return None
    sessions = PortalSession.objects.select_related("namespace", "subject", "link")
    session = by_secret(sessions.filter(ended_at__isnull=True), "key_hash", key).first()
    if session is None or str(session.subject_id) != str(subject_id):
        return None
    now = timezone.now()
    if now - session.last_seen_at > timedelta(minutes=settings.MEMORYHUB_PORTAL_IDLE_MINUTES):
        return None
    if now - session.last_seen_at > timedelta(seconds=30):  # one write a half minute at most
        PortalSession.objects.filter(pk=session.pk).update(last_seen_at=now)
        session.last_seen_at = now
    return session


def portal_refusal_record(*, key: str, subject_id: str, request: Any = None) -> None:
    """A live portal session used at another subject's address: audited as denied (ids
    only), so a probe leaves a trace. Requests without a session are not recorded."""
    if not key or len(key) > 200:
        return
    sessions = PortalSession.objects.select_related("namespace").filter(ended_at__isnull=True)
    session = by_secret(sessions, "key_hash", key).first()
    if session is None or str(session.subject_id) == str(subject_id):
        return
    audit_denied(
        actor=Actor.for_subject(session.subject_id, request, session=session.pk),
        action="portal.access",
        namespace=session.namespace,
        subject_id=session.subject_id,
        reason="another_subject",
    )


def portal_locale_set(*, actor: Actor, session: PortalSession, locale: str) -> PortalSession:
    session.locale = locale_of(value=locale)
    with transaction.atomic():
        PortalSession.objects.filter(pk=session.pk).update(locale=session.locale)
        audit_record(
            actor=actor,
            action="portal.language",
            namespace=session.namespace,
            subject_id=session.subject_id,
            object_type="portal_session",
            object_id=str(session.pk),
            details={"locale": session.locale},
        )
    return session


def portal_session_end(*, actor: Actor, session: PortalSession) -> None:
    with transaction.atomic():
        PortalSession.objects.filter(pk=session.pk).update(ended_at=timezone.now())
        audit_record(
            actor=actor,
            action="portal.session.end",
            namespace=session.namespace,
            subject_id=session.subject_id,
            object_type="portal_session",
            object_id=str(session.pk),
        )


# --- What a person does in the portal --------------------------------------------------------


def memory_correct(*, actor: Actor, memory: Memory, content: str, keys: KeyCache) -> Memory:
    """The subject's own correction of a current memory: a new version, marked as theirs
    (certain, approved, and protected from older extracted values by consolidation)."""
    if memory.valid_to is not None or memory.status == Status.ARCHIVED:
        raise ApplicationError(
            gettext_noop("Only a current memory can be corrected."),
            details={"content": ["not current"]},
        )
    content = (content or "").strip()
    if content == open_memory(keys, memory):
        raise ApplicationError(
            gettext_noop("That is what is remembered already."), details={"content": ["unchanged"]}
        )
    now = timezone.now()
    return memory_update(
        actor=actor,
        memory=memory,
        content=content,
        reason=CORRECTION_REASON,
        keys=keys,
        confidence=1.0,
        status=Status.ACTIVE,
        metadata={**memory.metadata, CORRECTED_AT: now.isoformat(), "reviewed_at": now.isoformat()},
    )


def memory_confirm(*, actor: Actor, memory: Memory) -> Memory:
    """The subject says a disputed fact is still true: current again, marked reviewed and as
    their own word (consolidation keeps it over older extracted values)."""
    if memory.status != Status.DISPUTED or memory.valid_to is not None:
        raise ApplicationError(
            gettext_noop("Only a memory in doubt can be confirmed."), status_code=409
        )
    now = timezone.now().isoformat()
    return memory_update(
        actor=actor,
        memory=memory,
        confidence=1.0,
        status=Status.ACTIVE,
        metadata={**memory.metadata, CORRECTED_AT: now, "reviewed_at": now},
    )


def memories_forget(
    *, actor: Actor, subject: Subject, ids: list[uuid.UUID], topic: bool = False
) -> int:
    """Delete these memories of the subject (with their versions, and out of the recall
    log); ids of anyone else's memories are ignored. One audit event; returns the count."""
    with transaction.atomic():
        mine = list(
            Memory.objects.filter(
                namespace_id=subject.namespace_id, subject=subject, pk__in=ids
            ).values_list("id", flat=True)
        )
        if not mine:
            return 0
        # A conversation turn is also the session's record of it (the context's recent
        # turns): deleting the memory deletes the turn too.
        turns = []
        for message in Memory.objects.filter(pk__in=mine, kind=Kind.EPISODIC).values_list(
            "source__message", flat=True
        ):
            with contextlib.suppress(ValueError, TypeError, AttributeError):
                turns.append(uuid.UUID(str(message)))
        if turns:  # in the ledger before the commit, as the memories are (memories_purge_batch)
            erasure_ledger.append(namespace_id=subject.namespace_id, scope="turns", turn_ids=turns)
        counts = memories_purge_batch(namespace=subject.namespace, ids=mine, via="portal")
        deleted = Message.objects.filter(session__subject=subject, pk__in=turns)
        # Nor in the session summaries made from them.
        counts["summaries"] = session_summaries_forget(turns=deleted.only("session", "position"))
        counts["turns"], _ = deleted.delete()
        single = len(mine) == 1 and not topic
        audit_record(
            actor=actor,
            action="memory.delete" if single else "memory.bulk_delete",
            namespace=subject.namespace,
            subject_id=subject.pk,
            object_type="memory",
            object_id=str(mine[0]) if single else "",
            details={**counts, "by": "topic" if topic else "one"},
        )
    return counts["memories"]


def subject_pause(*, actor: Actor, subject: Subject, paused: bool) -> Subject:
    return subject_set_paused(actor=actor, subject=subject, paused=paused)


@dataclass(frozen=True)
class KeptReceipt:
    """An erasure's receipt, and the code that fetches it again (returned once, to show)."""

    receipt: ErasureReceipt
    code: str


def erasure_request(
    *, actor: Actor, subject: Subject, locale: str = "en"
) -> KeptReceipt | ScheduledErasure:
    """Erase the subject now, with a code to fetch the receipt again later (in `locale`);
    or, when the namespace gives a grace period, schedule it (cancellable until it runs)."""
    grace = subject.namespace.erasure_grace_days
    if not grace:
        namespace = subject.namespace
        with transaction.atomic():
            receipt = subject_erase(actor=actor, subject=subject, via="portal")
            code = erasure_receipt_code_issue(
                actor=actor, namespace=namespace, receipt=receipt, locale=locale
            )
        return KeptReceipt(receipt=receipt, code=code)
    with transaction.atomic():
        scheduled, _ = ScheduledErasure.objects.get_or_create(
            namespace_id=subject.namespace_id,
            subject=subject,
            defaults={"run_at": timezone.now() + timedelta(days=grace)},
        )
        audit_record(
            actor=actor,
            action="subject.erase.schedule",
            namespace=subject.namespace,
            subject_id=subject.pk,
            object_type="subject",
            object_id=str(subject.pk),
            details={"run_at": scheduled.run_at.isoformat(), "grace_days": grace},
        )
    return scheduled


def erasure_receipt_code_issue(
    *, actor: Actor, namespace: Namespace, receipt: ErasureReceipt, locale: str = "en"
) -> str:
    """A random code that fetches `receipt` again (the receipt pages), returned once and
    stored only as its hash. Whoever holds it reads a receipt that holds nothing about the
    person: counts, times and hashes. Audited, in the caller's transaction."""
    code = secret_issue(namespace.pk)
    with transaction.atomic():
        row = ErasureReceiptCode.objects.create(
            namespace=namespace,
            code_hash=secret_hash(code),
            audit_event_id=receipt.audit_event_id,
            locale=locale_of(value=locale),
        )
        audit_record(
            actor=actor,
            action="subject.erase.receipt_code",
            namespace=namespace,
            subject_id=uuid.UUID(receipt.subject_id),
            object_type="erasure_receipt_code",
            object_id=str(row.pk),
            details={"receipt_event": receipt.audit_event_id},
        )
    return code


def receipt_refusal_record(*, request: Any = None) -> None:
    """A receipt address whose code fetches nothing: audited as denied (the code is not
    recorded), so guessing leaves a trace."""
    audit_denied(actor=Actor.anonymous(request), action="portal.receipt", reason="unknown_code")


def erasure_cancel(*, actor: Actor, subject: Subject) -> bool:
    with transaction.atomic():
        deleted, _ = ScheduledErasure.objects.filter(subject=subject).delete()
        if deleted:
            audit_record(
                actor=actor,
                action="subject.erase.cancel",
                namespace=subject.namespace,
                subject_id=subject.pk,
                object_type="subject",
                object_id=str(subject.pk),
            )
    return bool(deleted)


def erasures_run_due(*, now: datetime | None = None) -> int:
    """Run the scheduled erasures whose time has come, each in its own transaction and
    taken by one worker only (rows locked, others skipped): a failure is logged (ids only)
    and the others still run; it is tried again next time. Returns how many ran."""
    now = now or timezone.now()
    done = 0
    due = list(ScheduledErasure.objects.filter(run_at__lte=now).values_list("pk", flat=True))
    for pk in due:
        try:
            with transaction.atomic():
                scheduled = (
                    ScheduledErasure.objects.select_for_update(skip_locked=True)
                    .select_related("subject__namespace")
                    .filter(pk=pk, run_at__lte=now)
                    .first()
                )
                if scheduled is None:
                    continue  # another worker has it, or it was cancelled meanwhile
                subject_erase(
                    actor=Actor.system("portal erasure, as scheduled"),
                    subject=scheduled.subject,
                    via="scheduled",
                )
        except Exception:
            logger.exception("scheduled erasure %s failed; it stays scheduled", pk)
            continue
        done += 1
    return done
