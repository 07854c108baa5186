from django.urls import path

from apps.pipeline.api import views

urlpatterns = [
    path("namespaces/<slug:namespace>/messages", views.MessagesView.as_view(), name="messages"),
    path("namespaces/<slug:namespace>/documents", views.DocumentsView.as_view(), name="documents"),
    path("jobs/<str:job_id>", views.JobDetailView.as_view(), name="job-detail"),
]
