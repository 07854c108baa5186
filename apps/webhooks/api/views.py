"""Webhook endpoints of a namespace, for a key holding `webhooks:admin`. Thin: parse, fetch
within the namespace (another namespace's endpoint is a 404), call a service."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts.api.base import NamespacedAPIView
from apps.accounts.models import Permission
from apps.webhooks import selectors, services
from apps.webhooks.api.serializers import (
    WebhookDeliverySerializer,
    WebhookEndpointCreatedSerializer,
    WebhookEndpointCreateSerializer,
    WebhookEndpointSerializer,
    WebhookSecretSerializer,
)
from memoryhub.api.pagination import NewestFirstCursorPagination
from memoryhub.api.serializers import error_responses

ADMIN = Permission.WEBHOOKS_ADMIN


class EndpointListView(NamespacedAPIView):
    required_permissions = {"GET": ADMIN, "POST": ADMIN}

    @extend_schema(
        responses={200: WebhookEndpointSerializer(many=True), **error_responses(401, 403, 404, 429)}
    )
    def get(self, request: Request, namespace: str) -> Response:
        endpoints = selectors.endpoint_list(namespace=self.namespace)
        return Response(WebhookEndpointSerializer(endpoints, many=True).data)

    @extend_schema(
        request=WebhookEndpointCreateSerializer,
        responses={
            201: WebhookEndpointCreatedSerializer,
            **error_responses(400, 401, 403, 404, 429),
        },
    )
    def post(self, request: Request, namespace: str) -> Response:
        body = WebhookEndpointCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        created = services.endpoint_create(
            actor=self.actor,
            namespace=self.namespace,
            item=services.NewEndpoint(**body.validated_data),
            created_by=f"key {self.api_key.prefix}",
            creator_reads_memories=self.api_key.has_permission(Permission.MEMORIES_READ),
        )
        data = WebhookEndpointCreatedSerializer(
            created.endpoint, context={"secret": created.secret}
        ).data
        return Response(data, status=status.HTTP_201_CREATED)


class EndpointView(NamespacedAPIView):
    required_permissions = {"DELETE": ADMIN}

    @extend_schema(responses={204: None, **error_responses(401, 403, 404, 429)})
    def delete(self, request: Request, namespace: str, endpoint_id: str) -> Response:
        endpoint = selectors.endpoint_get(namespace=self.namespace, endpoint_id=endpoint_id)
        services.endpoint_delete(actor=self.actor, endpoint=endpoint)
        return Response(status=status.HTTP_204_NO_CONTENT)


class RotateSecretView(NamespacedAPIView):
    required_permissions = {"POST": ADMIN}

    @extend_schema(
        request=None,
        responses={200: WebhookSecretSerializer, **error_responses(401, 403, 404, 429)},
    )
    def post(self, request: Request, namespace: str, endpoint_id: str) -> Response:
        endpoint = selectors.endpoint_get(namespace=self.namespace, endpoint_id=endpoint_id)
        secret = services.endpoint_rotate_secret(actor=self.actor, endpoint=endpoint)
        endpoint.refresh_from_db(fields=["previous_secret_until"])
        return Response(
            WebhookSecretSerializer(
                {"secret": secret, "previous_secret_until": endpoint.previous_secret_until}
            ).data
        )


class TestEventView(NamespacedAPIView):
    required_permissions = {"POST": ADMIN}

    @extend_schema(
        request=None,
        responses={202: WebhookDeliverySerializer, **error_responses(401, 403, 404, 429)},
    )
    def post(self, request: Request, namespace: str, endpoint_id: str) -> Response:
        endpoint = selectors.endpoint_get(namespace=self.namespace, endpoint_id=endpoint_id)
        delivery = services.endpoint_send_test(actor=self.actor, endpoint=endpoint)
        delivery = selectors.delivery_get(endpoint=endpoint, delivery_id=delivery.pk)
        return Response(WebhookDeliverySerializer(delivery).data, status=status.HTTP_202_ACCEPTED)


class DeliveryListView(NamespacedAPIView):
    required_permissions = {"GET": ADMIN}
    pagination_class = NewestFirstCursorPagination

    @extend_schema(
        responses={
            200: WebhookDeliverySerializer(many=True),
            **error_responses(400, 401, 403, 404, 429),
        }
    )
    def get(self, request: Request, namespace: str, endpoint_id: str) -> Response:
        endpoint = selectors.endpoint_get(namespace=self.namespace, endpoint_id=endpoint_id)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(
            selectors.delivery_list(endpoint=endpoint), request, view=self
        )
        assert page is not None  # None only without a page size; this paginator has one
        return paginator.get_paginated_response(WebhookDeliverySerializer(page, many=True).data)


class RedeliverView(NamespacedAPIView):
    required_permissions = {"POST": ADMIN}

    @extend_schema(
        request=None,
        responses={202: WebhookDeliverySerializer, **error_responses(401, 403, 404, 429)},
    )
    def post(
        self, request: Request, namespace: str, endpoint_id: str, delivery_id: str
    ) -> Response:
        endpoint = selectors.endpoint_get(namespace=self.namespace, endpoint_id=endpoint_id)
        delivery = selectors.delivery_get(endpoint=endpoint, delivery_id=delivery_id)
        delivery = services.delivery_redeliver(actor=self.actor, delivery=delivery)
        delivery = selectors.delivery_get(endpoint=endpoint, delivery_id=delivery.pk)
        return Response(WebhookDeliverySerializer(delivery).data, status=status.HTTP_202_ACCEPTED)
