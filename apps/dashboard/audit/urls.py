from django.urls import path

from apps.dashboard.audit import views

app_name = "audit"

urlpatterns = [
    path("audit/", views.audit_log, name="log"),
    path("audit/export.jsonl", views.audit_export, name="export"),
    path("audit/subjects/", views.subject_suggestions, name="subjects"),
    path("audit/verify/", views.chain_verify, name="verify"),
    path(
        "audit/verifications/<int:verification_id>/",
        views.chain_verification,
        name="verification",
    ),
    path("audit/<int:event_id>/", views.audit_event, name="event"),
]
