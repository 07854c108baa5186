from django.urls import path

from apps.accounts.api import views

urlpatterns = [
    path("namespaces/<slug:namespace>/audit", views.AuditListView.as_view(), name="audit-list"),
]
