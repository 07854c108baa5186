"""The explorer's filters (django-filter), read from the query string so that a filtered list
is a link: the same filters choose the rows of a bulk action and of a purge."""

from __future__ import annotations

from typing import Any

import django_filters
from django import forms
from django.db.models import Q, QuerySet
from django.utils.translation import gettext_lazy as _

from apps.memories.models import Kind, Memory, Status
from apps.namespaces import pii

SUPERSEDED = "superseded"
STATUS_CHOICES = [
    (Status.ACTIVE.value, _("Active")),
    (Status.ARCHIVED.value, _("Archived")),
    (Status.PENDING_REVIEW.value, _("Pending review")),
    (Status.DISPUTED.value, _("Disputed")),
    (SUPERSEDED, _("Superseded")),
]
SOURCE_CHOICES = [
    ("conversation", _("Conversation")),
    ("document", _("Document")),
    ("manual", _("Written by hand")),
]
PII_CHOICES = [(f"pii:{kind}", kind.upper() if len(kind) <= 4 else kind) for kind in pii.TYPES]
KIND_CHOICES = [(kind.value, kind.label) for kind in Kind]


class MemoryFilter(django_filters.FilterSet):
    """Subject, kind, status (with "superseded": ended facts kept as history), tag, PII tag,
    source, creation time range, and confidence below a value."""

    subject = django_filters.CharFilter(
        label=_("Subject"), field_name="subject__external_id", lookup_expr="exact"
    )
    kind = django_filters.ChoiceFilter(label=_("Kind"), choices=KIND_CHOICES)
    status = django_filters.ChoiceFilter(
        label=_("Status"), choices=STATUS_CHOICES, method="filter_status"
    )
    tag = django_filters.CharFilter(label=_("Tag"), method="filter_tag")
    pii = django_filters.ChoiceFilter(label=_("PII tag"), choices=PII_CHOICES, method="filter_tag")
    source = django_filters.ChoiceFilter(
        label=_("Source"), choices=SOURCE_CHOICES, method="filter_source"
    )
    since = django_filters.DateFilter(
        label=_("Created from"),
        field_name="created_at",
        lookup_expr="date__gte",
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    until = django_filters.DateFilter(
        label=_("Created until"),
        field_name="created_at",
        lookup_expr="date__lte",
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    confidence_below = django_filters.NumberFilter(
        label=_("Confidence below"),
        field_name="confidence",
        lookup_expr="lt",
        widget=forms.NumberInput(attrs={"step": "0.05", "min": "0", "max": "1"}),
    )

    class Meta:
        model = Memory
        fields: list[str] = []

    def filter_status(self, queryset: QuerySet[Memory], name: str, value: str) -> QuerySet[Memory]:
        if value == SUPERSEDED:
            return queryset.filter(valid_to__isnull=False)
        return queryset.filter(status=value, valid_to__isnull=True)

    def filter_tag(self, queryset: QuerySet[Memory], name: str, value: str) -> QuerySet[Memory]:
        return queryset.filter(tags__contains=[value]) if value else queryset

    def filter_source(self, queryset: QuerySet[Memory], name: str, value: str) -> QuerySet[Memory]:
        conversation, document = Q(source__has_key="session"), Q(source__has_key="document")
        if value == "conversation":
            return queryset.filter(conversation)
        if value == "document":
            return queryset.filter(document)
        return queryset.exclude(conversation | document)

    def active_filters(self) -> dict[str, Any]:
        """The filters given (valid ones only), as the query string holds them."""
        if not self.is_bound or not self.is_valid():
            return {}
        return {
            name: self.data[name]
            for name in self.filters
            if self.form.cleaned_data.get(name) not in (None, "")
        }

    def active_filters_shown(self) -> list[tuple[str, str]]:
        """The filters given, as a reader sees them: each field's label with the value's
        label where the field offers choices (in the viewer's language)."""
        shown = []
        for name, value in self.active_filters().items():
            field = self.form.fields[name]
            choices = dict(getattr(field, "choices", None) or [])
            shown.append((str(field.label), str(choices.get(value, value))))
        return shown
