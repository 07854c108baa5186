from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _


class PiiPolicy(models.TextChoices):
    ALLOW = "allow", _("Allow")
    TAG = "tag", _("Store and tag")
    REDACT = "redact", _("Redact")
    REJECT = "reject", _("Reject")


class Extractor(models.TextChoices):
    """What turns a namespace's conversations into facts (blank: the server's
    MEMORYHUB_EXTRACTOR)."""

    OFFLINE = "offline", _("Rules")
    LLM = "llm", _("LLM")
    BOTH = "both", _("Rules, then the LLM on unresolved changes")


class Namespace(models.Model):
    """A team's memory space: the unit of access control, retention, PII policy and key scope."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    pii_policy = models.CharField(max_length=16, choices=PiiPolicy.choices, default=PiiPolicy.ALLOW)
    retention_days = models.PositiveIntegerField(
        null=True, blank=True, help_text="Archive memories older than this many days (none: keep)."
    )
    max_memories_per_subject = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1)]
    )
    recency_half_life_days = models.FloatField(
        default=180.0,
        validators=[MinValueValidator(0.0)],
        help_text="Recall favours recent memories: recency weight halves every this many days.",
    )
    keep_turns_when_paused = models.BooleanField(
        default=False,
        help_text="Keep a paused subject's conversation turns for the session buffer (they "
        "never become memories while paused).",
    )
    summarize_after_days = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Summarize episodic memories older than this many days into one (none: never).",
    )
    review_below = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="A fact less certain than this waits for a person's review (none: the "
        "server's MEMORYHUB_REVIEW_BELOW).",
    )
    # The knobs of recall that differ from the defaults (apps/recall/config.py); set by
    # promoting an evaluated variant (apps/evaluation).
    recall_config = models.JSONField(default=dict, blank=True)
    # The privacy portal (apps/privacy): where its links may send people back to, which sites
    # may show it in a frame, and how long a person's erasure waits (cancellable) before it runs.
    portal_return_origins = ArrayField(
        models.CharField(max_length=200),
        default=list,
        blank=True,
        help_text="Origins a portal link's return_url may point to (https://app.example.com).",
    )
    portal_frame_origins = ArrayField(
        models.CharField(max_length=200),
        default=list,
        blank=True,
        help_text="Origins allowed to show the portal in a frame (none: never framed).",
    )
    erasure_grace_days = models.PositiveIntegerField(
        default=0,
        validators=[MaxValueValidator(30)],
        help_text="Days an erasure asked for in the portal waits, cancellable (0: at once).",
    )
    extractor = models.CharField(
        max_length=16,
        choices=Extractor.choices,
        blank=True,
        help_text="What turns conversations into facts (none: the server's default).",
    )
    # How many webhook endpoints the namespace has (apps/webhooks keeps it, in the transaction
    # that adds or removes one): every audited write reads it from the namespace it already
    # holds, so a namespace without endpoints pays no query for its events.
    webhook_endpoints = models.PositiveIntegerField(default=0, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    @property
    def review_threshold(self) -> float:
        """The confidence below which a fact goes to the review queue."""
        if self.review_below is not None:
            return self.review_below
        return float(settings.MEMORYHUB_REVIEW_BELOW)


class MembershipRole(models.TextChoices):
    OWNER = "owner", _("Owner")
    EDITOR = "editor", _("Editor")
    VIEWER = "viewer", _("Viewer")


ROLE_RANK = {MembershipRole.VIEWER: 1, MembershipRole.EDITOR: 2, MembershipRole.OWNER: 3}


class Membership(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=MembershipRole.choices)
    # Granted by single sign-on from the person's groups at the provider: each sign-in adds,
    # changes or removes it to match them. A role granted by hand is never touched by SSO.
    granted_by_sso = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "namespace"], name="one_membership_per_user"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}@{self.namespace_id}:{self.role}"


class EveryNamespaceRole(models.Model):
    """A role single sign-on grants in every namespace, those created later included (the
    role map's "*"): a namespace's creation gives each such user an SSO membership."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="every_namespace_role"
    )
    role = models.CharField(max_length=16, choices=MembershipRole.choices)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.user_id}@*:{self.role}"
