from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django_htmx.middleware import HtmxDetails

from apps.namespaces.selectors import namespaces_for_user
from memoryhub.health import current_health


class HtmxHttpRequest(HttpRequest):
    """A signed-in request (`login_required`) with django-htmx's details."""

    user: User
    htmx: HtmxDetails


@login_required
def overview(request: HtmxHttpRequest) -> HttpResponse:
    """The landing page. System status is for operators (staff) only: a member of a namespace
    has no business with the database's state, and a member of nothing sees nothing."""
    template = "namespaces/overview.html"
    if request.htmx:
        template += "#status"
    staff = request.user.is_staff
    return render(
        request,
        template,
        {
            "health": current_health() if staff else None,
            "namespace_count": namespaces_for_user(request.user).count(),
        },
    )
