from django.urls import path

from apps.webhooks.api import views

PREFIX = "namespaces/<slug:namespace>/webhooks"

urlpatterns = [
    path(PREFIX, views.EndpointListView.as_view(), name="webhooks"),
    path(f"{PREFIX}/<str:endpoint_id>", views.EndpointView.as_view(), name="webhook"),
    path(
        f"{PREFIX}/<str:endpoint_id>/rotate-secret",
        views.RotateSecretView.as_view(),
        name="webhook-rotate-secret",
    ),
    path(f"{PREFIX}/<str:endpoint_id>/test", views.TestEventView.as_view(), name="webhook-test"),
    path(
        f"{PREFIX}/<str:endpoint_id>/deliveries",
        views.DeliveryListView.as_view(),
        name="webhook-deliveries",
    ),
    path(
        f"{PREFIX}/<str:endpoint_id>/deliveries/<str:delivery_id>/redeliver",
        views.RedeliverView.as_view(),
        name="webhook-redeliver",
    ),
]
