from django.apps import AppConfig


class PrivacyConfig(AppConfig):
    name = "apps.privacy"
    label = "privacy"

    def ready(self) -> None:
        from apps.privacy import checks  # noqa: F401  (registers the deployment check)
