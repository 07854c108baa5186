from django.apps import AppConfig


class PrivacyConfig(AppConfig):
    name = "apps.privacy"
    label = "privacy"

    def ready(self) -> None:
        from apps.privacy import checks  # noqa: F401  (registers the deployment check)
        from apps.privacy.views import COOKIE
        from memoryhub.replica import client_cookie_register

        # A portal session's writes (a correction) are read from the primary by its next page.
        client_cookie_register(COOKIE)
