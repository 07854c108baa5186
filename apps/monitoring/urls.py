from django.urls import path

from apps.monitoring.views import metrics_view

urlpatterns = [path("metrics", metrics_view, name="metrics")]
