from django.contrib.auth.decorators import login_required
from django.urls import path
from django.views.generic import TemplateView

app_name = "memories"

urlpatterns = [
    path(
        "memories/",
        login_required(
            TemplateView.as_view(
                template_name="placeholder.html",
                extra_context={"heading": "Memories", "empty_text": "No memories yet."},
            )
        ),
        name="list",
    ),
]
