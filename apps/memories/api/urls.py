from django.urls import path

from apps.memories.api import views

urlpatterns = [
    path(
        "schemas/subject-export-v1.json", views.subject_export_schema, name="subject-export-schema"
    ),
    path(
        "namespaces/<slug:namespace>/memories", views.MemoryListView.as_view(), name="memory-list"
    ),
    path(
        "namespaces/<slug:namespace>/memories/<str:memory_id>",
        views.MemoryDetailView.as_view(),
        name="memory-detail",
    ),
    path(
        "namespaces/<slug:namespace>/memories/<str:memory_id>/versions",
        views.MemoryVersionsView.as_view(),
        name="memory-versions",
    ),
    path(
        "namespaces/<slug:namespace>/subjects/<str:external_id>",
        views.SubjectView.as_view(),
        name="subject-detail",
    ),
    path(
        "namespaces/<slug:namespace>/subjects/<str:external_id>/export",
        views.SubjectExportView.as_view(),
        name="subject-export",
    ),
    path(
        "namespaces/<slug:namespace>/subjects/<str:external_id>/erase",
        views.SubjectEraseView.as_view(),
        name="subject-erase",
    ),
]
