from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from apps.webhooks.catalog import EVENT_TYPES


class EndpointCreateForm(forms.Form):
    """A new endpoint: where, which events, and whether memories' text goes with them."""

    url = forms.CharField(
        label=_("URL"),
        max_length=2000,
        help_text=_("An https address on the public internet."),
        widget=forms.URLInput(attrs={"placeholder": "https://hooks.example.com/memoryhub"}),
    )
    events = forms.MultipleChoiceField(
        label=_("Events"),
        choices=[(event, event) for event in EVENT_TYPES],
        widget=forms.CheckboxSelectMultiple,
        initial=list(EVENT_TYPES),
    )
    include_content = forms.BooleanField(
        label=_("Include the memories' text"),
        required=False,
        help_text=_("Off by default: events carry ids, kinds, times and counts only."),
    )


class RedeliverSinceForm(forms.Form):
    """Every failed delivery of the endpoint since a time, sent again."""

    since = forms.DateTimeField(
        label=_("Failed since"),
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        input_formats=["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S"],
    )
