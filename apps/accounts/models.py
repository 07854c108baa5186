from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class Permission(models.TextChoices):
    MEMORIES_READ = "memories:read", _("Read memories")
    MEMORIES_WRITE = "memories:write", _("Write memories")
    CONTEXT = "context", _("Recall and assemble context")
    SUBJECTS_ADMIN = "subjects:admin", _("Export and erase subjects, read the audit log")
    SUBJECTS_PORTAL = "subjects:portal", _("Open the privacy portal for a subject")
    WEBHOOKS_ADMIN = "webhooks:admin", _("Manage the namespace's webhook endpoints")


# A permission another one includes: administering subjects includes sending them to the portal.
IMPLIED_BY: dict[str, str] = {Permission.SUBJECTS_PORTAL: Permission.SUBJECTS_ADMIN}


class ApiKey(models.Model):
    """An app's credential. Only a prefix (for lookup and display) and a hash are stored.

    The raw key `mh_<prefix>_<secret>` is shown once at creation. Secrets are 256 random
    bits, so a fast hash (SHA-256) is safe here: no dictionary can guess them.
    """

    prefix = models.CharField(max_length=16, unique=True)
    secret_hash = models.CharField(max_length=64)
    name = models.CharField(max_length=200)
    namespaces = models.ManyToManyField("namespaces.Namespace", related_name="api_keys")
    permissions = ArrayField(models.CharField(max_length=32, choices=Permission.choices))
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # The subject the MCP tools act on when a call names none (an agent serving one person).
    default_subject = models.CharField(max_length=255, blank=True, default="")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix})"

    # DRF treats the authenticated principal like a user.
    is_authenticated = True

    @property
    def is_usable(self) -> bool:
        now = timezone.now()
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)

    def has_permission(self, permission: str) -> bool:
        return permission in self.permissions or IMPLIED_BY.get(permission) in self.permissions


class SsoIdentity(models.Model):
    """A dashboard user's identity at an OpenID Connect provider: the issuer and its `sub`,
    never the e-mail address (which a provider may let people change)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identities"
    )
    issuer = models.CharField(max_length=500)
    subject = models.CharField(max_length=255)
    created_at = models.DateTimeField(auto_now_add=True)
    last_sign_in_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="one_user_per_sso_identity"),
        ]

    def __str__(self) -> str:
        return f"{self.issuer} {self.subject}"
