from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.urls import path
from django.views.generic import TemplateView

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
    path(
        "api-keys/",
        login_required(
            TemplateView.as_view(
                template_name="placeholder.html",
                extra_context={"heading": "API keys", "empty_text": "No API keys yet."},
            )
        ),
        name="api_keys",
    ),
]
