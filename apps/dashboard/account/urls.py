from django.urls import path

from apps.dashboard.account import views

app_name = "account"

urlpatterns = [
    path("accounts/login/", views.LoginView.as_view(), name="login"),
    path("accounts/logout/", views.LogoutView.as_view(), name="logout"),
    path("accounts/sso/start/", views.SsoStartView.as_view(), name="sso_start"),
    path("accounts/sso/callback/", views.SsoCallbackView.as_view(), name="sso_callback"),
    path("accounts/sso/no-namespace/", views.no_namespace, name="no_namespace"),
    path("accounts/login-link/<str:token>/", views.login_link, name="login_link"),
    path(
        "accounts/set-password/<uidb64>/<token>/",
        views.SetPasswordView.as_view(),
        name="set_password",
    ),
]
