"""The privacy portal's state: single-use links, the sessions they open, and erasures a
person asked for that wait out the namespace's grace period. Tokens are stored only as
SHA-256 hashes; everything goes with the subject when it is erased.

A foreign key to another of the namespace's tables says `db_constraint=False`: the
database's key is (column, namespace_id), which carries the distribution column and which a
ForeignKey cannot declare; the migrations make it (memoryhub/distribution.py).
"""

from __future__ import annotations

import uuid

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class Flow(models.TextChoices):
    """The task a portal link opens."""

    OVERVIEW = "overview", _("Overview")
    MEMORIES = "memories", _("What we remember")
    EXPORT = "export", _("Export")
    ERASE = "erase", _("Erase everything")
    PAUSE = "pause", _("Pause memory")


class PortalLink(models.Model):
    """A link an app (or an admin) asked for: works once, until `expires_at`."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    subject = models.ForeignKey(
        "memories.Subject",
        db_constraint=False,
        on_delete=models.CASCADE,
        related_name="portal_links",
    )
    token_hash = models.CharField(max_length=64)  # unique in its namespace (the key below)
    flow = models.CharField(max_length=16, choices=Flow.choices, default=Flow.OVERVIEW)
    locale = models.CharField(max_length=16, default="en")
    return_url = models.CharField(max_length=2000, blank=True)
    created_by = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["token_hash", "namespace"], name="one_link_per_token")
        ]

    def __str__(self) -> str:
        return f"portal link {self.id}"


class PortalSession(models.Model):
    """The session a link opened: bound to its one subject; ends when idle too long."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    subject = models.ForeignKey(
        "memories.Subject",
        db_constraint=False,
        on_delete=models.CASCADE,
        related_name="portal_sessions",
    )
    # Indexed by the unique key below.
    link = models.ForeignKey(
        PortalLink, db_constraint=False, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    key_hash = models.CharField(max_length=64)  # unique in its namespace (the key below)
    locale = models.CharField(max_length=16, default="en")
    return_url = models.CharField(max_length=2000, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # A link opens one session.
        constraints = [
            models.UniqueConstraint(fields=["link", "namespace"], name="one_session_per_link"),
            models.UniqueConstraint(fields=["key_hash", "namespace"], name="one_session_per_key"),
        ]

    def __str__(self) -> str:
        return f"portal session {self.id}"


class ScheduledErasure(models.Model):
    """An erasure the subject asked for, waiting for `run_at` (cancellable until then)."""

    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    # Indexed by the unique key below.
    subject = models.ForeignKey(
        "memories.Subject",
        db_constraint=False,
        on_delete=models.CASCADE,
        related_name="+",
        db_index=False,
    )
    requested_at = models.DateTimeField(default=timezone.now)
    run_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["subject", "namespace"], name="one_scheduled_erasure_per_subject"
            )
        ]

    def __str__(self) -> str:
        return f"erasure of {self.subject_id} at {self.run_at:%Y-%m-%d %H:%M}"


class ErasureReceiptCode(models.Model):
    """The way back to an erasure's receipt: a random code shown once, on the receipt page,
    to the person who erased everything; stored only as its SHA-256 hash, beside the id of
    the erasure's audit event (which holds the receipt). Nothing about the person is here:
    they are erased. It goes with the namespace."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(
        "namespaces.Namespace", on_delete=models.CASCADE, related_name="+"
    )
    code_hash = models.CharField(max_length=64)  # unique in its namespace (the key below)
    audit_event_id = models.BigIntegerField()
    locale = models.CharField(max_length=16, default="en")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["code_hash", "namespace"], name="one_receipt_per_code")
        ]

    def __str__(self) -> str:
        return f"erasure receipt code {self.id}"
