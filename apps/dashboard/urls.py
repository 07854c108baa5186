"""The dashboard's addresses, one namespace per area: `dashboard:<area>:<page>`."""

from django.urls import include, path

app_name = "dashboard"

urlpatterns = [
    path("", include("apps.dashboard.audit.urls")),
]
