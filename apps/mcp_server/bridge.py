"""An MCP tool call made as the REST call it mirrors: the same view, in this process, with
the caller's own `Authorization` header. So a tool is bound exactly as the API is (the key's
namespaces and permissions, its rate limits, the row-level wall), validates its input the
same way, and is audited as that REST call, with nothing written twice."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from django.core.handlers.wsgi import WSGIRequest
from django.http import HttpRequest
from django.urls import Resolver404, resolve

# What the inner request keeps of the outer one: who is asking, and from where.
_CARRIED = ("HTTP_AUTHORIZATION", "REMOTE_ADDR", "HTTP_X_FORWARDED_FOR", "HTTP_HOST")


@dataclass(frozen=True)
class ApiAnswer:
    status: int
    body: Any  # the parsed JSON body; None for 204

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def error(self) -> dict[str, Any]:
        """The one error shape's inner object (code, message, details)."""
        if isinstance(self.body, dict) and isinstance(self.body.get("error"), dict):
            return self.body["error"]
        return {"code": "error", "message": f"HTTP {self.status}", "details": {}}


def api_path(namespace: str, *parts: str) -> str:
    """`/api/v1/namespaces/<ns>/<parts…>`, each part quoted (an id may hold any character)."""
    tail = "/".join(quote(part, safe="") for part in parts)
    return f"/api/v1/namespaces/{quote(namespace, safe='')}/{tail}"


def api_call(
    origin: HttpRequest,
    method: str,
    path: str,
    *,
    body: dict[str, Any] | None = None,
    query: dict[str, Any] | None = None,
) -> ApiAnswer:
    """Call the API view at `path` as the caller of `origin` would, and read its answer."""
    payload = b"" if body is None else json.dumps(body).encode()
    environ: dict[str, Any] = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "SCRIPT_NAME": "",
        "QUERY_STRING": urlencode({k: v for k, v in (query or {}).items() if v is not None}),
        "SERVER_NAME": origin.META.get("SERVER_NAME", "localhost"),
        "SERVER_PORT": origin.META.get("SERVER_PORT", "80"),
        "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.url_scheme": origin.scheme or "http",
        "wsgi.input": io.BytesIO(payload),
        "CONTENT_LENGTH": str(len(payload)),
        "CONTENT_TYPE": "application/json",
        "HTTP_ACCEPT": "application/json",
    }
    environ.update({name: origin.META[name] for name in _CARRIED if name in origin.META})
    request = WSGIRequest(environ)
    request.request_id = getattr(origin, "request_id", "")  # type: ignore[attr-defined]
    try:
        match = resolve(path)
    except Resolver404:
        return ApiAnswer(
            404, {"error": {"code": "not_found", "message": "Not found.", "details": {}}}
        )
    response = match.func(request, *match.args, **match.kwargs)
    if hasattr(response, "render"):
        response.render()
    content = response.content
    return ApiAnswer(response.status_code, json.loads(content) if content else None)
