from django.contrib.auth.decorators import login_required
from django.urls import path
from django.views.generic import TemplateView

from apps.namespaces import views

app_name = "namespaces"

urlpatterns = [
    path("", views.overview, name="overview"),
    path(
        "namespaces/",
        login_required(
            TemplateView.as_view(
                template_name="placeholder.html",
                extra_context={"heading": "Namespaces", "empty_text": "No namespaces yet."},
            )
        ),
        name="list",
    ),
]
