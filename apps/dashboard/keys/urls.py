from django.urls import path

from apps.dashboard.keys import views

app_name = "keys"

urlpatterns = [
    path("api-keys/", views.api_keys, name="list"),
    path("api-keys/new/", views.api_key_new, name="new"),
    path("api-keys/<str:prefix>/", views.api_key_detail, name="detail"),
    path("api-keys/<str:prefix>/revoke/", views.api_key_revoke_confirm, name="revoke"),
    path("api-keys/<str:prefix>/expiry/", views.api_key_expiry, name="expiry"),
]
