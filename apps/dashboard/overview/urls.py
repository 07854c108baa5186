from django.urls import path

from apps.dashboard.overview import views

app_name = "overview"

urlpatterns = [
    path("", views.overview, name="index"),
    path("n/<slug:slug>/", views.overview, name="namespace"),
    path("namespaces/", views.namespace_list, name="namespaces"),
]
