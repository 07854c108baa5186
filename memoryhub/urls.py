from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from memoryhub import views

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("readyz", views.readyz, name="readyz"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("", include("apps.monitoring.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves its set-up script as a file: no inline script under the CSP.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/v1/", include("apps.memories.api.urls")),
    path("api/v1/", include("apps.recall.api.urls")),
    path("api/v1/", include("apps.pipeline.api.urls")),
    path("api/v1/", include("apps.accounts.api.urls")),
    path("api/v1/", include("apps.context.api.urls")),
    path("api/v1/", include("apps.privacy.api.urls")),
    path("api/v1/", include("apps.webhooks.api.urls")),
    # Mem0's client, pointed at MemoryHub (docs/from-mem0.md).
    path("mem0/", include("apps.mem0_bridge.api.urls")),
    path("", include("apps.mcp_server.urls")),
    path("django-admin/", admin.site.urls),
    path("i18n/", include("django.conf.urls.i18n")),
    path("", include("apps.dashboard.urls")),
    path("", include("apps.privacy.urls")),
]

handler400 = "memoryhub.views.bad_request"
handler404 = "memoryhub.views.page_not_found"
handler500 = "memoryhub.views.server_error"
