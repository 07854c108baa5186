"""The recall API: thin views that parse, scope, call recall, and render."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts.api.base import NamespacedAPIView
from apps.accounts.models import Permission
from apps.recall.api.serializers import (
    FeedbackRequestSerializer,
    FeedbackSerializer,
    MemorySerializer,
    RecallRequestSerializer,
    RecallResponseSerializer,
)
from apps.recall.search import RecallFilters, RecallRequest, recall_memories
from apps.recall.services import recall_feedback_give
from apps.recall.time_travel import as_of_parse
from memoryhub.api.serializers import error_responses


class RecallView(NamespacedAPIView):
    required_permissions = {"POST": Permission.CONTEXT}

    @extend_schema(
        request=RecallRequestSerializer,
        responses={200: RecallResponseSerializer, **error_responses(400, 401, 403, 404, 429)},
        description="Hybrid recall (vector + keyword + recency + importance) over the subject's "
        "memories and, unless include_shared is false, the namespace's shared ones; with "
        "include_history, their superseded and ended facts too, below the current ones.",
    )
    def post(self, request: Request, namespace: str) -> Response:
        serializer = RecallRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        filters = data.get("filters") or {}
        as_of = as_of_parse(data["as_of"], now=timezone.now())
        outcome = recall_memories(
            RecallRequest(
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
                    include_history=data["include_history"],
                    as_of=as_of,
                ),
                include_shared=data["include_shared"],
                mmr_lambda=data["mmr"],
                min_relevance=data["min_relevance"],
                open=True,
            )
        )
        assert outcome.opened is not None  # asked for with open=True
        results = [
            {
                "memory": MemorySerializer(memory).data,
                "current": hit.current,
                "score": hit.score,
                "relevance": hit.relevance,
                "components": hit.components,
            }
            for hit, memory in zip(outcome.hits, outcome.opened, strict=True)
        ]
        return Response(
            {"results": results, "recall_id": outcome.recall_id, "timings_ms": outcome.timings_ms}
        )


class RecallFeedbackView(NamespacedAPIView):
    """Feedback on a memory a recall (or a context assembly) served: was it relevant? Given
    again, it replaces the key's earlier judgement of that memory in that recall."""

    required_permissions = {"POST": Permission.CONTEXT}

    @extend_schema(
        request=FeedbackRequestSerializer,
        responses={201: FeedbackSerializer, **error_responses(400, 401, 403, 404, 429)},
    )
    def post(self, request: Request, namespace: str, recall_id: str) -> Response:
        serializer = FeedbackRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        feedback = recall_feedback_give(
            actor=self.actor,
            namespace=self.namespace,
            recall_id=recall_id,
            **serializer.validated_data,
        )
        body = {
            "id": feedback.pk,
            "recall_id": feedback.recall_id,
            "memory_id": feedback.memory_id,
            "relevant": feedback.relevant,
            "created_at": feedback.created_at,
            "updated_at": feedback.updated_at,
        }
        return Response(FeedbackSerializer(body).data, status=status.HTTP_201_CREATED)
