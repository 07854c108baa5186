"""The quality pages' forms. They check shape; the services check meaning."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from apps.evaluation.models import EvalSet, Variant
from apps.recall.config import RecallConfig
from apps.recall.ranking import Weights

MAX_UPLOAD_BYTES = 20 * 1024 * 1024

WEIGHT_LABELS = {
    "keyword": _("Keyword (BM25) weight"),
    "vector": _("Vector similarity weight"),
    "context": _("Neighbour-context similarity weight"),
    "session_boost": _("Same-session boost"),
    "window_boost": _("Nearby-turn boost"),
    "speaker_boost": _("Named-speaker boost"),
    "recency": _("Recency weight"),
    "importance": _("Importance weight"),
    "bm25_k1": _("BM25 k1"),
    "bm25_b": _("BM25 b"),
    "neighbour_tokens": _("Weight of a neighbour's words in BM25"),
}


class ImportForm(forms.Form):
    FORMATS = [("jsonl", _("JSON lines (MemoryHub)")), ("locomo", _("LoCoMo conversation"))]

    name = forms.CharField(label=_("Name"), max_length=120)
    format = forms.ChoiceField(label=_("Format"), choices=FORMATS)
    file = forms.FileField(label=_("File"))
    subject = forms.CharField(
        label=_("Subject for a LoCoMo conversation (its external id)"),
        max_length=255,
        required=False,
        help_text=_("The conversation is sent for this subject, as an app would send it."),
    )

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        if upload.size > MAX_UPLOAD_BYTES:
            raise forms.ValidationError(_("The file is larger than 20 MB."))
        return upload

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("format") == "locomo" and not (data.get("subject") or "").strip():
            self.add_error("subject", _("A LoCoMo conversation needs a subject."))
        return data


class FeedbackSetForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=120)
    days = forms.IntegerField(
        label=_("Recalls of the last … days"), min_value=1, max_value=365, initial=30
    )


class EmptySetForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=120)


class RunForm(forms.Form):
    variant = forms.ModelChoiceField(
        label=_("Recall configuration"),
        queryset=Variant.objects.none(),
        required=False,
        empty_label=_("The namespace's configuration"),
    )
    token_budget = forms.IntegerField(
        label=_("Token budget for context assembly"),
        min_value=100,
        max_value=1_000_000,
        initial=2000,
    )

    def __init__(self, *args: Any, namespace: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["variant"].queryset = Variant.objects.filter(namespace=namespace)  # type: ignore[attr-defined]


class VariantForm(forms.Form):
    """Every knob of a recall configuration; the initial values are the namespace's."""

    name = forms.CharField(label=_("Name"), max_length=80)
    k = forms.IntegerField(label=_("Results (k)"), min_value=1, max_value=100)
    vector_candidates = forms.IntegerField(label=_("Vector candidates"), min_value=1, max_value=200)
    keyword_candidates = forms.IntegerField(
        label=_("Keyword candidates"), min_value=1, max_value=500
    )
    mmr = forms.FloatField(
        label=_("Diversity (MMR λ, blank: off)"), min_value=0, max_value=1, required=False
    )
    half_life_days = forms.FloatField(
        label=_("Recency half-life in days (blank: the namespace's)"),
        min_value=0,
        max_value=36500,
        required=False,
    )
    neighbour_context = forms.BooleanField(label=_("Neighbouring turns count"), required=False)
    min_relevance = forms.FloatField(
        label=_("Abstention: least relevance served (blank: off)"),
        min_value=0,
        max_value=1,
        required=False,
    )

    rerank = forms.BooleanField(
        label=_("Rerank with the configured cross-encoder"),
        required=False,
        help_text=_("Only where the server has a rerank endpoint (MEMORYHUB_RERANK_URL)."),
    )
    rerank_candidates = forms.IntegerField(
        label=_("Candidates to rerank"), min_value=1, max_value=100
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for item in fields(Weights):
            self.fields[f"w_{item.name}"] = forms.FloatField(
                label=WEIGHT_LABELS.get(item.name, item.name), min_value=0, max_value=10
            )

    @staticmethod
    def initial_from(config: RecallConfig, name: str = "") -> dict[str, Any]:
        data = config.full()
        initial = {key: value for key, value in data.items() if key != "weights"}
        initial.update({f"w_{key}": value for key, value in data["weights"].items()})
        initial["name"] = name
        return initial

    def config(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "weights": {item.name: data[f"w_{item.name}"] for item in fields(Weights)},
            **{
                item.name: data[item.name]
                for item in fields(RecallConfig)
                if item.name != "weights"
            },
        }

    def weight_fields(self) -> list[forms.BoundField]:
        return [self[f"w_{item.name}"] for item in fields(Weights)]


class CaseFromRecallForm(forms.Form):
    eval_set = forms.ModelChoiceField(label=_("Eval set"), queryset=EvalSet.objects.none())
    expected = forms.MultipleChoiceField(
        label=_("Memories that answer it (none: it should find nothing)"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )
    category = forms.CharField(label=_("Category (optional)"), max_length=40, required=False)

    def __init__(
        self, *args: Any, namespace: Any, served: list[tuple[str, str]], **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["eval_set"].queryset = EvalSet.objects.filter(namespace=namespace)  # type: ignore[attr-defined]
        self.fields["expected"].choices = served  # type: ignore[attr-defined]
