"""The write pipeline's API: conversation turns, documents, and the jobs they start."""

from __future__ import annotations

from django.utils.translation import gettext_noop
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.api.authentication import (
    ApiKeyAuthentication,
    ApiKeyRateThrottle,
    request_api_key,
    work_take,
)
from apps.accounts.api.base import NamespacedAPIView, deny_permission
from apps.accounts.models import Permission
from apps.audit.actors import Actor
from apps.pipeline import ingestion, selectors
from apps.pipeline.api.serializers import (
    DocumentIngestResultSerializer,
    DocumentIngestSerializer,
    JobSerializer,
    MessagesIngestSerializer,
)
from apps.pipeline.models import JobStatus
from memoryhub.api.serializers import error_responses
from memoryhub.exceptions import ApplicationError

READ, WRITE = Permission.MEMORIES_READ, Permission.MEMORIES_WRITE
DONE = (JobStatus.SUCCEEDED, JobStatus.FAILED)


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
            gettext_noop("The Idempotency-Key is longer than 255 characters."),
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
            take_work=lambda turns: work_take(request, turns),
        )
        done = job.status in DONE
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
        api_key = request_api_key(request)
        job = selectors.job_for_api_key(api_key=api_key, job_id=job_id)
        if not (api_key.has_permission(READ) or api_key.has_permission(WRITE)):
            actor = Actor.for_api_key(api_key, request)
            deny_permission(actor, "api.JobDetailView.get", job.namespace, READ)
        return Response(JobSerializer(job).data)


class DocumentsView(NamespacedAPIView):
    required_permissions = {"POST": WRITE}

    @extend_schema(
        request=DocumentIngestSerializer,
        parameters=[IDEMPOTENCY_PARAMETER],
        responses={
            201: DocumentIngestResultSerializer,
            202: DocumentIngestResultSerializer,
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
            take_work=lambda chunks: work_take(request, chunks),
        )
        body = {
            "document": outcome.document_id,
            "chunks": len(outcome.memory_ids),
            "memories": outcome.memory_ids,
            "tokens": outcome.tokens,
            "job": outcome.job,
        }
        pending = outcome.job is not None and outcome.job.status not in DONE
        response = Response(
            DocumentIngestResultSerializer(body).data,
            status=status.HTTP_202_ACCEPTED if pending else status.HTTP_201_CREATED,
        )
        if outcome.replayed:
            response["Idempotent-Replayed"] = "true"
        return response
