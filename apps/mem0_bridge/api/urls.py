"""The paths Mem0's client calls, under /mem0/ (a key of one namespace) and under
/mem0/<namespace>/ (any key)."""

from django.urls import URLPattern, path

from apps.mem0_bridge.api import views


def _routes(prefix: str, name: str) -> list[URLPattern]:
    return [
        path(f"{prefix}v1/ping/", views.PingView.as_view(), name=f"{name}-ping"),
        path(f"{prefix}v3/memories/add/", views.AddView.as_view(), name=f"{name}-add"),
        path(f"{prefix}v3/memories/search/", views.SearchView.as_view(), name=f"{name}-search"),
        path(f"{prefix}v3/memories/", views.ListView.as_view(), name=f"{name}-list"),
        path(f"{prefix}v1/memories/", views.DeleteAllView.as_view(), name=f"{name}-delete-all"),
        path(
            f"{prefix}v1/memories/<str:memory_id>/",
            views.MemoryView.as_view(),
            name=f"{name}-memory",
        ),
        path(
            f"{prefix}v1/memories/<str:memory_id>/history/",
            views.HistoryView.as_view(),
            name=f"{name}-history",
        ),
        path(f"{prefix}v1/entities/", views.EntitiesView.as_view(), name=f"{name}-entities"),
    ]


urlpatterns = [
    *_routes("", "mem0"),
    *_routes("<slug:namespace>/", "mem0-namespaced"),
    path("<path:rest>", views.NotSupportedView.as_view(), name="mem0-not-supported"),
]
