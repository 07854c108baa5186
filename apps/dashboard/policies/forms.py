"""A namespace's settings form."""

from __future__ import annotations

import re
from typing import Any, cast

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from apps.namespaces.models import Extractor, Namespace
from apps.namespaces.origins import normalize_origin

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
    "extractor",
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
            "extractor": _("Extractor"),
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
            "extractor": _(
                "What turns new conversations into facts: the rules, an LLM (its facts held "
                "to the rules' checks, the rules standing in when it cannot answer), or both "
                "(the LLM only on changes the rules leave unresolved). Stored memories stay "
                "as they are."
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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        default = Extractor(settings.MEMORYHUB_EXTRACTOR).label
        field = cast(forms.ChoiceField, self.fields["extractor"])
        field.choices = [
            ("", _("Server default (%(extractor)s)") % {"extractor": default}),
            *Extractor.choices,
        ]

    def clean_extractor(self) -> str:
        """The LLM only where the server has an endpoint; a choice already saved stands."""
        extractor: str = self.cleaned_data["extractor"]
        wants_llm = extractor in (Extractor.LLM, Extractor.BOTH)
        if wants_llm and extractor != self.instance.extractor and not settings.MEMORYHUB_LLM_URL:
            raise forms.ValidationError(
                _(
                    "This server has no LLM endpoint (MEMORYHUB_LLM_URL is not set): "
                    "choose the rules or the server default."
                ),
                code="no_llm",
            )
        return extractor

    def changes(self, namespace: Namespace) -> dict[str, object]:
        """The fields whose value differs from the namespace's."""
        return {
            name: value
            for name, value in self.cleaned_data.items()
            if getattr(namespace, name) != value
        }
