"""The memory pages' forms: search, edit, bulk change and purge."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from apps.memories.models import Kind
from apps.memories.services import BULK_ACTIONS

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
