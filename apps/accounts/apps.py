from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"

    def ready(self) -> None:
        from axes.signals import user_locked_out

        from apps.accounts.sso_roles import parse_role_map

        try:  # a bad role map stops start-up, naming the variable
            parse_role_map(settings.MEMORYHUB_OIDC_ROLE_MAP)
        except ValueError as error:
            raise ImproperlyConfigured(f"MEMORYHUB_OIDC_ROLE_MAP: {error}.") from None

        from apps.accounts.api import schema  # noqa: F401  (registers the OpenAPI extension)

        # django-axes refuses the login; the refusal is audited like every other one.
        user_locked_out.connect(_audit_lockout, dispatch_uid="memoryhub-audit-lockout")


def _audit_lockout(sender: Any, request: Any, username: str | None = None, **kwargs: Any) -> None:
    from apps.accounts.services import login_refused_locked_out

    login_refused_locked_out(request=request, username=username or "")
