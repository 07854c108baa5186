from django.urls import path

from apps.dashboard.webhooks import views

app_name = "webhooks"

urlpatterns = [
    path("n/<slug:slug>/webhooks/", views.endpoints, name="list"),
    path("n/<slug:slug>/webhooks/<str:endpoint_id>/", views.endpoint_detail, name="detail"),
    path(
        "n/<slug:slug>/webhooks/<str:endpoint_id>/change/",
        views.endpoint_change,
        name="change",
    ),
]
