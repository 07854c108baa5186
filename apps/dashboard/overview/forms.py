from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _


class NamespaceCreateForm(forms.Form):
    slug = forms.SlugField(label=_("Slug"), max_length=64)
    name = forms.CharField(label=_("Name"), max_length=200, required=False)
