from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django_htmx.middleware import HtmxDetails

from memoryhub.health import current_health


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails  # set by django-htmx's middleware


@login_required
def overview(request: HtmxHttpRequest) -> HttpResponse:
    template = "namespaces/overview.html"
    if request.htmx:
        template += "#status"
    return render(request, template, {"health": current_health()})
