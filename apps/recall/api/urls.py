from django.urls import path

from apps.recall.api import views

urlpatterns = [
    path("namespaces/<slug:namespace>/recall", views.RecallView.as_view(), name="recall"),
    path(
        "namespaces/<slug:namespace>/recall/<str:recall_id>/feedback",
        views.RecallFeedbackView.as_view(),
        name="recall-feedback",
    ),
]
