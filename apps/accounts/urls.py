from django.contrib.auth import views as auth_views
from django.urls import path

from apps.accounts import views

app_name = "accounts"

urlpatterns = [
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(
            template_name="accounts/login.html", redirect_authenticated_user=True
        ),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api-keys/", views.api_keys, name="api_keys"),
    path("api-keys/new/", views.api_key_new, name="api_key_new"),
    path("api-keys/<str:prefix>/", views.api_key_detail, name="api_key"),
    path("api-keys/<str:prefix>/revoke/", views.api_key_revoke_confirm, name="api_key_revoke"),
    path("api-keys/<str:prefix>/expiry/", views.api_key_expiry, name="api_key_expiry"),
]
