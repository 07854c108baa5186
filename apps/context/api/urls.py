from django.urls import path

from apps.context.api import views

urlpatterns = [
    path("namespaces/<slug:namespace>/context", views.ContextView.as_view(), name="context"),
]
