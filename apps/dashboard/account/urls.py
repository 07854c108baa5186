from django.urls import path

from apps.dashboard.account import views

app_name = "account"

urlpatterns = [
    path("accounts/login/", views.LoginView.as_view(), name="login"),
    path("accounts/logout/", views.LogoutView.as_view(), name="logout"),
    path(
        "accounts/set-password/<uidb64>/<token>/",
        views.SetPasswordView.as_view(),
        name="set_password",
    ),
]
