from django.contrib.auth.decorators import login_required
from django.urls import path
from django.utils.translation import gettext_lazy as _
from django.views.generic import TemplateView

app_name = "evaluation"

urlpatterns = [
    path(
        "quality/",
        login_required(
            TemplateView.as_view(
                template_name="placeholder.html",
                extra_context={"heading": _("Quality"), "empty_text": _("No evaluation runs yet.")},
            )
        ),
        name="quality",
    ),
]
