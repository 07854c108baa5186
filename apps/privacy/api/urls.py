from django.urls import path

from apps.privacy.api import views

urlpatterns = [
    path(
        "namespaces/<slug:namespace>/subjects/<str:external_id>/portal-sessions",
        views.PortalSessionCreateView.as_view(),
        name="portal-sessions",
    ),
]
