"""The audit viewer's filters (django-filter), read from the query string so that a filtered
log is a link, and the export of the same filters is the same events."""

from __future__ import annotations

import contextlib
import uuid
from datetime import datetime
from typing import Any

import django_filters
from django import forms
from django.db.models import QuerySet
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from apps.audit.models import AuditEvent, Outcome
from apps.audit.selectors import AuditScope, audit_ids_for_time_range
from apps.memories.selectors import subject_ids_by_external_id

PAGE_SIZES = (25, 50, 100)
SUGGESTING = {
    "hx-trigger": "input changed delay:250ms",
    "hx-target": "#subject-suggestions",
    "hx-swap": "innerHTML",
    "hx-push-url": "false",
    "hx-include": "#id_namespace",
}


class AuditEventFilter(django_filters.FilterSet):
    """Action, outcome, actor name, namespace, subject and a time range: each an equality or
    a range served by an index that ends in the id (apps/audit/models.py), so a page, newest
    first, reads one index range. The namespace is chosen among those the viewer may see;
    the subject by the external id the app knows it by (in the namespaces where the viewer
    may see external ids), or by its id (the links of a subject's page)."""

    action = django_filters.CharFilter(
        label=_("Action"),
        max_length=64,
        widget=forms.TextInput(attrs={"placeholder": "memory.create", "autocomplete": "off"}),
    )
    outcome = django_filters.ChoiceFilter(label=_("Outcome"), choices=Outcome.choices)
    actor = django_filters.CharFilter(
        label=_("Actor name"),
        field_name="actor_name",
        max_length=200,
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )
    namespace = django_filters.ChoiceFilter(label=_("Namespace"), method="filter_namespace")
    subject = django_filters.CharFilter(
        label=_("Subject"),
        method="filter_subject",
        max_length=255,
        widget=forms.TextInput(
            attrs={"autocomplete": "off", "spellcheck": "false", "list": "subject-suggestions"}
        ),
    )
    since = django_filters.DateTimeFilter(
        label=_("From"),
        field_name="created_at",
        lookup_expr="gte",
        method="filter_since",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local", "step": "1"}),
    )
    until = django_filters.DateTimeFilter(
        label=_("Before"),
        field_name="created_at",
        lookup_expr="lt",
        method="filter_until",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local", "step": "1"}),
    )

    class Meta:
        model = AuditEvent
        fields: list[str] = []

    def __init__(self, *args: Any, scope: AuditScope, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.scope = scope
        self.namespace_ids = scope.namespaces
        self.filters["namespace"].extra["choices"] = [
            (slug, slug) for slug in sorted(scope.namespaces)
        ]
        subject = self.form.fields["subject"]
        if any(scope.shows_external_ids(pk) for pk in scope.namespaces.values()):
            # Suggestions as one types (the options of a <datalist>, for the namespace
            # chosen); the filter itself takes the external id typed in full.
            subject.widget.attrs.update(
                SUGGESTING, **{"hx-get": reverse("dashboard:audit:subjects")}
            )
        else:
            subject.widget.attrs.pop("list", None)

    def filter_subject(
        self, queryset: QuerySet[AuditEvent], name: str, value: str
    ) -> QuerySet[AuditEvent]:
        value = value.strip()
        if not value:
            return queryset
        identifying = [
            pk for pk in self.scope.namespaces.values() if self.scope.shows_external_ids(pk)
        ]
        ids: list[uuid.UUID] = subject_ids_by_external_id(
            namespace_ids=identifying, external_id=value
        )
        with contextlib.suppress(ValueError):
            ids.append(uuid.UUID(value))
        return queryset.filter(subject_id__in=ids)

    def filter_namespace(
        self, queryset: QuerySet[AuditEvent], name: str, value: str
    ) -> QuerySet[AuditEvent]:
        return queryset.filter(namespace_id=self.namespace_ids[value]) if value else queryset

    # The exact time bound, and the id bound that lets the id index start at the range.
    def filter_since(
        self, queryset: QuerySet[AuditEvent], name: str, value: datetime | None
    ) -> QuerySet[AuditEvent]:
        if value is None:
            return queryset
        above, _below = audit_ids_for_time_range(since=value, until=None)
        queryset = queryset.filter(created_at__gte=value)
        return queryset.filter(id__gt=above) if above is not None else queryset

    def filter_until(
        self, queryset: QuerySet[AuditEvent], name: str, value: datetime | None
    ) -> QuerySet[AuditEvent]:
        if value is None:
            return queryset
        _above, below = audit_ids_for_time_range(since=None, until=value)
        queryset = queryset.filter(created_at__lt=value)
        return queryset.filter(id__lt=below) if below is not None else queryset

    def active_filters(self) -> list[str]:
        """The names of the filters given (valid ones only)."""
        if not self.is_bound or not self.is_valid():
            return []
        return sorted(
            name for name in self.filters if self.form.cleaned_data.get(name) not in (None, "")
        )
