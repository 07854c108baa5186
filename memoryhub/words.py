"""Words the product writes into its own records and answers (status words, roles,
strategies, placements, sections, reasons, score components), with what a reader sees for
each. Records and API answers keep the key; pages and form choices show the label."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

WORDS = {
    # /readyz and the dashboard's status panel
    "ok": pgettext_lazy("health", "ok"),
    "in-process": _("in this process (no broker)"),
    "error": pgettext_lazy("health", "error"),
    # who said a conversation turn
    "user": pgettext_lazy("turn", "user"),
    "assistant": pgettext_lazy("turn", "assistant"),
    "system": pgettext_lazy("turn", "system"),
    "tool": pgettext_lazy("turn", "tool"),
    # context assembly: strategies, placements, sections and why an item was dropped
    "buffer": _("buffer"),
    "window": _("window"),
    "summary": _("summary"),
    "summary_buffer": _("summary + buffer"),
    "edges": _("strongest at both edges"),
    "ranked": _("best first"),
    "memories": _("memories"),
    "shared": _("shared memories"),
    "history": _("history"),
    "query": _("query"),
    "instructions": _("instructions"),
    "budget": _("over the token budget"),
    "section_cap": _("over the section's cap"),
    "summarized": _("in the summary"),
    "limit": _("over the limit"),
    # recall's score components
    "vector": _("meaning"),
    "context": _("meaning in context"),
    "keyword": _("keywords"),
    "boosts": _("boosts"),
    "recency": _("recency"),
    "importance": _("importance"),
    "final": _("score"),
    "rerank": _("re-ranked"),
    "relevance": _("relevance"),
    # who recalled, and for what
    "api_key": _("app key"),
    "purpose:recall": pgettext_lazy("purpose", "recall"),
    "purpose:context": _("context assembly"),
    "purpose:playground": _("playground"),
    "purpose:eval": _("quality run"),
    # what a quality run ran with when no variant was chosen (a variant cannot take the name)
    "run:namespace configuration": _("namespace configuration"),
    # why a fact an LLM proposed was refused (apps/pipeline/grounding.py)
    "refused:ungrounded": _("evidence not in the turn"),
    "refused:value_not_in_evidence": _("value not in the evidence"),
    "refused:no_value": _("no value named"),
    "refused:off_vocabulary": _("outside the vocabularies"),
    "refused:not_stated": _("not stated of the user"),
    "refused:ending_ungrounded": _("ending without evidence"),
}
