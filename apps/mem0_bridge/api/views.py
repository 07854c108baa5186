"""The API Mem0's client (`mem0ai` 2.2.1) calls, answered by MemoryHub's own services and
selectors, as its REST views call them: the same key scope, permissions, rate limits, work
quota, audit and recall log. Only the shapes are Mem0's.

`/mem0/` serves a key that holds one namespace; `/mem0/<namespace>/` any key. Refusals come
in Mem0's error shape, {"detail": ...}, with the status its client maps to an exception.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, cast

from django.core.paginator import EmptyPage, Paginator
from django.utils.translation import gettext_noop
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts.api.authentication import request_api_key, work_take
from apps.accounts.api.base import NamespacedAPIView
from apps.accounts.models import ApiKey, Permission
from apps.mem0_bridge import selectors
from apps.mem0_bridge.api.authentication import Mem0TokenAuthentication
from apps.mem0_bridge.records import Scope, Unsupported, filters_from_repr, parse_time, scope_of
from apps.mem0_bridge.services import Mem0Add, mem0_memories_add
from apps.mem0_bridge.shapes import history_shape, memory_shape
from apps.memories import selectors as memory_selectors
from apps.memories import services as memory_services
from apps.memories.row_encryption import KeyCache
from apps.pipeline.ingestion import IncomingMessage
from apps.pipeline.models import MessageRole
from apps.recall.search import RecallFilters, RecallRequest, recall_memories
from memoryhub.api.errors import exception_handler
from memoryhub.exceptions import ApplicationError, NotFound

READ, WRITE = Permission.MEMORIES_READ, Permission.MEMORIES_WRITE
CONTEXT, ADMIN = Permission.CONTEXT, Permission.SUBJECTS_ADMIN
PAGE_SIZE, MAX_PAGE_SIZE = 100, 1000
MAX_TOP_K = 100
UNSUPPORTED = gettext_noop("MemoryHub cannot honour this Mem0 request: %(reason)s")


def mem0_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """MemoryHub's one error shape, {"error": {code, message, details}}, with Mem0's
    `detail` beside it: the line its client shows."""
    reason = str(exc) if isinstance(exc, Unsupported) else None
    if reason is not None:  # the reason is English, as the API's messages are
        exc = ApplicationError(UNSUPPORTED, params={"reason": reason}, code="not_supported")
    response = exception_handler(exc, context)
    if response is None:
        return None
    error = (response.data or {}).get("error", {})
    message = error.get("message", "")
    if error.get("code") == "validation_error" and error.get("details"):
        message = f"{message} {_said(error['details'])}"
    response.data = {"detail": reason or message, **(response.data or {})}
    return response


def _said(details: Any, where: str = "") -> str:
    """Validation details as one line: `field: problem; …`."""
    if isinstance(details, dict):
        return "; ".join(_said(v, f"{where}.{k}" if where else str(k)) for k, v in details.items())
    if isinstance(details, list):
        return "; ".join(_said(v, where) for v in details)
    return f"{where}: {details}" if where else str(details)


class Mem0View(NamespacedAPIView):
    """A namespaced view that Mem0's client can call: `Token` authentication, the namespace
    from the URL or else the key's only one, errors in Mem0's shape, and no part of
    MemoryHub's OpenAPI schema."""

    authentication_classes = [Mem0TokenAuthentication]
    schema = None

    def get_exception_handler(self) -> Callable[[Exception, dict[str, Any]], Response | None]:
        return mem0_exception_handler

    def check_permissions(self, request: Request) -> None:
        if not self.kwargs.get("namespace") and isinstance(request.auth, ApiKey):
            self.kwargs["namespace"] = _only_namespace(request.auth)
        super().check_permissions(request)

    def body(self, request: Request) -> dict[str, Any]:
        if not isinstance(request.data, dict):
            raise Unsupported("The body must be a JSON object.")
        return request.data


def _only_namespace(api_key: ApiKey) -> str:
    slugs = list(api_key.namespaces.order_by("slug").values_list("slug", flat=True)[:2])
    if len(slugs) != 1:
        raise ApplicationError(
            gettext_noop(
                "This API key holds several namespaces: use host=<MemoryHub URL>/mem0/"
                "<namespace> to say which."
            ),
            code="namespace_required",
        )
    return slugs[0]


def _open(memories: list[Any], keys: KeyCache | None = None) -> list[dict[str, Any]]:
    return [memory_shape(opened) for opened in memory_selectors.memories_open(memories, keys=keys)]


class PingView(Mem0View):
    """The client's start-up check: it needs a non-empty org_id and project_id. Any key that
    may act in the namespace passes."""

    def permission_needed(self, request: Request) -> str | None:
        api_key = request_api_key(request)
        held = [p for p in (READ, CONTEXT, WRITE, ADMIN) if api_key.has_permission(p)]
        return held[0] if held else READ

    def get(self, request: Request, namespace: str = "") -> Response:
        return Response(
            {
                "status": "ok",
                "org_id": self.namespace.slug,
                "project_id": self.namespace.slug,
                "user_email": None,
            }
        )


