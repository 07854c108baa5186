from django.contrib.auth.decorators import login_required
from django.urls import path
from django.views.generic import TemplateView

app_name = "context"

urlpatterns = [
    path(
        "playground/",
        login_required(
            TemplateView.as_view(
                template_name="placeholder.html",
                extra_context={
                    "heading": "Playground",
                    "empty_text": "Nothing to assemble yet: add a namespace and memories first.",
                },
            )
        ),
        name="playground",
    ),
]
