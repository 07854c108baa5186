"""The explorer's orders, named in the query string (`?sort=-created`): newest first unless
another is chosen; by relevance only when searching (the recall engine's order)."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _


@dataclass(frozen=True)
class Order:
    field: str  # the Memory field ordered by; "" for relevance (the recall engine's order)
    descending: bool
    label: str | Promise


DEFAULT = "-created"


RELEVANCE = "-relevance"


ORDERS: dict[str, Order] = {
    "-created": Order("created_at", True, _("Newest first")),
    "created": Order("created_at", False, _("Oldest first")),
    "-updated": Order("updated_at", True, _("Recently updated first")),
    "updated": Order("updated_at", False, _("Least recently updated first")),
    "-importance": Order("importance", True, _("Most important first")),
    "importance": Order("importance", False, _("Least important first")),
    RELEVANCE: Order("", True, _("Most relevant first (searches)")),
}
