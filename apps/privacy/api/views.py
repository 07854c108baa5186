from __future__ import annotations

from django.conf import settings
from django.utils.translation import gettext_noop
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts.api.base import NamespacedAPIView
from apps.accounts.models import Permission
from apps.memories.services import subject_get_or_create
from apps.privacy.api.serializers import PortalSessionRequestSerializer, PortalSessionSerializer
from apps.privacy.services import portal_link_create
from memoryhub.api.serializers import error_responses
from memoryhub.exceptions import ApplicationError


class PortalSessionCreateView(NamespacedAPIView):
    """A link to the privacy portal for one subject: send the person there. It works once,
    for MEMORYHUB_PORTAL_LINK_MINUTES (15 by default). Needs `subjects:portal` (or
    `subjects:admin`)."""

    required_permissions = {"POST": Permission.SUBJECTS_PORTAL}

    @extend_schema(
        request=PortalSessionRequestSerializer,
        responses={201: PortalSessionSerializer, **error_responses(400, 401, 403, 404, 429)},
    )
    def post(self, request: Request, namespace: str, external_id: str) -> Response:
        body = PortalSessionRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        if len(external_id) > 255:
            raise ApplicationError(
                gettext_noop("A subject's id has at most 255 characters."),
                details={"external_id": ["too long"]},
            )
        # A person with nothing remembered yet may still want to look, or pause first.
        subject = subject_get_or_create(
            actor=self.actor, namespace=self.namespace, external_id=external_id
        )
        issued = portal_link_create(
            actor=self.actor,
            namespace=self.namespace,
            subject=subject,
            base_url=settings.MEMORYHUB_PUBLIC_URL or request.build_absolute_uri("/"),
            **body.validated_data,
        )
        return Response(
            PortalSessionSerializer({"url": issued.url, "expires_at": issued.expires_at}).data,
            status=status.HTTP_201_CREATED,
        )
