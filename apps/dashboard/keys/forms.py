"""The API-keys pages' forms, and the words they and the pages use for each permission.

What each permission opens is read off the API's views (`required_permissions` in
apps/*/api/views.py); keep these words in step when an endpoint is added or changes.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from django import forms
from django.db.models import QuerySet
from django.forms.boundfield import BoundWidget
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from apps.accounts.models import Permission
from apps.accounts.selectors import API_KEY_STATES
from apps.namespaces.models import Namespace

if TYPE_CHECKING:
    from django_stubs_ext import StrPromise

# The checkbox label of each permission: what it is called.
PERMISSION_LABELS: dict[str, StrPromise] = {
    Permission.MEMORIES_READ: _("Read memories"),
    Permission.MEMORIES_WRITE: _("Write memories"),
    Permission.CONTEXT: _("Recall and assemble context"),
    Permission.SUBJECTS_ADMIN: _("Administer subjects"),
    Permission.SUBJECTS_PORTAL: _("Open the privacy portal"),
    Permission.WEBHOOKS_ADMIN: _("Manage webhooks"),
}
# Under each checkbox: what it lets an app do, in any namespace of the key.
PERMISSION_HELP: dict[str, StrPromise] = {
    Permission.MEMORIES_READ: _(
        "List, filter and read memories with their version history; follow the progress of jobs."
    ),
    Permission.MEMORIES_WRITE: _(
        "Create, edit and delete memories; send conversation turns and documents to remember."
    ),
    Permission.CONTEXT: _(
        "Recall the memories that best match a query, and assemble a prompt context from them."
    ),
    Permission.SUBJECTS_ADMIN: _(
        "Export everything held about a subject, erase a subject for good, and read the audit "
        "log. For back-office tools only."
    ),
    Permission.SUBJECTS_PORTAL: _(
        "Ask for a short-lived link that takes a person to the privacy portal, where they see, "
        "correct, export, erase or pause what is remembered about them. Whoever opens the "
        "link can do all of that: give it only to the person. Administering subjects "
        "includes it."
    ),
    Permission.WEBHOOKS_ADMIN: _(
        "Add, list and remove the endpoints that receive signed events, rotate their secrets, "
        "send test events and redeliver events."
    ),
}
# "What can this key do", per namespace: %(namespace)s is the namespace's name and slug.
PERMISSION_IN_NAMESPACE: dict[str, StrPromise] = {
    Permission.MEMORIES_READ: _(
        "List and filter the memories of %(namespace)s, read any one of them with its version "
        "history, and follow the progress of the jobs it started."
    ),
    Permission.MEMORIES_WRITE: _(
        "Create, edit and delete memories in %(namespace)s, and send it conversation turns and "
        "documents to turn into memories."
    ),
    Permission.CONTEXT: _(
        "Recall the memories of %(namespace)s that best match a query, and assemble a "
        "token-budgeted prompt context from its memories, summaries and recent conversation "
        "turns."
    ),
    Permission.SUBJECTS_ADMIN: _(
        "Export everything %(namespace)s holds about a subject, erase a subject for good, and "
        "read the audit log of %(namespace)s."
    ),
    Permission.SUBJECTS_PORTAL: _(
        "Send the people %(namespace)s remembers to its privacy portal, by a link that works "
        "once, for a few minutes."
    ),
    Permission.WEBHOOKS_ADMIN: _(
        "Manage the webhook endpoints of %(namespace)s: where its signed events are sent."
    ),
}
# The API calls each permission opens ({slug}: the namespace's).
PERMISSION_ENDPOINTS: dict[str, list[str]] = {
    Permission.MEMORIES_READ: [
        "GET /api/v1/namespaces/{slug}/memories",
        "GET /api/v1/namespaces/{slug}/memories/<id>",
        "GET /api/v1/namespaces/{slug}/memories/<id>/versions",
        "GET /api/v1/jobs/<id>",
    ],
    Permission.MEMORIES_WRITE: [
        "POST /api/v1/namespaces/{slug}/memories",
        "PATCH /api/v1/namespaces/{slug}/memories/<id>",
        "DELETE /api/v1/namespaces/{slug}/memories/<id>",
        "POST /api/v1/namespaces/{slug}/messages",
        "POST /api/v1/namespaces/{slug}/documents",
        "GET /api/v1/jobs/<id>",
    ],
    Permission.CONTEXT: [
        "POST /api/v1/namespaces/{slug}/recall",
        "POST /api/v1/namespaces/{slug}/context",
    ],
    Permission.SUBJECTS_ADMIN: [
        "GET /api/v1/namespaces/{slug}/subjects/<external_id>/export",
        "POST /api/v1/namespaces/{slug}/subjects/<external_id>/erase",
        "GET /api/v1/namespaces/{slug}/audit",
        "POST /api/v1/namespaces/{slug}/subjects/<external_id>/portal-sessions",
    ],
    Permission.SUBJECTS_PORTAL: [
        "POST /api/v1/namespaces/{slug}/subjects/<external_id>/portal-sessions",
    ],
    Permission.WEBHOOKS_ADMIN: [
        "GET /api/v1/namespaces/{slug}/webhooks",
        "POST /api/v1/namespaces/{slug}/webhooks",
        "DELETE /api/v1/namespaces/{slug}/webhooks/<id>",
        "POST /api/v1/namespaces/{slug}/webhooks/<id>/rotate-secret",
        "POST /api/v1/namespaces/{slug}/webhooks/<id>/test",
        "GET /api/v1/namespaces/{slug}/webhooks/<id>/deliveries",
        "POST /api/v1/namespaces/{slug}/webhooks/<id>/deliveries/<delivery_id>/redeliver",
    ],
}
STATE_LABELS: dict[str, StrPromise] = {
    "active": _("Active"),
    "expired": _("Expired"),
    "revoked": _("Revoked"),
}
PAGE_SIZES = (25, 50, 100)


def start_of_day(day: datetime.date) -> datetime.datetime:
    """00:00 of `day` in the viewer's time zone: the moment a key set to expire on `day`
    stops working."""
    return timezone.make_aware(
        datetime.datetime.combine(day, datetime.time.min), timezone.get_current_timezone()
    )


def _clean_future_day(day: datetime.date | None) -> datetime.date | None:
    if day is not None and day <= timezone.localdate():
        raise forms.ValidationError(
            _("Choose a day after today: the key stops working at 00:00 on that day.")
        )
    return day


EXPIRY_HELP = _("The key stops working at 00:00 on this day, in your time zone (%(zone)s).")


def _expiry_field(help_text: StrPromise) -> forms.DateField:
    return forms.DateField(
        label=_("Expires on"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
        help_text=help_text,
    )


class NamespaceChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        return f"{obj.name} ({obj.slug})"


class ApiKeyCreateForm(forms.Form):
    """A new key: a name, one or more of the user's own namespaces, one or more
    permissions, and an optional expiry day. `once` is the form's one-time token (the view
    refuses to create a second key from a resubmitted form)."""

    name = forms.CharField(
        label=_("Name"),
        max_length=200,
        help_text=_("Who uses it, so that you recognise it later: e.g. “support chatbot”."),
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )
    namespaces = NamespaceChoiceField(
        label=_("Namespaces"),
        queryset=Namespace.objects.none(),
        to_field_name="slug",
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": _("Choose at least one namespace.")},
    )
    permissions = forms.MultipleChoiceField(
        label=_("Permissions"),
        choices=[(value, PERMISSION_LABELS[value]) for value in Permission.values],
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": _("Choose at least one permission.")},
    )
    expires_on = _expiry_field(
        _(
            "Optional. The key stops working at 00:00 on this day, in your time zone "
            "(%(zone)s). Empty: it never expires."
        )
    )
    default_subject = forms.CharField(
        label=_("Default subject (MCP)"),
        max_length=255,
        required=False,
        help_text=_(
            "Optional. The person an agent's MCP tools act on when a call names nobody: for "
            "a key that serves one user."
        ),
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )
    once = forms.CharField(widget=forms.HiddenInput, max_length=64)

    def __init__(self, *args: Any, namespaces: QuerySet[Namespace], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["namespaces"]
        assert isinstance(field, forms.ModelMultipleChoiceField)
        field.queryset = namespaces
        _zone_in_help(self.fields["expires_on"])

    def clean_expires_on(self) -> datetime.date | None:
        return _clean_future_day(self.cleaned_data.get("expires_on"))

    def expires_at(self) -> datetime.datetime | None:
        day = self.cleaned_data.get("expires_on")
        return start_of_day(day) if day else None

    def permission_options(self) -> list[tuple[BoundWidget, StrPromise]]:
        """Each permission's checkbox with its description, for the template."""
        return [(option, PERMISSION_HELP[option.data["value"]]) for option in self["permissions"]]


