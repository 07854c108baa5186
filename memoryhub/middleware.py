"""Every request gets an id (the client's X-Request-ID when sane), echoed in the response."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

_SANE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")


def request_id_middleware(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    def middleware(request: HttpRequest) -> HttpResponse:
        claimed = request.headers.get("X-Request-ID", "")
        request.request_id = claimed if _SANE_ID.match(claimed) else uuid.uuid4().hex  # type: ignore[attr-defined]
        response = get_response(request)
        response["X-Request-ID"] = request.request_id  # type: ignore[attr-defined]
        return response

    return middleware
