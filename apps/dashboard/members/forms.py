from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from apps.namespaces.models import MembershipRole


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
