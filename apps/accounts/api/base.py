"""The base of every namespaced API view: key auth, namespace scope, permission, throttle."""

from __future__ import annotations

from typing import Any, ClassVar, NoReturn

from django.http.response import HttpResponseBase
from rest_framework import exceptions
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.views import APIView

from apps.accounts.api.authentication import (
    ApiKeyAuthentication,
    ApiKeyRateThrottle,
    request_api_key,
)
from apps.accounts.models import ApiKey
from apps.accounts.selectors import namespace_for_api_key
from apps.audit.actors import Actor
from apps.audit.services import audit_denied
from apps.namespaces.models import Namespace
from memoryhub.exceptions import NotFound
from memoryhub.row_security import NamespaceWall, namespace_wall

# The methods whose body a view may read.
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


def deny_permission(
    actor: Actor, action: str, namespace: Namespace, needed: str | None
) -> NoReturn:
    """A refused permission: audited (in the namespace, naming the permission), then a 403."""
    audit_denied(
        actor=actor, action=action, namespace=namespace, reason=f"missing_permission:{needed}"
    )
    raise exceptions.PermissionDenied(f"This API key lacks the '{needed}' permission.")


class NamespacedAPIView(APIView):
    """Resolves `self.namespace` from the URL within the key's scope (404 outside it), then
    requires `required_permissions[method]` of the key (403, audited, when missing)."""

    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [IsAuthenticated]
    throttle_classes = [ApiKeyRateThrottle]
    required_permissions: ClassVar[dict[str, str]] = {}

    namespace: Namespace
    api_key: ApiKey
    actor: Actor
    wall: NamespaceWall

    def dispatch(self, request: Any, *args: Any, **kwargs: Any) -> HttpResponseBase:
        """One transaction a request, walled to its namespace once that is resolved
        (memoryhub/row_security.py): the database's own check behind every selector."""
        with namespace_wall() as self.wall:
            return super().dispatch(request, *args, **kwargs)

    def check_permissions(self, request: Request) -> None:
        super().check_permissions(request)  # authenticated at all
        # Throttle before the scope and permission checks, so refused requests count too.
        super().check_throttles(request)
        self.api_key = request_api_key(request)
        self.actor = Actor.for_api_key(self.api_key, request)
        slug = self.kwargs.get("namespace", "")
        try:
            self.namespace = namespace_for_api_key(self.api_key, slug)
        except NotFound:
            audit_denied(
                actor=self.actor, action=self.audit_action(request), reason="namespace_out_of_scope"
            )
            raise
        needed = self.permission_needed(request)
        if needed is None or not self.api_key.has_permission(needed):
            deny_permission(self.actor, self.audit_action(request), self.namespace, needed)
        self.wall.enter(self.namespace.pk)

    def permission_needed(self, request: Request) -> str | None:
        """The permission this request needs (None: no method of the view allows it)."""
        return self.required_permissions.get(request.method or "", None)

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        """Once the caller may act, a body is parsed whether or not the view reads it: a
        body that is not JSON within the guard's bounds is a 400 everywhere, never taken
        for an empty one by a view that ignores its body."""
        super().initial(request, *args, **kwargs)
        if request.method in BODY_METHODS:
            request.data  # noqa: B018 (parsing is the point: it raises ParseError)

    def check_throttles(self, request: Request) -> None:
        """Done in check_permissions already (DRF would throttle only after permissions)."""

    def audit_action(self, request: Request) -> str:
        return f"api.{type(self).__name__}.{(request.method or '').lower()}"

    def get_serializer_context(self) -> dict[str, Any]:
        return {"request": self.request, "view": self}
