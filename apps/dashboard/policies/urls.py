from django.urls import path

from apps.dashboard.policies import views

app_name = "policies"

urlpatterns = [
    path("n/<slug:slug>/settings/", views.namespace_settings, name="settings"),
]
