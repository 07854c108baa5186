from django.apps import AppConfig


class AuditLogConfig(AppConfig):
    """Reading the audit log: its API (and dashboard viewer), above the API keys and logins
    it stands on. The log itself (events, chain, verifier) is `apps.audit`, the lowest app."""

    name = "apps.audit_log"
    label = "audit_log"
