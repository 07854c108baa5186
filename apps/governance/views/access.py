"""What every governance view shares: the namespace and page helpers of every dashboard page
(apps/namespaces/pages.py), and the governance pages' own (a memory, a subject, page sizes)."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.utils.translation import gettext_lazy

from apps.governance import selectors
from apps.governance.filters import PAGE_SIZES
from apps.memories.models import Memory
from apps.memories.selectors import memory_get
from apps.namespaces.models import Namespace
from apps.namespaces.pages import (
    EDITOR,
    OWNER,
    VIEWER,
    DashboardRequest,
    actor_of,
    back_to,
    namespace_for_request,
    page_context,
)
from memoryhub.exceptions import NotFound

__all__ = [
    "EDITOR",
    "OWNER",
    "VIEWER",
    "DashboardRequest",
    "actor_of",
    "back_to",
    "namespace_for_request",
    "page_context",
]

ACTION_LABELS = {
    "archive": gettext_lazy("Archive"),
    "tag": gettext_lazy("Add a tag"),
    "delete": gettext_lazy("Delete"),
    "approve": gettext_lazy("Approve"),
    "restore": gettext_lazy("Restore"),
    "rollback": gettext_lazy("Roll back"),
    "merge": gettext_lazy("Merge"),
    "confirm": gettext_lazy("Confirm"),
    "end": gettext_lazy("End"),
}


def memory_for(namespace: Namespace, memory_id: str) -> Memory:
    try:
        return memory_get(namespace=namespace, memory_id=memory_id)
    except NotFound:
        raise Http404("Memory not found.") from None


def page_size(raw: str | None) -> int:
    try:
        size = int(raw or 50)
    except ValueError:
        return 50
    return size if size in PAGE_SIZES else 50


def subject_for(namespace: Namespace, subject_id: str) -> Any:
    subject = selectors.subject_by_id(namespace=namespace, subject_id=subject_id)
    if subject is None:
        raise Http404("Subject not found.")
    return subject
