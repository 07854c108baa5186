from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "apps.webhooks"
    label = "webhooks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Every audited change is a candidate event: the outbox rows are written in its
        # transaction (apps/audit/listeners.py).
        from apps.audit import listeners
        from apps.webhooks.events import on_audit_event

        listeners.register(on_audit_event)
