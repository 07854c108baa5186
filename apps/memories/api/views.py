"""The memories API: thin views that parse, scope, call a service or selector, and render."""

from __future__ import annotations

import json
from pathlib import Path

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.api.authentication import ApiKeyAuthentication, ApiKeyRateThrottle
from apps.accounts.models import Permission
from apps.audit.actors import Actor
from apps.memories import ingestion, selectors, services
from apps.memories.api.serializers import (
    DocumentIngestResultSerializer,
    DocumentIngestSerializer,
    ErasureReceiptSerializer,
    JobSerializer,
    MemoryCreateSerializer,
    MemoryListQuerySerializer,
    MemorySerializer,
    MemoryUpdateSerializer,
    MemoryVersionListSerializer,
    MemoryVersionSerializer,
    MessagesIngestSerializer,
    RecallRequestSerializer,
    RecallResponseSerializer,
)
from apps.memories.encryption import KeyCache
from apps.memories.models import JobStatus
from apps.memories.recall import RecallFilters, recall_memories
from memoryhub.api.base import NamespacedAPIView, deny_permission
from memoryhub.api.pagination import NewestFirstCursorPagination
from memoryhub.api.serializers import error_responses
from memoryhub.exceptions import ApplicationError

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
        data = MemorySerializer(page, many=True, context={"keys": KeyCache()}).data
        return paginator.get_paginated_response(data)

    @extend_schema(
        request=MemoryCreateSerializer,
        responses={201: MemorySerializer, **error_responses(400, 401, 403, 404, 413, 429)},
    )
    def post(self, request: Request, namespace: str) -> Response:
        serializer = MemoryCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        keys = KeyCache()
        memory = services.memory_create(
            actor=self.actor,
            namespace=self.namespace,
            subject_external_id=data.pop("subject"),
            keys=keys,
            **data,
        )
        memory = selectors.memory_get(namespace=self.namespace, memory_id=memory.id)
        return Response(
            MemorySerializer(memory, context={"keys": keys}).data, status=status.HTTP_201_CREATED
        )


class MemoryDetailView(NamespacedAPIView):
    required_permissions = {"GET": READ, "PATCH": WRITE, "DELETE": WRITE}

    @extend_schema(responses={200: MemorySerializer, **error_responses(401, 403, 404, 429)})
    def get(self, request: Request, namespace: str, memory_id: str) -> Response:
        memory = selectors.memory_get(namespace=self.namespace, memory_id=memory_id)
        return Response(MemorySerializer(memory, context={"keys": KeyCache()}).data)

    @extend_schema(
        request=MemoryUpdateSerializer,
        responses={200: MemorySerializer, **error_responses(400, 401, 403, 404, 413, 429)},
    )
    def patch(self, request: Request, namespace: str, memory_id: str) -> Response:
        memory = selectors.memory_get(namespace=self.namespace, memory_id=memory_id)
        serializer = MemoryUpdateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        keys = KeyCache()
        services.memory_update(
            actor=self.actor, memory=memory, keys=keys, **serializer.validated_data
        )
        memory = selectors.memory_get(namespace=self.namespace, memory_id=memory_id)
        return Response(MemorySerializer(memory, context={"keys": keys}).data)

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
        versions = selectors.memory_versions(memory=memory)
        context = {"keys": KeyCache(), "memory": memory}
        return Response(
            {"results": MemoryVersionSerializer(versions, many=True, context=context).data}
        )


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
        receipt = services.subject_erase(actor=self.actor, subject=subject)
        return Response(receipt.as_dict())


@require_GET
def subject_export_schema(request: HttpRequest) -> JsonResponse:
    return JsonResponse(EXPORT_SCHEMA, json_dumps_params={"indent": 2})


class RecallView(NamespacedAPIView):
    required_permissions = {"POST": Permission.CONTEXT}

    @extend_schema(
        request=RecallRequestSerializer,
        responses={200: RecallResponseSerializer, **error_responses(400, 401, 403, 404, 429)},
        description="Hybrid recall (vector + keyword + recency + importance) over the subject's "
        "memories and, unless include_shared is false, the namespace's shared ones.",
    )
    def post(self, request: Request, namespace: str) -> Response:
        serializer = RecallRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        filters = data.get("filters") or {}
        outcome = recall_memories(
            actor=self.actor,
            namespace=self.namespace,
            subject_external_id=data["subject"],
            query=data["query"],
            k=data["k"],
            filters=RecallFilters(
                kinds=filters.get("kind", []),
                tags=filters.get("tags", []),
                since=filters.get("since"),
                until=filters.get("until"),
                metadata=filters.get("metadata", {}),
            ),
            include_shared=data["include_shared"],
            mmr_lambda=data["mmr"],
        )
        keys = KeyCache()
        results = [
            {
                "memory": MemorySerializer(hit.memory, context={"keys": keys}).data,
                "score": hit.score,
                "components": hit.components,
            }
            for hit in outcome.hits
        ]
        return Response(
            {"results": results, "recall_id": outcome.recall_id, "timings_ms": outcome.timings_ms}
        )


