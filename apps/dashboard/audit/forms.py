from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _


class VerifyForm(forms.Form):
    """ "Verify now": by default the events since the last intact walk; or the whole chain."""

    full = forms.BooleanField(
        label=_("Re-check the whole chain from its first event (slower)"), required=False
    )