class AddView(Mem0View):
    required_permissions = {"POST": WRITE}

    def post(self, request: Request, namespace: str = "") -> Response:
        body = self.body(request)
        top_level = {key: body.get(key) for key in ("user_id", "agent_id", "run_id", "app_id")}
        metadata = body.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise Unsupported("metadata must be an object.")
        add = Mem0Add(
            scope=scope_of(body.get("filters"), top_level),
            messages=_messages(body.get("messages")),
            infer=body.get("infer", True) is not False,
            metadata=metadata,
            occurred_at=_timestamp(body.get("timestamp")),
            expires_at=_expiration(body.get("expiration_date")),
        )
        results = mem0_memories_add(
            actor=self.actor,
            namespace=self.namespace,
            request=add,
            take_work=lambda items: work_take(request, items),
        )
        return Response({"results": results})


def _messages(raw: Any) -> list[IncomingMessage]:
    if isinstance(raw, str):
        raw = [{"role": "user", "content": raw}]
    elif isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise Unsupported("messages must be a non-empty list of {role, content} objects.")
    messages = []
    for index, message in enumerate(raw):
        if not isinstance(message, dict):
            raise Unsupported(f"messages[{index}] is not an object.")
        content = message.get("content")
        if not isinstance(content, str):
            raise Unsupported(
                f"messages[{index}]: MemoryHub stores text; content must be a string."
            )
        role = message.get("role", "user")
        if role not in MessageRole.values:
            raise Unsupported(f"messages[{index}]: role must be one of {MessageRole.values}.")
        name = message.get("name")
        messages.append(
            IncomingMessage(role=role, content=content, name=name if isinstance(name, str) else "")
        )
    return messages