IDEMPOTENCY_PARAMETER = OpenApiParameter(
    "Idempotency-Key",
    str,
    OpenApiParameter.HEADER,
    description="A retry with the same key and body stores nothing twice.",
)


def idempotency_key(request: Request) -> str:
    key = request.headers.get("Idempotency-Key", "").strip()
    if len(key) > 255:
        raise ApplicationError(
            "The Idempotency-Key is longer than 255 characters.",
            details={"Idempotency-Key": ["too long"]},
        )
    return key


class MessagesView(NamespacedAPIView):
    required_permissions = {"POST": WRITE}

    @extend_schema(
        request=MessagesIngestSerializer,
        parameters=[IDEMPOTENCY_PARAMETER],
        responses={
            201: JobSerializer,
            202: JobSerializer,
            **error_responses(400, 401, 403, 404, 409, 413, 422, 429),
        },
    )
    def post(self, request: Request, namespace: str) -> Response:
        messages = request.data.get("messages") if isinstance(request.data, dict) else None
        if isinstance(messages, list):
            ingestion.check_message_count(len(messages))
        serializer = MessagesIngestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        key = idempotency_key(request)
        job, replayed = ingestion.messages_ingest(
            actor=self.actor,
            namespace=self.namespace,
            subject_external_id=data["subject"],
            session_external_id=data["session"],
            messages=[
                ingestion.IncomingMessage(
                    role=m["role"],
                    content=m["content"],
                    name=m.get("name") or "",
                    created_at=m.get("created_at"),
                )
                for m in data["messages"]
            ],
            extract=data["extract"],
            idempotency_key=key,
            request_body=request.data,
        )
        done = job.status in (JobStatus.SUCCEEDED, JobStatus.FAILED)
        response = Response(
            JobSerializer(job).data,
            status=status.HTTP_201_CREATED if done else status.HTTP_202_ACCEPTED,
        )
        if replayed:
            response["Idempotent-Replayed"] = "true"
        return response


class JobDetailView(APIView):
    """A job of any namespace the key can reach (any other id is a 404), for a key that may
    read or write memories (403 otherwise, audited)."""

    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [IsAuthenticated]
    throttle_classes = [ApiKeyRateThrottle]

    @extend_schema(responses={200: JobSerializer, **error_responses(401, 403, 404, 429)})
    def get(self, request: Request, job_id: str) -> Response:
        job = selectors.job_for_api_key(api_key=request.auth, job_id=job_id)
        if not (request.auth.has_permission(READ) or request.auth.has_permission(WRITE)):
            actor = Actor.for_api_key(request.auth, request)
            deny_permission(actor, "api.JobDetailView.get", job.namespace, READ)
        return Response(JobSerializer(job).data)


class DocumentsView(NamespacedAPIView):
    required_permissions = {"POST": WRITE}

    @extend_schema(
        request=DocumentIngestSerializer,
        parameters=[IDEMPOTENCY_PARAMETER],
        responses={
            201: DocumentIngestResultSerializer,
            **error_responses(400, 401, 403, 404, 409, 413, 422, 429),
        },
    )
    def post(self, request: Request, namespace: str) -> Response:
        serializer = DocumentIngestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        outcome = ingestion.document_ingest(
            actor=self.actor,
            namespace=self.namespace,
            text=data["text"],
            subject_external_id=data["subject"],
            title=data["title"],
            metadata=data["metadata"],
            tags=data["tags"],
            chunk_tokens=data.get("chunk_tokens"),
            overlap_tokens=data.get("overlap_tokens"),
            idempotency_key=idempotency_key(request),
            request_body=request.data,
        )
        body = {
            "document": outcome.document_id,
            "chunks": len(outcome.memory_ids),
            "memories": outcome.memory_ids,
            "tokens": outcome.tokens,
        }
        response = Response(
            DocumentIngestResultSerializer(body).data, status=status.HTTP_201_CREATED
        )
        if outcome.replayed:
            response["Idempotent-Replayed"] = "true"
        return response
