"""The context API: a thin view over `services.context_assemble`."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts.models import Permission
from apps.context.api.serializers import ContextRequestSerializer, ContextResponseSerializer
from apps.context.services import ContextRequest, context_assemble
from memoryhub.api.base import NamespacedAPIView
from memoryhub.api.serializers import error_responses


def context_request(data: dict) -> ContextRequest:
    return ContextRequest(
        query=data["query"],
        subject=data["subject"],
        session=data["session"],
        model=data["model"],
        max_context_tokens=data["max_context_tokens"],
        reserve_tokens=data["reserve_tokens"],
        strategy=data["strategy"],
        system_prompt=data["system_prompt"],
        recall_k=data.get("recall", {}).get("k", 20),
        window=data["window"],
        buffer_tokens=data["buffer_tokens"],
        placement=data["placement"],
        sections=dict(data.get("sections", {})),
    )


class ContextView(NamespacedAPIView):
    required_permissions = {"POST": Permission.CONTEXT}

    @extend_schema(
        request=ContextRequestSerializer,
        responses={200: ContextResponseSerializer, **error_responses(400, 401, 403, 404, 422, 429)},
    )
    def post(self, request: Request, namespace: str) -> Response:
        serializer = ContextRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = context_assemble(
            actor=self.actor,
            namespace=self.namespace,
            request=context_request(serializer.validated_data),
        )
        return Response(ContextResponseSerializer(result).data)