def _timestamp(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Unsupported("timestamp must be Unix seconds.")
    try:
        return datetime.fromtimestamp(value, tz=UTC)
    except (OverflowError, OSError, ValueError):
        raise Unsupported("timestamp is out of range.") from None


def _expiration(value: Any) -> datetime | None:
    if value in (None, ""):
        return None
    try:
        return parse_time(value)
    except (ValueError, TypeError):
        raise Unsupported("expiration_date must be a date, YYYY-MM-DD.") from None


class SearchView(Mem0View):
    """Mem0's search is MemoryHub's recall (`context`), logged as every recall is."""

    required_permissions = {"POST": CONTEXT}

    def post(self, request: Request, namespace: str = "") -> Response:
        body = self.body(request)
        query = body.get("query")
        if not isinstance(query, str) or not query.strip():
            raise Unsupported("query must be a non-empty string.")
        scope = scope_of(body.get("filters"))
        top_k = body.get("top_k", 10)
        if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
            raise Unsupported(f"top_k must be a whole number from 1 to {MAX_TOP_K}.")
        threshold = body.get("threshold")
        outcome = recall_memories(
            RecallRequest(
                actor=self.actor,
                namespace=self.namespace,
                subject_external_id=scope.user_id,
                query=query.strip(),
                k=top_k,
                filters=RecallFilters(metadata=scope.metadata),
                min_relevance=threshold if isinstance(threshold, int | float) else None,
            )
        )
        opened = memory_selectors.memories_open([hit.memory for hit in outcome.hits])
        results = [
            {**memory_shape(memory), "score": round(hit.score, 6)}
            for hit, memory in zip(outcome.hits, opened, strict=True)
        ]
        return Response({"results": results})


class ListView(Mem0View):
    """Mem0's get_all (`POST /v3/memories/`, filters in the body, page in the query)."""

    required_permissions = {"POST": READ}

    def post(self, request: Request, namespace: str = "") -> Response:
        body = self.body(request)
        scope = scope_of(body.get("filters"))
        page_number = _whole(request.query_params.get("page", "1"), "page", 1, 10**6)
        page_size = _whole(
            request.query_params.get("page_size", str(PAGE_SIZE)), "page_size", 1, MAX_PAGE_SIZE
        )
        memories = selectors.mem0_memories(namespace=self.namespace, scope=scope)
        paginator = Paginator(memories, page_size)
        try:
            page = paginator.page(page_number)
        except EmptyPage:
            return Response(
                {"count": paginator.count, "next": None, "previous": None, "results": []}
            )
        link = request.build_absolute_uri(request.path)
        return Response(
            {
                "count": paginator.count,
                "next": f"{link}?page={page_number + 1}&page_size={page_size}"
                if page.has_next()
                else None,
                "previous": f"{link}?page={page_number - 1}&page_size={page_size}"
                if page.has_previous()
                else None,
                "results": _open(list(page.object_list)),
            }
        )


def _whole(text: str, name: str, low: int, high: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise Unsupported(f"{name} must be a whole number.") from None
    if not low <= value <= high:
        raise Unsupported(f"{name} must be from {low} to {high}.")
    return value


class MemoryView(Mem0View):
    required_permissions = {"GET": READ, "PUT": WRITE, "DELETE": WRITE}

    def get(self, request: Request, memory_id: str, namespace: str = "") -> Response:
        memory = memory_selectors.memory_get(namespace=self.namespace, memory_id=memory_id)
        (shape,) = _open([memory])
        return Response(shape)

    def put(self, request: Request, memory_id: str, namespace: str = "") -> Response:
        memory = memory_selectors.memory_get(namespace=self.namespace, memory_id=memory_id)
        body = self.body(request)
        changes: dict[str, Any] = {}
        text = body.get("text", body.get("memory"))
        if text is not None and not isinstance(text, str):
            raise Unsupported("text must be a string.")
        if "metadata" in body and body["metadata"] is not None:
            if not isinstance(body["metadata"], dict):
                raise Unsupported("metadata must be an object.")
            # Mem0's own ids in metadata stay: they say whose the memory is.
            kept = {k: v for k, v in memory.metadata.items() if k in _ID_KEYS}
            changes["metadata"] = {**body["metadata"], **kept}
        if "expiration_date" in body:
            changes["expires_at"] = _expiration(body["expiration_date"])
        if text is None and not changes:
            raise Unsupported("Give text, metadata or expiration_date to update.")
        if text is not None:
            work_take(request, 1)  # a new text is embedded again
        keys = KeyCache()
        memory_services.memory_update(
            actor=self.actor, memory=memory, content=text, keys=keys, **changes
        )
        memory = memory_selectors.memory_get(namespace=self.namespace, memory_id=memory_id)
        (shape,) = _open([memory], keys)
        return Response(shape)

    def delete(self, request: Request, memory_id: str, namespace: str = "") -> Response:
        memory = memory_selectors.memory_get(namespace=self.namespace, memory_id=memory_id)
        memory_services.memory_delete(actor=self.actor, memory=memory)
        return Response({"message": "Memory deleted successfully!"})


_ID_KEYS = ("agent_id", "run_id", "app_id")


class HistoryView(Mem0View):
    required_permissions = {"GET": READ}

    def get(self, request: Request, memory_id: str, namespace: str = "") -> Response:
        memory = memory_selectors.memory_get(namespace=self.namespace, memory_id=memory_id)
        versions = memory_selectors.memory_versions_open(memory=memory)
        return Response(history_shape(memory, versions))


class DeleteAllView(Mem0View):
    """Mem0's delete_all. For a user alone it is MemoryHub's erasure (`subjects:admin`): the
    subject's key destroyed, everything about them deleted, and the receipt in the answer.
    Narrowed by agent_id, run_id, app_id or metadata, it deletes those memories
    (`memories:write`), as the dashboard's bulk delete does."""

    required_permissions = {"DELETE": ADMIN}

    scope = Scope()

    def permission_needed(self, request: Request) -> str | None:
        self.scope = self._scope(request)  # parsed here for the permission it needs
        return WRITE if self.scope.metadata else ADMIN

    def _scope(self, request: Request) -> Scope:
        params = request.query_params
        filters = filters_from_repr(params["filters"]) if "filters" in params else None
        top_level = {key: params.get(key) for key in ("user_id", "agent_id", "run_id", "app_id")}
        return scope_of(filters, top_level)

    def delete(self, request: Request, namespace: str = "") -> Response:
        scope = self.scope
        if scope.user_id is None and not scope.metadata:
            raise Unsupported(
                "MemoryHub deletes one user's memories at a time: give user_id (or agent_id, "
                "run_id, app_id)."
            )
        if not scope.metadata:
            subject = memory_selectors.subject_get(
                namespace=self.namespace, external_id=cast(str, scope.user_id)
            )
            receipt = memory_services.subject_erase(actor=self.actor, subject=subject, via="api")
            return Response(
                {"message": "Memories deleted successfully!", "receipt": receipt.as_dict()}
            )
        memories = memory_selectors.memory_list(
            namespace=self.namespace, subject_external_id=scope.user_id, metadata=scope.metadata
        )
        outcome = memory_services.memories_bulk_change(
            actor=self.actor,
            namespace=self.namespace,
            memories=memories,
            action="delete",
            reason="Mem0 delete_all",
        )
        return Response({"message": "Memories deleted successfully!", "deleted": outcome.count})


class EntitiesView(Mem0View):
    required_permissions = {"GET": READ}

    def get(self, request: Request, namespace: str = "") -> Response:
        results = selectors.mem0_entities(namespace=self.namespace)
        return Response({"count": len(results), "next": None, "previous": None, "results": results})


class NotSupportedView(PingView):
    """Paths of Mem0's client that MemoryHub does not serve: to a key of the namespace, a
    clear refusal in its shape."""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        raise NotFound(
            gettext_noop(
                "MemoryHub's Mem0-compatible API serves ping, add, search, get_all, get, "
                "update, delete, delete_all, history and users; not this call."
            )
        )
