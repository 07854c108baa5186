"""The memories API: thin views that parse, scope, call a service or selector, and render."""

from __future__ import annotations

import json
from pathlib import Path

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts.api.authentication import work_take
from apps.accounts.api.base import NamespacedAPIView
from apps.accounts.models import Permission
from apps.memories import selectors, services
from apps.memories.api.serializers import (
    ErasureReceiptSerializer,
    MemoryCreateSerializer,
    MemoryListQuerySerializer,
    MemorySerializer,
    MemoryUpdateSerializer,
    MemoryVersionListSerializer,
    MemoryVersionSerializer,
    SubjectSerializer,
)
from apps.memories.row_encryption import KeyCache
from memoryhub.api.pagination import NewestFirstCursorPagination
from memoryhub.api.serializers import error_responses

READ, WRITE, ADMIN = Permission.MEMORIES_READ, Permission.MEMORIES_WRITE, Permission.SUBJECTS_ADMIN
EXPORT_SCHEMA = json.loads(
    (Path(__file__).parent.parent / "schemas" / "subject-export-v1.json").read_text()
)


class MemoryListView(NamespacedAPIView):
    required_permissions = {"GET": READ, "POST": WRITE}
    # Read by drf-spectacular, which documents the list as the paginated page it is.
    pagination_class = NewestFirstCursorPagination

    @extend_schema(
        parameters=[MemoryListQuerySerializer],
        responses={200: MemorySerializer(many=True), **error_responses(400, 401, 403, 404, 429)},
    )
    def get(self, request: Request, namespace: str) -> Response:
        query = MemoryListQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        filters = {
            name: query.validated_data.get(name)
            for name in ("kind", "tag", "status", "since", "until")
        }
        memories = selectors.memory_list(
            namespace=self.namespace,
            subject_external_id=query.validated_data.get("subject"),
            **filters,
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(memories, request, view=self)
        assert page is not None  # None only without a page size; this paginator has one
        data = MemorySerializer(selectors.memories_open(page), many=True).data
        return paginator.get_paginated_response(data)

    @extend_schema(
        request=MemoryCreateSerializer,
        responses={201: MemorySerializer, **error_responses(400, 401, 403, 404, 413, 429)},
    )
    def post(self, request: Request, namespace: str) -> Response:
        serializer = MemoryCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        work_take(request, 1)
        data = dict(serializer.validated_data)
        keys = KeyCache()
        memory = services.memory_create(
            actor=self.actor,
            namespace=self.namespace,
            item=services.NewMemory(subject_external_id=data.pop("subject"), **data),
            keys=keys,
        )
        memory = selectors.memory_get(namespace=self.namespace, memory_id=memory.id)
        (opened,) = selectors.memories_open([memory], keys=keys)
        return Response(MemorySerializer(opened).data, status=status.HTTP_201_CREATED)


class MemoryDetailView(NamespacedAPIView):
    required_permissions = {"GET": READ, "PATCH": WRITE, "DELETE": WRITE}

    @extend_schema(responses={200: MemorySerializer, **error_responses(401, 403, 404, 429)})
    def get(self, request: Request, namespace: str, memory_id: str) -> Response:
        memory = selectors.memory_get(namespace=self.namespace, memory_id=memory_id)
        (opened,) = selectors.memories_open([memory])
        return Response(MemorySerializer(opened).data)

    @extend_schema(
        request=MemoryUpdateSerializer,
        responses={200: MemorySerializer, **error_responses(400, 401, 403, 404, 413, 429)},
    )
    def patch(self, request: Request, namespace: str, memory_id: str) -> Response:
        memory = selectors.memory_get(namespace=self.namespace, memory_id=memory_id)
        serializer = MemoryUpdateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        if "content" in serializer.validated_data:
            work_take(request, 1)  # a new content is embedded again
        keys = KeyCache()
        services.memory_update(
            actor=self.actor, memory=memory, keys=keys, **serializer.validated_data
        )
        memory = selectors.memory_get(namespace=self.namespace, memory_id=memory_id)
        (opened,) = selectors.memories_open([memory], keys=keys)
        return Response(MemorySerializer(opened).data)

    @extend_schema(responses={204: None, **error_responses(401, 403, 404, 429)})
    def delete(self, request: Request, namespace: str, memory_id: str) -> Response:
        memory = selectors.memory_get(namespace=self.namespace, memory_id=memory_id)
        services.memory_delete(actor=self.actor, memory=memory)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MemoryVersionsView(NamespacedAPIView):
    required_permissions = {"GET": READ}

    @extend_schema(
        responses={200: MemoryVersionListSerializer, **error_responses(401, 403, 404, 429)}
    )
    def get(self, request: Request, namespace: str, memory_id: str) -> Response:
        memory = selectors.memory_get(namespace=self.namespace, memory_id=memory_id)
        versions = selectors.memory_versions_open(memory=memory)
        return Response({"results": MemoryVersionSerializer(versions, many=True).data})


class SubjectView(NamespacedAPIView):
    """A subject's state: whether they paused memory (then writes about them are refused
    with 409 `subject_paused`, and their turns become no memories), and how many memories
    are kept about them."""

    required_permissions = {"GET": READ}

    @extend_schema(responses={200: SubjectSerializer, **error_responses(401, 403, 404, 429)})
    def get(self, request: Request, namespace: str, external_id: str) -> Response:
        subject = selectors.subject_get(namespace=self.namespace, external_id=external_id)
        return Response(SubjectSerializer(selectors.subject_state(subject=subject)).data)


class SubjectExportView(NamespacedAPIView):
    required_permissions = {"GET": ADMIN}

    @extend_schema(
        responses={200: OpenApiTypes.OBJECT, **error_responses(401, 403, 404, 429)},
        description="Every memory and version of the subject "
        "(JSON Schema: /api/v1/schemas/subject-export-v1.json).",
    )
    def get(self, request: Request, namespace: str, external_id: str) -> Response:
        subject = selectors.subject_get(namespace=self.namespace, external_id=external_id)
        return Response(services.subject_export(actor=self.actor, subject=subject))


class SubjectEraseView(NamespacedAPIView):
    required_permissions = {"POST": ADMIN}

    @extend_schema(
        request=None,
        responses={200: ErasureReceiptSerializer, **error_responses(401, 403, 404, 429)},
    )
    def post(self, request: Request, namespace: str, external_id: str) -> Response:
        subject = selectors.subject_get(namespace=self.namespace, external_id=external_id)
        receipt = services.subject_erase(actor=self.actor, subject=subject, via="api")
        return Response(receipt.as_dict())


@require_GET
def subject_export_schema(request: HttpRequest) -> JsonResponse:
    return JsonResponse(EXPORT_SCHEMA, json_dumps_params={"indent": 2})