class ApiKeyExpiryForm(forms.Form):
    """A new expiry day (`set`), or none (`clear`)."""

    action = forms.ChoiceField(choices=[("set", "set"), ("clear", "clear")])
    expires_on = _expiry_field(EXPIRY_HELP)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _zone_in_help(self.fields["expires_on"])

    def clean_expires_on(self) -> datetime.date | None:
        return _clean_future_day(self.cleaned_data.get("expires_on"))

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("action") == "set" and not data.get("expires_on") and not self.errors:
            self.add_error("expires_on", _("Choose the day the key stops working."))
        return data

    def expires_at(self) -> datetime.datetime | None:
        day = self.cleaned_data.get("expires_on")
        if self.cleaned_data.get("action") == "clear" or not day:
            return None
        return start_of_day(day)


class ApiKeyFilterForm(forms.Form):
    """The list's filters, from the query string: state, one of the user's namespaces, and
    the page size."""

    state = forms.ChoiceField(
        label=_("State"),
        required=False,
        choices=[("", _("Any")), *((state, STATE_LABELS[state]) for state in API_KEY_STATES)],
    )
    namespace = forms.ChoiceField(label=_("Namespace"), required=False)
    size = forms.TypedChoiceField(
        label=_("Per page"),
        required=False,
        coerce=int,
        empty_value=None,
        choices=[(size, size) for size in PAGE_SIZES],
    )

    def __init__(self, *args: Any, namespaces: QuerySet[Namespace], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["namespace"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [("", _("Any of yours"))] + [
            (namespace.slug, f"{namespace.name} ({namespace.slug})") for namespace in namespaces
        ]


def _zone_in_help(field: forms.Field) -> None:
    field.help_text = str(field.help_text) % {"zone": timezone.get_current_timezone_name()}
