"""The dashboard's addresses, one namespace per area: `dashboard:<area>:<page>`. The
addresses themselves are the ones the pages always had (tests/dashboard/test_paths.py)."""

from django.urls import include, path

app_name = "dashboard"

urlpatterns = [
    path("", include("apps.dashboard.account.urls")),
    path("", include("apps.dashboard.keys.urls")),
    path("", include("apps.dashboard.overview.urls")),
    path("", include("apps.dashboard.memories.urls")),
    path("", include("apps.dashboard.review.urls")),
    path("", include("apps.dashboard.subjects.urls")),
    path("", include("apps.dashboard.policies.urls")),
    path("", include("apps.dashboard.members.urls")),
    path("", include("apps.dashboard.playground.urls")),
    path("", include("apps.dashboard.quality.urls")),
    path("", include("apps.dashboard.audit.urls")),
    path("", include("apps.dashboard.webhooks.urls")),
]
