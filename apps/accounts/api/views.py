"""The audit log's endpoint: a namespace's events, for a key with `subjects:admin`. It lives
with the API's keys and base view (this app) because the log itself, `apps.audit`, sits
below every app and knows no API key."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts.api.base import NamespacedAPIView
from apps.accounts.api.serializers import AuditEventSerializer, AuditQuerySerializer
from apps.accounts.models import Permission
from apps.audit.selectors import audit_event_list
from memoryhub.api.pagination import NewestIdFirstCursorPagination
from memoryhub.api.serializers import error_responses


class AuditListView(NamespacedAPIView):
    """The namespace's audit events, newest first. Needs the `subjects:admin` permission."""

    required_permissions = {"GET": Permission.SUBJECTS_ADMIN}
    # Read by drf-spectacular, which documents the list as the paginated page it is.
    pagination_class = NewestIdFirstCursorPagination

    @extend_schema(
        parameters=[AuditQuerySerializer],
        responses={
            200: AuditEventSerializer(many=True),
            **error_responses(400, 401, 403, 404, 429),
        },
    )
    def get(self, request: Request, namespace: str) -> Response:
        query = AuditQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        filters = {
            k: v for k, v in query.validated_data.items() if k not in ("cursor", "page_size")
        }
        if "subject_id" in filters:
            filters["subject_id"] = str(filters["subject_id"])
        events = audit_event_list(namespace_id=self.namespace.pk, **filters)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(events, request, view=self)
        return paginator.get_paginated_response(AuditEventSerializer(page, many=True).data)
