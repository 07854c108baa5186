"""The portal's forms."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _


class TopicForm(forms.Form):
    q = forms.CharField(label=_("Words or a topic"), max_length=200, strip=True)


class CorrectForm(forms.Form):
    content = forms.CharField(
        label=_("What it should say"),
        widget=forms.Textarea(attrs={"rows": 3}),
        strip=True,
    )

    def clean_content(self) -> str:
        content: str = self.cleaned_data["content"]
        if len(content.encode()) > settings.MEMORYHUB_MAX_CONTENT_BYTES:
            raise forms.ValidationError(_("That is too long."))
        return content


class EraseForm(forms.Form):
    confirmation = forms.CharField(label=_("Type the words shown to confirm"), max_length=100)

    @staticmethod
    def expected() -> str:
        return str(_("erase everything"))

    def clean_confirmation(self) -> str:
        typed: str = self.cleaned_data["confirmation"]
        if typed.strip().casefold() != self.expected().casefold():
            raise forms.ValidationError(_("Type the words exactly as shown."))
        return typed
