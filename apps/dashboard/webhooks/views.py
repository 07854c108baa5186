"""A namespace's webhook endpoints (owners only): the list with the form that adds one, the
secret shown once (after creating or rotating), and an endpoint's delivery log, each attempt
with its status, latency, response code and the first 1 kB of the answer. From the log: send
a test event, redeliver one delivery or every failed one since a time, rotate the secret,
delete the endpoint (asked first)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop
from django.views.decorators.http import require_POST

from apps.dashboard.pages import (
    OWNER,
    DashboardRequest,
    actor_of,
    form_errors,
    namespace_for_request,
    page_context,
)
from apps.dashboard.webhooks.forms import EndpointCreateForm, RedeliverSinceForm
from apps.namespaces.models import Namespace
from apps.webhooks import selectors, services
from apps.webhooks.models import DeliveryStatus, WebhookEndpoint
from memoryhub.exceptions import ApplicationError, NotFound

LOG_SIZE = 50  # the newest deliveries shown in an endpoint's log
STATUS_LABELS: dict[str, Any] = {
    DeliveryStatus.PENDING: gettext_lazy("pending"),
    DeliveryStatus.DELIVERED: gettext_lazy("delivered"),
    DeliveryStatus.FAILED: gettext_lazy("failed"),
}


def _endpoint(request: DashboardRequest, namespace: Namespace, endpoint_id: str) -> WebhookEndpoint:
    try:
        return selectors.endpoint_get(namespace=namespace, endpoint_id=endpoint_id)
    except NotFound:
        raise Http404("Webhook endpoint not found.") from None


def _secret_page(
    request: DashboardRequest, namespace: Namespace, endpoint: WebhookEndpoint, secret: str
) -> HttpResponse:
    """The secret, this once: rendered from the POST that made it, never stored or cached."""
    response = render(
        request,
        "dashboard/webhooks/secret.html",
        page_context(request, namespace, endpoint=endpoint, secret=secret),
    )
    add_never_cache_headers(response)
    return response


@login_required
def endpoints(request: DashboardRequest, slug: str) -> HttpResponse:
    namespace = namespace_for_request(request, slug, OWNER)
    form = EndpointCreateForm(request.POST or None)
    if request.method == "POST":
        if form.is_valid():
            try:
                created = services.endpoint_create(
                    actor=actor_of(request),
                    namespace=namespace,
                    item=services.NewEndpoint(**form.cleaned_data),
                    created_by=f"user {request.user.get_username()}",
                    creator_reads_memories=True,  # an owner reads the namespace's memories
                )
            except ApplicationError as error:
                form.add_error(None, error.localized)
            else:
                return _secret_page(request, namespace, created.endpoint, created.secret)
        messages.error(request, form_errors(form))
    return render(
        request,
        "dashboard/webhooks/list.html",
        page_context(
            request,
            namespace,
            endpoints=selectors.endpoint_list(namespace=namespace),
            form=form,
        ),
    )


@login_required
def endpoint_detail(request: DashboardRequest, slug: str, endpoint_id: str) -> HttpResponse:
    namespace = namespace_for_request(request, slug, OWNER)
    endpoint = _endpoint(request, namespace, endpoint_id)
    deliveries = list(selectors.delivery_list(endpoint=endpoint)[:LOG_SIZE])
    for delivery in deliveries:
        delivery.status_label = STATUS_LABELS.get(delivery.status, delivery.status)  # type: ignore[attr-defined]
        delivery.attempt_rows = list(delivery.tries.all())  # type: ignore[attr-defined]
        for attempt in delivery.attempt_rows:  # type: ignore[attr-defined]
            attempt.body_text = bytes(attempt.response_body).decode("utf-8", "replace")
    return render(
        request,
        "dashboard/webhooks/detail.html",
        page_context(
            request,
            namespace,
            endpoint=endpoint,
            deliveries=deliveries,
            since_form=RedeliverSinceForm(),
            log_size=LOG_SIZE,
        ),
    )


def _send_test(request: DashboardRequest, endpoint: WebhookEndpoint) -> HttpResponse | None:
    services.endpoint_send_test(actor=actor_of(request), endpoint=endpoint)
    messages.success(request, _("A test event is on its way."))
    return None


def _redeliver(request: DashboardRequest, endpoint: WebhookEndpoint) -> HttpResponse | None:
    try:
        delivery = selectors.delivery_get(
            endpoint=endpoint, delivery_id=request.POST.get("delivery", "")
        )
    except NotFound:
        raise Http404("Delivery not found.") from None
    services.delivery_redeliver(actor=actor_of(request), delivery=delivery)
    messages.success(request, _("The delivery is sent again, with the same webhook-id."))
    return None


def _redeliver_failed(request: DashboardRequest, endpoint: WebhookEndpoint) -> HttpResponse | None:
    since = RedeliverSinceForm(request.POST)
    if not since.is_valid():
        raise ApplicationError(gettext_noop("Give the time to redeliver failures from."))
    count = services.deliveries_redeliver_failed(
        actor=actor_of(request), endpoint=endpoint, since=since.cleaned_data["since"]
    )
    messages.success(request, _("%(count)s failed deliveries sent again.") % {"count": count})
    return None


def _rotate(request: DashboardRequest, endpoint: WebhookEndpoint) -> HttpResponse | None:
    secret = services.endpoint_rotate_secret(actor=actor_of(request), endpoint=endpoint)
    endpoint.refresh_from_db()
    return _secret_page(request, endpoint.namespace, endpoint, secret)


def _delete(request: DashboardRequest, endpoint: WebhookEndpoint) -> HttpResponse | None:
    if request.POST.get("confirm") != "1":  # asked first
        return render(
            request,
            "dashboard/webhooks/delete.html",
            page_context(request, endpoint.namespace, endpoint=endpoint),
        )
    services.endpoint_delete(actor=actor_of(request), endpoint=endpoint)
    messages.success(request, _("The endpoint is deleted: it gets no more events."))
    return redirect("dashboard:webhooks:list", slug=endpoint.namespace.slug)


ACTIONS: dict[str, Callable[[DashboardRequest, WebhookEndpoint], HttpResponse | None]] = {
    "test": _send_test,
    "redeliver": _redeliver,
    "redeliver_failed": _redeliver_failed,
    "rotate": _rotate,
    "delete": _delete,
}


@login_required
@require_POST
def endpoint_change(request: DashboardRequest, slug: str, endpoint_id: str) -> HttpResponse:
    """Send a test event, redeliver, rotate the secret, or delete (after a confirmation);
    back to the delivery log, saying what was done or why not."""
    namespace = namespace_for_request(request, slug, OWNER)
    endpoint = _endpoint(request, namespace, endpoint_id)
    action = ACTIONS.get(request.POST.get("action", ""))
    if action is None:
        raise Http404("Unknown action.")
    try:
        response = action(request, endpoint)
    except ApplicationError as error:
        messages.error(request, error.localized)
        response = None
    return response or redirect("dashboard:webhooks:detail", slug=slug, endpoint_id=endpoint.pk)
