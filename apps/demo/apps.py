from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The first-run demo: a namespace `demo` loaded through the real pipeline."""

    name = "apps.demo"
    label = "demo"
    default_auto_field = "django.db.models.BigAutoField"
