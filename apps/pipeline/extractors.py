"""Which extractor a namespace runs, the `both` extractor, and the rules as the fallback.

A namespace runs its own choice (`Namespace.extractor`) or the server's
MEMORYHUB_EXTRACTOR: the rules ("offline"), the LLM, or both: the rules first, and the LLM
only on the turns that carry a change or doubt cue the rules did not resolve. In `both`,
what the rules resolved stays theirs: the LLM's facts, endings and disputes of a slot group
the rules read in the same batch are dropped.

When the LLM cannot answer (down, slow, an answer refused whole, the breaker open) the job
is not failed: the rules extract, and the job records why (`extract_with_fallback`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.conf import settings

from apps.facts.doubt import cued_anywhere
from apps.facts.rules import slot_group
from apps.namespaces.models import Namespace
from apps.pipeline import extraction, llm_health
from apps.pipeline.llm import LLM_ERRORS, LlmClient, LlmExtractor, LlmOutputError

# Words that say something changed, beyond the health cues of `doubt.cued`.
_CHANGE = re.compile(
    r"\b(?:actually|scratch|mixed\s+(?:it|them)\s+up|i\s+meant|correction|no\s+longer"
    r"|not\s+anymore|any\s*more|used\s+to|moved|moving|switch(?:ed|ing)?|chang(?:ed|ing)"
    r"|quit|stopped|left|instead|wrong|turns?\s+out|outgr[eo]wn)\b"
    r"|其实|搞错|记错|说错|不对|不再|不是|已经不|以前|搬|换|辞职|离职|改成|停了|戒",
    re.IGNORECASE,
)


def extractor_mode(namespace: Namespace | None) -> str:
    """ "offline", "llm" or "both": the namespace's own choice, else the server's."""
    if namespace is not None and namespace.extractor:
        return namespace.extractor
    return str(settings.MEMORYHUB_EXTRACTOR)


def get_extractor(namespace: Namespace | None = None) -> extraction.Extractor:
    mode = extractor_mode(namespace)
    if mode == "offline" or not settings.MEMORYHUB_LLM_URL:
        return extraction.OfflineExtractor()
    llm = LlmExtractor(LlmClient.from_settings())
    return BothExtractor(llm) if mode == "both" else llm


def _changed(text: str) -> bool:
    return bool(_CHANGE.search(text)) or cued_anywhere(text)


def unresolved_turns(turns: list[extraction.Turn], rules: list[extraction.Candidate]) -> set[int]:
    """The positions of the user turns with a change or doubt cue that the rules resolved
    to no ending, correction or new value of their own."""
    resolved = {
        c.position for c in rules if c.kind == "semantic" and (c.ends or c.replace is not None)
    }
    return {
        turn.position
        for turn in extraction.extractable_turns(turns)
        if turn.position not in resolved and _changed(turn.content)
    }


def _groups(candidate: extraction.Candidate) -> set[str]:
    groups = {slot_group(candidate.slot)} if candidate.slot else set()
    groups |= {e.group or slot_group(e.slot) for e in candidate.ends if e.group or e.slot}
    return groups | {d.group for d in candidate.disputes if d.group}


class BothExtractor:
    """The rules, then the LLM on the turns the rules left unresolved."""

    name = "both"

    def __init__(self, llm: LlmExtractor) -> None:
        self.llm = llm

    def extract(self, turns: list[extraction.Turn]) -> list[extraction.Candidate]:
        rules = extraction.OfflineExtractor().extract(turns)
        unresolved = unresolved_turns(turns, rules)
        if not unresolved:
            return rules
        theirs = set().union(*(_groups(c) for c in rules if c.kind == "semantic"))
        added = [c for c in self.llm.facts(turns, only=unresolved) if not _groups(c) & theirs]
        return rules + added


@dataclass(frozen=True)
class Extracted:
    candidates: list[extraction.Candidate]
    extractor: str  # the one that extracted: "offline", "llm" or "both"
    model: str = ""  # the LLM's, when it answered
    fallback: str = ""  # why the rules stood in for the LLM (content-free), if they did
    refused_whole: bool = False  # the LLM answered, and its answer was refused whole


def extract_with_fallback(
    extractor: extraction.Extractor, turns: list[extraction.Turn]
) -> Extracted:
    """The turns' candidates; the rules' when the LLM cannot answer."""
    try:
        candidates = extractor.extract(turns)
    except LLM_ERRORS as error:
        llm_health.fallback_used()
        return Extracted(
            extraction.OfflineExtractor().extract(turns),
            extractor="offline",
            fallback=f"{type(error).__name__}: {error}"[:300],
            refused_whole=isinstance(error, LlmOutputError),
        )
    llm = getattr(extractor, "llm", extractor)
    model = llm.client.model if isinstance(llm, LlmExtractor) else ""
    return Extracted(candidates, extractor=extractor.name, model=model)
