"""Every request gets an id (the client's X-Request-ID when sane), echoed in the response;
pages are dated in the viewer's time zone; signed-in pages are never cached; with a replica,
a request's reads and its client's next ones see what it wrote."""

from __future__ import annotations

import re
import time
import uuid
import zoneinfo
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader
from django.utils import timezone, translation
from django.utils.cache import add_never_cache_headers

from memoryhub import maintenance, metrics, replica, request_context
from memoryhub.api.errors import error_body, is_api_path
from memoryhub.exceptions import ApplicationError

_SANE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")


def request_id_middleware(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """The request's id: the client's `X-Request-ID` when it is 1-64 letters, digits or
    `._:-`, else a new one; echoed in the response, written in the audit log, and on every
    log line of the request (`request_context.request_id`, read by the logging filter)."""

    def middleware(request: HttpRequest) -> HttpResponse:
        claimed = request.headers.get("X-Request-ID", "")
        request.request_id = claimed if _SANE_ID.match(claimed) else uuid.uuid4().hex  # type: ignore[attr-defined]
        token = request_context.request_id.set(request.request_id)  # type: ignore[attr-defined]
        try:
            response = get_response(request)
        finally:
            request_context.request_id.reset(token)
        response["X-Request-ID"] = request.request_id  # type: ignore[attr-defined]
        return response

    return middleware


UNMATCHED_ROUTE = "<unmatched>"


def metrics_middleware(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """Counts and times every request by its URL's route template (`api/v1/namespaces/
    <slug:namespace>/recall`), never its path, and its status. A request no URL matched
    counts under `<unmatched>`."""

    def middleware(request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = get_response(request)
        match = getattr(request, "resolver_match", None)
        route = (match.route or match.view_name) if match is not None else UNMATCHED_ROUTE
        status = str(response.status_code)
        metrics.http_requests.labels(route=route, status=status).inc()
        metrics.http_request_duration.labels(route=route, status=status).observe(
            time.perf_counter() - started
        )
        return response

    return middleware


def no_store_middleware(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """`Cache-Control: no-store` (Django's never-cache headers) on every API response and on
    every page served to a logged-in user: those are the ones that may show decrypted
    memories, and neither a browser nor a proxy may keep them."""

    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        if response.has_header("Cache-Control"):
            return response  # the view said (never_cache, or a deliberate policy)
        user = getattr(request, "user", None)
        if is_api_path(request.path) or (user is not None and user.is_authenticated):
            add_never_cache_headers(response)
        return response

    return middleware


TIME_ZONE_COOKIE = "tz"


def time_zone_middleware(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """Dates on pages in the viewer's time zone: the IANA name the dashboard's script keeps
    in the `tz` cookie (the browser's own zone). Without it, or with a name that is not a
    zone, the server's zone (UTC); pages show the zone beside each time either way."""

    def middleware(request: HttpRequest) -> HttpResponse:
        name = request.COOKIES.get(TIME_ZONE_COOKIE, "")
        zone = None
        if name and len(name) <= 64:
            try:
                zone = zoneinfo.ZoneInfo(name)
            except (zoneinfo.ZoneInfoNotFoundError, ValueError):
                zone = None
        if zone is not None:
            timezone.activate(zone)
        else:
            timezone.deactivate()
        return get_response(request)

    return middleware


def replica_reads_middleware(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """With a replica configured (memoryhub/replica.py), each request is a read scope: its
    reads may use the replica until it writes, and not before the replica holds what its
    client last wrote. A request that wrote leaves the time, after its commit, under each
    credential it presented or was given: its Authorization header, its session cookies
    (a login's new one too). Outside the session middleware, so a session's save counts."""

    def middleware(request: HttpRequest) -> HttpResponse:
        if not replica.configured():
            return get_response(request)
        credentials = _client_credentials(request)
        with replica.read_scope(credentials=credentials) as scope:
            response = get_response(request)
        if scope.wrote:
            given = [
                f"cookie:{name}:{response.cookies[name].value}"
                for name in replica.client_cookies()
                if name in response.cookies and response.cookies[name].value
            ]
            replica.client_wrote([*credentials, *given], at=time.time())
        return response

    return middleware


def _client_credentials(request: HttpRequest) -> list[str]:
    credentials = [
        f"cookie:{name}:{request.COOKIES[name]}"
        for name in replica.client_cookies()
        if request.COOKIES.get(name)
    ]
    authorization = request.headers.get("Authorization", "")
    if authorization:
        credentials.append(f"authorization:{authorization}")
    return credentials


RESTORE_RETRY_AFTER_SECONDS = 30
PROBES = frozenset({"/healthz", "/readyz"})


def restoring_middleware(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """While `manage.py restore` runs (its marker is in the data directory), every request
    is answered 503: the database is being replaced, and must not serve until the erasures
    newer than the backup are applied again."""

    def middleware(request: HttpRequest) -> HttpResponse:
        # The probes answer for themselves: the process is alive, and not ready meanwhile.
        if request.path in PROBES or not maintenance.restoring():
            return get_response(request)
        if is_api_path(request.path):
            response: HttpResponse = JsonResponse(
                error_body(
                    "restoring",
                    "MemoryHub is being restored from a backup; nothing was stored. "
                    "Try again shortly.",
                ),
                status=503,
            )
        else:
            # Before the locale middleware: the reader's language is chosen here.
            with translation.override(translation.get_language_from_request(request)):
                page = loader.get_template("503.html").render({"restoring": True})
            response = HttpResponse(page, status=503)
        response["Retry-After"] = str(RESTORE_RETRY_AFTER_SECONDS)
        return response

    return middleware


class ApplicationErrorMiddleware:
    """A refusal a page's view did not catch (a service raised ApplicationError: the erasure
    ledger unwritable, say) becomes a page saying so, in the reader's language, with its
    status: never a 500. The API's views answer in the one error shape themselves."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, ApplicationError) or is_api_path(request.path):
            return None
        page = loader.get_template("refused.html").render({"message": exception.localized})
        return HttpResponse(page, status=exception.status_code)
