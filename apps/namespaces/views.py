from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from memoryhub.health import current_health


@login_required
def overview(request: HttpRequest) -> HttpResponse:
    template = "namespaces/overview.html"
    if request.htmx:
        template += "#status"
    return render(request, template, {"health": current_health()})
