from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from django import forms
from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from apps.context.assembly import PLACEMENTS
from apps.context.services import STRATEGIES
from apps.recall.time_travel import as_of_parse
from apps.tokens.tokenizers import model_table
from memoryhub.exceptions import ApplicationError
from memoryhub.words import WORDS


class PlaygroundForm(forms.Form):
    """The playground's inputs: posted, or loaded from a saved set-up's link."""

    namespace = forms.ChoiceField(
        label=_("Namespace"),
    )
    subject = forms.CharField(label=_("Subject"), max_length=255, required=False)
    session = forms.CharField(label=_("Session"), max_length=200, required=False)
    query = forms.CharField(max_length=4000, widget=forms.Textarea(attrs={"rows": 2}))
    model = forms.ChoiceField(
        label=_("Model"),
    )
    max_context_tokens = forms.IntegerField(min_value=1, required=False, label=_("Context window"))
    reserve_tokens = forms.IntegerField(
        min_value=0, initial=1024, label=_("Reserve for the answer")
    )
    strategy = forms.ChoiceField(
        label=_("Strategy"), choices=[(s, WORDS[s]) for s in STRATEGIES], initial="summary_buffer"
    )
    system_prompt = forms.CharField(
        max_length=32_000, required=False, widget=forms.Textarea(attrs={"rows": 3})
    )
    recall_k = forms.IntegerField(
        min_value=1, max_value=100, initial=20, label=_("Memories to recall")
    )
    window = forms.IntegerField(min_value=0, max_value=1000, initial=10, label=_("Window (turns)"))
    buffer_tokens = forms.IntegerField(min_value=0, initial=2000, label=_("Buffer (tokens)"))
    placement = forms.ChoiceField(
        label=_("Placement"), choices=[(p, WORDS[p]) for p in PLACEMENTS], initial="edges"
    )
    # Time travel: the prompt as the app would have been told it then (the server's time
    # zone, UTC), compared with now.
    as_of = forms.DateTimeField(
        required=False,
        label=_("As of (UTC)"),
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
    )
    include_history = forms.BooleanField(
        required=False, label=_("Include history (marked superseded)")
    )
    compare = forms.BooleanField(required=False, label=_("Compare the four strategies"))

    def __init__(self, *args: Any, namespaces: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # self.fields holds copies of the ChoiceFields declared above.
        cast(forms.ChoiceField, self.fields["namespace"]).choices = [
            (slug, slug) for slug in namespaces
        ]
        models = sorted(model_table())
        cast(forms.ChoiceField, self.fields["model"]).choices = [(name, name) for name in models]
        default = settings.MEMORYHUB_DEFAULT_MODEL
        self.fields["model"].initial = default if default in models else models[0]

    def clean_as_of(self) -> datetime | None:
        """The moment asked, refused by the API's rule (`time_travel.as_of_parse`)."""
        moment = self.cleaned_data.get("as_of")
        if moment is None:
            return None
        try:
            return as_of_parse(moment.isoformat(), now=timezone.now())
        except ApplicationError as error:
            raise forms.ValidationError(error.localized) from error
