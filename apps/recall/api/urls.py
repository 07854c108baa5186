from django.urls import path

from apps.recall.api import views

urlpatterns = [
    path("namespaces/<slug:namespace>/recall", views.RecallView.as_view(), name="recall"),
]
