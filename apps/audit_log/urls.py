from django.contrib.auth.decorators import login_required
from django.urls import path
from django.views.generic import TemplateView

app_name = "audit"

urlpatterns = [
    path(
        "audit/",
        login_required(
            TemplateView.as_view(
                template_name="placeholder.html",
                extra_context={"heading": "Audit log", "empty_text": "No audit events yet."},
            )
        ),
        name="log",
    ),
]
