from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _


class EraseForm(forms.Form):
    confirmation = forms.CharField(
        label=_("Type the subject's id to confirm"),
        max_length=255,
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )
