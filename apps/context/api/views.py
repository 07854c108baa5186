"""The context API: a thin view over `services.context_assemble`."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts.api.base import NamespacedAPIView
from apps.accounts.models import Permission
from apps.context.api.serializers import ContextRequestSerializer, ContextResponseSerializer
from apps.context.services import ContextRequest, context_assemble
from apps.recall.time_travel import as_of_parse
from memoryhub.api.serializers import error_responses


class ContextView(NamespacedAPIView):
    required_permissions = {"POST": Permission.CONTEXT}

    @extend_schema(
        request=ContextRequestSerializer,
        responses={200: ContextResponseSerializer, **error_responses(400, 401, 403, 404, 422, 429)},
    )
    def post(self, request: Request, namespace: str) -> Response:
        serializer = ContextRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        as_of = as_of_parse(data["as_of"], now=timezone.now())
        result = context_assemble(
            actor=self.actor,
            namespace=self.namespace,
            spec=ContextRequest.from_data(data=data, as_of=as_of),
        )
        return Response(ContextResponseSerializer(result).data)
