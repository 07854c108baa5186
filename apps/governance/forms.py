from __future__ import annotations

import re
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from apps.memories.models import Kind
from apps.memories.services import BULK_ACTIONS
from apps.namespaces.models import MembershipRole, Namespace
from apps.namespaces.origins import normalize_origin

REASON = forms.CharField(
    label=_("Reason"), max_length=200, widget=forms.TextInput(attrs={"autocomplete": "off"})
)


class SearchForm(forms.Form):
    q = forms.CharField(label=_("Search memories"), max_length=2000)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Too long is said (the field's error), never cut short by the browser.
        self.fields["q"].widget.attrs.pop("maxlength", None)


class MemoryEditForm(forms.Form):
    """A person's edit of a memory: new content makes a new version; the reason is kept."""

    content = forms.CharField(label=_("Content"), widget=forms.Textarea(attrs={"rows": 4}))
    kind = forms.ChoiceField(label=_("Kind"), choices=Kind.choices)
    tags = forms.CharField(
        label=_("Tags"), required=False, help_text=_("Separated by commas."), max_length=2000
    )
    importance = forms.FloatField(label=_("Importance"), min_value=0, max_value=1)
    reason = REASON

    def clean_tags(self) -> list[str]:
        tags = [tag.strip() for tag in self.cleaned_data["tags"].split(",") if tag.strip()]
        if any(len(tag) > 64 for tag in tags):
            raise forms.ValidationError(_("A tag has at most 64 characters."))
        return sorted(set(tags))


class BulkForm(forms.Form):
    """Rows chosen in the explorer (or every row the filters match), and what to do."""

    action = forms.ChoiceField(label=_("Action"), choices=[(a, a) for a in BULK_ACTIONS])
    select_all = forms.BooleanField(required=False)
    tag = forms.CharField(label=_("Tag to add"), required=False, max_length=64)
    reason = forms.CharField(label=_("Reason"), required=False, max_length=200)
    confirm = forms.BooleanField(required=False)


class PurgeForm(forms.Form):
    reason = REASON
    confirmation = forms.CharField(
        label=_("Type the namespace's slug to confirm"),
        max_length=64,
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )
    expected = forms.IntegerField(widget=forms.HiddenInput, min_value=0)


class EraseForm(forms.Form):
    confirmation = forms.CharField(
        label=_("Type the subject's id to confirm"),
        max_length=255,
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )


SETTINGS_FIELDS = [
    "name",
    "description",
    "pii_policy",
    "retention_days",
    "max_memories_per_subject",
    "recency_half_life_days",
    "summarize_after_days",
    "keep_turns_when_paused",
    "review_below",
    "portal_return_origins",
    "portal_frame_origins",
    "erasure_grace_days",
]


class OriginsField(forms.CharField):
    """Web origins typed in one line, separated by spaces or commas; each normalised
    (`https://app.example.com`), anything else refused by name."""

    def __init__(self, **kwargs: Any) -> None:
        for name in ("base_field", "max_length", "delimiter", "size"):  # ArrayField's
            kwargs.pop(name, None)
        kwargs["required"] = False
        super().__init__(**kwargs)

    def prepare_value(self, value: object) -> object:
        if isinstance(value, list | tuple):
            return ", ".join(str(v) for v in value)
        return value

    def to_python(self, value: object) -> list[str]:  # type: ignore[override]
        text = super().to_python(value) or ""
        origins: list[str] = []
        for part in re.split(r"[\s,]+", text):
            if not part:
                continue
            try:
                origin = normalize_origin(part)
            except ValueError:
                raise forms.ValidationError(
                    _("“%(value)s” is not an origin like https://app.example.com."),
                    params={"value": part[:100]},
                ) from None
            if origin not in origins:
                origins.append(origin)
        if len(origins) > 20:
            raise forms.ValidationError(_("At most 20 origins."))
        return origins


class NamespaceSettingsForm(forms.ModelForm):
    """A namespace's policies. Posted once to preview what the change would do, then again
    (with `confirm`) to save it."""

    class Meta:
        model = Namespace
        fields = SETTINGS_FIELDS
        labels = {
            "name": _("Name"),
            "description": _("Description"),
            "pii_policy": _("PII policy"),
            "retention_days": _("Retention (days)"),
            "max_memories_per_subject": _("Cap per subject (memories)"),
            "recency_half_life_days": _("Recency half-life (days)"),
            "summarize_after_days": _("Summarize episodes after (days)"),
            "keep_turns_when_paused": _("Keep turns when capture is paused"),
            "review_below": _("Review threshold (confidence)"),
            "portal_return_origins": _("Portal: apps it may return to"),
            "portal_frame_origins": _("Portal: sites that may embed it"),
            "erasure_grace_days": _("Portal: days before an erasure runs"),
        }
        field_classes = {
            "portal_return_origins": OriginsField,
            "portal_frame_origins": OriginsField,
        }
        help_texts = {
            "pii_policy": _("What happens to writes that contain personal data."),
            "retention_days": _("Archive memories older than this (empty: keep)."),
            "max_memories_per_subject": _(
                "Archive a subject's least valuable memories beyond this."
            ),
            "recency_half_life_days": _(
                "Recall favours recent memories: weight halves every N days."
            ),
            "summarize_after_days": _("Replace old episodic memories by a summary (empty: never)."),
            "keep_turns_when_paused": _("Keep a paused subject's turns for the session buffer."),
            "review_below": _(
                "Facts less certain than this wait for review (empty: the server's default)."
            ),
            "portal_return_origins": _(
                "Origins a portal link's return_url may point to, such as "
                "https://app.example.com (separate them with spaces)."
            ),
            "portal_frame_origins": _(
                "Origins allowed to show the portal in a frame (empty: it is never framed)."
            ),
            "erasure_grace_days": _(
                "An erasure asked for in the portal waits this many days and can be cancelled "
                "until then (0: at once; at most 30)."
            ),
        }
        widgets = {"description": forms.Textarea(attrs={"rows": 4})}

    def changes(self, namespace: Namespace) -> dict[str, object]:
        """The fields whose value differs from the namespace's."""
        return {
            name: value
            for name, value in self.cleaned_data.items()
            if getattr(namespace, name) != value
        }


class NamespaceCreateForm(forms.Form):
    slug = forms.SlugField(label=_("Slug"), max_length=64)
    name = forms.CharField(label=_("Name"), max_length=200, required=False)


class MemberAddForm(forms.Form):
    """An existing user, by name, with a role (the least, unless chosen)."""

    username = forms.CharField(label=_("User name"), max_length=150)
    role = forms.ChoiceField(
        label=_("Role"), choices=MembershipRole.choices, initial=MembershipRole.VIEWER
    )


class MemberInviteForm(forms.Form):
    """A new user, invited with a one-time link to set their password."""

    username = forms.CharField(
        label=_("New user's name"),
        max_length=150,
        help_text=_("Letters, digits and @ . + - _ only."),
    )
    email = forms.EmailField(label=_("Email"), required=False)
    role = forms.ChoiceField(
        label=_("Role"), choices=MembershipRole.choices, initial=MembershipRole.VIEWER
    )
