"""The LLM extractor and summarizer, over any OpenAI-compatible chat-completions endpoint.

The endpoint is the operator's (MEMORYHUB_LLM_URL: OpenAI, Ollama, vLLM, ...); nothing else is
called. Output is JSON, validated strictly: an answer that is not exactly the expected shape
is refused as a whole (`LlmOutputError`) and nothing of it is stored. Timeouts, connection
errors and 5xx/429 answers are `LlmUnavailable`, which the job retries a bounded number of
times. Neither exception message carries conversation text.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx

from apps.facts.doubt import Dispute
from apps.facts.rules import Ending, normal_slot, slot_group
from apps.pipeline import extraction, llm_health
from apps.pipeline.grounding import grounded
from memoryhub.json_input import JsonInputError, json_loads

KINDS = {"semantic", "procedural"}
CATEGORIES = {
    "fact", "preference", "plan", "event", "health", "relationship", "correction", "instruction"
}  # fmt: skip
MAX_ENDS = 10
MAX_MEMORIES = 50
MAX_CONTENT_CHARS = 1000
T = TypeVar("T")

EXTRACT_PROMPT = """You extract long-term memories about the user from a conversation.
Return only JSON: {"memories": [{"content": str, "kind": "semantic" | "procedural",
"category": "fact" | "preference" | "plan" | "event" | "health" | "relationship"
| "correction" | "instruction", "confidence": number 0..1, "importance": number 0..1,
"slot": str or null, "value": str or null, "evidence": str, "turn": int,
"ends": [{"slot": str or null, "value": str or null}],
"disputes": [{"slot": str or null, "value": str or null, "previous": bool}],
"occurred_at": ISO 8601 or null, "valid_from": ISO 8601 or null,
"expires_at": ISO 8601 or null}]}.
- Only what the user states about themselves or their people, or asks to be remembered;
  not the assistant's words, not greetings, not questions.
- One atomic fact per memory: "I live in Hangzhou and work as a chef" is two.
- Write each as one short third-person sentence ("The user lives in Shanghai.", "The
  user's sister lives in Paris."), without time words: put times in the date fields.
- Write each in the language of the turn it comes from, never translated: a Chinese turn
  gives a Chinese fact ("用户住在深圳。"), an English turn an English one.
- "slot" names what the fact is about. One value at a time: home, job, employer, name,
  diet, marital, age, origin, study, "favourite <thing>". One of several: "allergy:<what>",
  "pet:<name>", "plan:<what>", "event:<what>", "condition:<what>", "medication:<what>",
  "opinion:<what>", "language:<what>". Another person's facts: "<relation>|<slot>"
  ("sister|home"), never the user's own slots. null when none fits.
- "ends" lists the current facts this statement makes untrue: a negation or a change
  ("I'm not allergic to peanuts" ends {"slot": "allergy:peanuts", "value": null}; "I quit
  nursing" ends {"slot": "job", "value": "nursing"}). A pure negation has content "" and
  only "ends".
- "disputes" lists the stored facts a turn puts in doubt without saying what holds instead
  ("my doctor took me off the metformin" disputes {"slot": "medication", "value":
  "metformin", "previous": false}; "the allergist thinks I've outgrown it"; "that's my
  brother, not me" disputes {"slot": null, "value": null, "previous": true}: the facts of
  the user's previous statement). Never guess the new value: a person decides. Such a
  memory has content "" and only "disputes".
- "expires_at": when a plan lapses (after its date). Use a lower confidence for hedged
  statements ("I think I might...").
- "evidence" is the words of that turn that state it, copied exactly; "value" is what the
  slot holds, as the turn says it ("peanuts", "Shanghai", "nurse"), or null.
- Only what a turn states plainly about the speaker: not a place visited, a drug read
  about, a wish, a joke, a question or somebody else's facts (those take "<relation>|").
- "turn" is the index of the turn it comes from. An empty list is a good answer when
  nothing is worth remembering."""

SUMMARY_PROMPT = """Summarize this conversation for a future assistant in at most {words}
words: what the user wants, facts they stated, decisions made, open questions. Plain text."""


# The answer's JSON schema, sent with each extraction: where the endpoint constrains its
# output by it, the model cannot wander off the shape. maxItems and maxLength bound what a
# small model that loops would write; `max_tokens` bounds the rest, and an answer cut short
# by it is refused whole (as any answer that parse_memories refuses).
SCHEMA_MAX_ITEMS = 20
SCHEMA_ITEMS_PER_TURN = 4
SCHEMA_MAX_CHARS = 200
_NULLABLE_TEXT = {"type": ["string", "null"], "maxLength": 100}
# A score in tenths: llama.cpp's grammars keep to an enum, not to a number's bounds.
_SCORE = {"enum": [round(tenth / 10, 1) for tenth in range(11)]}
_CHANGE = {
    "type": "object",
    "properties": {"slot": _NULLABLE_TEXT, "value": _NULLABLE_TEXT},
    "required": ["slot", "value"],
    "additionalProperties": False,
}
MEMORIES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "memories": {
            "type": "array",
            "maxItems": SCHEMA_MAX_ITEMS,
            "items": {
                "type": "object",
                "properties": {
                    "content": {"type": "string", "maxLength": SCHEMA_MAX_CHARS},
                    "kind": {"enum": sorted(KINDS)},
                    "category": {"enum": sorted(CATEGORIES)},
                    "confidence": _SCORE,
                    "importance": _SCORE,
                    "slot": _NULLABLE_TEXT,
                    "value": _NULLABLE_TEXT,
                    "evidence": {"type": "string", "maxLength": SCHEMA_MAX_CHARS},
                    "turn": {"type": "integer", "minimum": 0},
                    "ends": {"type": "array", "maxItems": MAX_ENDS, "items": _CHANGE},
                    "disputes": {
                        "type": "array",
                        "maxItems": MAX_ENDS,
                        "items": {
                            "type": "object",
                            "properties": {
                                "slot": _NULLABLE_TEXT,
                                "value": _NULLABLE_TEXT,
                                "previous": {"type": "boolean"},
                            },
                            "required": ["slot", "value", "previous"],
                            "additionalProperties": False,
                        },
                    },
                },
                "required": ["content", "kind", "category", "confidence", "importance", "slot",
                             "value", "evidence", "turn"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["memories"],
    "additionalProperties": False,
}  # fmt: skip


def memories_schema(user_turns: list[int]) -> dict[str, Any]:
    """The answer's schema for a conversation whose user turns have these indexes: a fact
    cites one of them, and there are a few facts a turn at most (a small model that loops
    stops there, not at the token limit)."""
    items = max(1, min(SCHEMA_MAX_ITEMS, SCHEMA_ITEMS_PER_TURN * len(user_turns)))
    memories = MEMORIES_SCHEMA["properties"]["memories"]
    item = memories["items"]
    turn = {"enum": user_turns} if user_turns else item["properties"]["turn"]
    item = {**item, "properties": {**item["properties"], "turn": turn}}
    memories = {**memories, "maxItems": items, "items": item}
    return {**MEMORIES_SCHEMA, "properties": {"memories": memories}}


# How each endpoint takes a schema, learnt at its first schema-constrained call: OpenAI,
# vLLM and Ollama take {"type": "json_schema", ...}; llama.cpp's server answers that with
# a 500 and takes {"type": "json_object", "schema": ...}.
_SCHEMA_FORMS: dict[str, str] = {}


def _response_format(form: str, schema: dict[str, Any]) -> dict[str, Any]:
    if form == "json_object":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}


class LlmUnavailable(Exception):
    """The endpoint is down, slow or overloaded (worth retrying)."""


class LlmOutputError(Exception):
    """The endpoint answered, but not with the expected JSON (the answer is not stored)."""


class LlmRefused(Exception):
    """The endpoint refused the request (4xx: a bad key, a model it lacks, a request too
    long): retrying the same request cannot help."""


class BreakerOpen(LlmUnavailable):
    """The endpoint failed too often lately: no call is made until its cooldown ends."""


LLM_ERRORS = (LlmUnavailable, LlmOutputError, LlmRefused)


@dataclass(frozen=True)
class LlmClient:
    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 20.0
    max_tokens: int = 2048
    retries: int = 0
    retry_delay: float = 0.5

    @classmethod
    def from_settings(cls) -> LlmClient:
        from django.conf import settings

        if not settings.MEMORYHUB_LLM_URL:
            raise LlmUnavailable("MEMORYHUB_LLM_URL is not set")
        return cls(
            base_url=settings.MEMORYHUB_LLM_URL.rstrip("/"),
            model=settings.MEMORYHUB_LLM_MODEL or "gpt-4o-mini",
            api_key=settings.MEMORYHUB_LLM_API_KEY,
            timeout=settings.MEMORYHUB_LLM_TIMEOUT,
            max_tokens=settings.MEMORYHUB_LLM_MAX_TOKENS,
            retries=settings.MEMORYHUB_LLM_RETRIES,
            retry_delay=settings.MEMORYHUB_LLM_RETRY_DELAY,
        )

    def ask(
        self,
        messages: list[dict[str, str]],
        read: Callable[[str], T],
        *,
        json_output: bool,
        schema: dict[str, Any] | None = None,
    ) -> T:
        """One question, answered and read by `read` (which raises LlmOutputError for an
        answer it refuses), through the breaker: an unavailable endpoint is asked again
        `retries` times with backoff; every outcome goes to the counters."""
        if not llm_health.breaker_allows(self.base_url):
            raise BreakerOpen("the LLM endpoint failed repeatedly; waiting out its cooldown")
        attempt = 0
        while True:
            started = time.monotonic()
            try:
                answer = read(self.complete(messages, json_output=json_output, schema=schema))
            except LlmUnavailable:
                if attempt < self.retries:
                    time.sleep(self.retry_delay * 2**attempt)
                    attempt += 1
                    continue
                llm_health.call_failed(self.base_url)
                raise
            except LlmRefused:
                llm_health.call_failed(self.base_url)
                raise
            except LlmOutputError:  # answered: a failure, but no sign the endpoint is down
                llm_health.call_failed(self.base_url, available=True)
                raise
            llm_health.call_succeeded(self.base_url, time.monotonic() - started)
            return answer

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        json_output: bool,
        schema: dict[str, Any] | None = None,
    ) -> str:
        """The assistant message's text of one chat completion: JSON under `schema` when
        one is given (in the form the endpoint takes), JSON of any shape with `json_output`."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": 0,
            "max_tokens": self.max_tokens,
        }
        if json_output:
            body["response_format"] = {"type": "json_object"}
        if schema is None:
            response = self._post(body)
        else:
            form = _SCHEMA_FORMS.get(self.base_url, "json_schema")
            response = self._post({**body, "response_format": _response_format(form, schema)})
            if form == "json_schema" and response.status_code in (400, 422, 500):
                # llama.cpp's server refuses the OpenAI form: try its own, and remember.
                retried = self._post(
                    {**body, "response_format": _response_format("json_object", schema)}
                )
                if retried.status_code == 200:
                    _SCHEMA_FORMS[self.base_url] = "json_object"
                response = retried
            elif response.status_code == 200:
                _SCHEMA_FORMS.setdefault(self.base_url, form)
        return self._content(response)

    def _post(self, body: dict[str, Any]) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        url = self.base_url + ("" if self.base_url.endswith("/v1") else "/v1") + "/chat/completions"
        try:
            return httpx.post(url, json=body, headers=headers, timeout=self.timeout)
        except httpx.TimeoutException:
            raise LlmUnavailable(f"no answer within {self.timeout:g}s") from None
        except httpx.HTTPError as error:
            raise LlmUnavailable(f"cannot reach the endpoint ({type(error).__name__})") from None

    @staticmethod
    def _content(response: httpx.Response) -> str:
        if response.status_code == 429 or response.status_code >= 500:
            raise LlmUnavailable(f"the endpoint answered HTTP {response.status_code}")
        if response.status_code != 200:
            raise LlmRefused(f"the endpoint refused the request: HTTP {response.status_code}")
        try:
            choice = json_loads(response.content)["choices"][0]
            content = choice["message"]["content"]
        except (JsonInputError, KeyError, IndexError, TypeError):
            raise LlmOutputError("the answer is not a chat completion") from None
        if not isinstance(content, str):
            raise LlmOutputError("the answer has no text content")
        if isinstance(choice, dict) and choice.get("finish_reason") == "length":
            raise LlmOutputError("the answer was cut short by max_tokens")
        return content


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise LlmOutputError(f"{name} is not a number")
    if not 0.0 <= float(value) <= 1.0:
        raise LlmOutputError(f"{name} is outside 0..1")
    return float(value)


def parse_memories(text: str, turns: list[extraction.Turn]) -> list[extraction.Candidate]:
    """Validate the extractor's JSON strictly; any deviation refuses the whole answer."""
    try:
        data = json_loads(text)
    except JsonInputError as refused:
        reason = "not JSON" if refused.code == "not_json" else str(refused)
        raise LlmOutputError(f"the answer is {reason}") from None
    if not isinstance(data, dict) or set(data) != {"memories"}:
        raise LlmOutputError('the answer is not {"memories": [...]}')
    items = data["memories"]
    if not isinstance(items, list) or len(items) > MAX_MEMORIES:
        raise LlmOutputError(f"memories is not a list of at most {MAX_MEMORIES}")
    positions = {index: turn.position for index, turn in enumerate(turns)}
    candidates = []
    for number, item in enumerate(items):
        if not isinstance(item, dict) or not REQUIRED <= set(item) <= REQUIRED | OPTIONAL:
            raise LlmOutputError(
                f"memory {number} does not have exactly the fields {sorted(REQUIRED)}"
                f" (and optionally {sorted(OPTIONAL)})"
            )
        ends = _ends(item.get("ends", []), number)
        disputes = _disputes(item.get("disputes", []), number)
        content = item["content"]
        if (
            not isinstance(content, str)
            or not (content.strip() or ends or disputes)
            or len(content) > MAX_CONTENT_CHARS
        ):
            raise LlmOutputError(f"memory {number}: content is not a short non-empty string")
        if item["kind"] not in KINDS or item["category"] not in CATEGORIES:
            raise LlmOutputError(f"memory {number}: unknown kind or category")
        slot = item["slot"]
        if slot is not None and (not isinstance(slot, str) or len(slot) > 100):
            raise LlmOutputError(f"memory {number}: slot is not a short string or null")
        turn = item["turn"]
        if isinstance(turn, bool) or not isinstance(turn, int) or turn not in positions:
            raise LlmOutputError(f"memory {number}: turn is not the index of a given turn")
        value, evidence = item.get("value"), item.get("evidence", "")
        if (value is not None and (not isinstance(value, str) or len(value) > 100)) or (
            not isinstance(evidence, str) or len(evidence) > MAX_CONTENT_CHARS
        ):
            raise LlmOutputError(f"memory {number}: value or evidence is not a short string")
        candidates.append(
            extraction.Candidate(
                content=content.strip(),
                kind=item["kind"],
                position=positions[turn],
                confidence=_number(item["confidence"], f"memory {number}: confidence"),
                importance=_number(item["importance"], f"memory {number}: importance"),
                slot=normal_slot(slot) if slot else "",
                category=item["category"],
                ends=ends,
                disputes=disputes,
                occurred_at=_moment(item.get("occurred_at"), f"memory {number}: occurred_at"),
                valid_from=_moment(item.get("valid_from"), f"memory {number}: valid_from"),
                expires_at=_moment(item.get("expires_at"), f"memory {number}: expires_at"),
                value=(value or "").strip(),
                evidence=evidence.strip(),
            )
        )
    return candidates


REQUIRED = {"content", "kind", "category", "confidence", "importance", "slot", "turn"}
OPTIONAL = {"ends", "disputes", "occurred_at", "valid_from", "expires_at", "value", "evidence"}


def _ends(value: Any, number: int) -> list[Ending]:
    if not isinstance(value, list) or len(value) > MAX_ENDS:
        raise LlmOutputError(f"memory {number}: ends is not a list of at most {MAX_ENDS}")
    ends = []
    for ending in value:
        if not isinstance(ending, dict) or set(ending) != {"slot", "value"}:
            raise LlmOutputError(f"memory {number}: an ending is not {{slot, value}}")
        slot, said = ending["slot"], ending["value"]
        for part in (slot, said):
            if part is not None and (not isinstance(part, str) or len(part) > 100):
                raise LlmOutputError(f"memory {number}: an ending is not short strings or null")
        if not (slot or said):
            raise LlmOutputError(f"memory {number}: an ending names neither slot nor value")
        ends.append(Ending(slot=normal_slot(slot) if slot else "", value=(said or "").strip()))
    return ends


def _disputes(value: Any, number: int) -> list[Dispute]:
    """Facts in doubt, in the offline extractor's terms (apps.facts.doubt): a slot's group,
    narrowed to a value (the slot's own, "allergy:peanuts", when none is given), or the
    facts of the previous statement."""
    if not isinstance(value, list) or len(value) > MAX_ENDS:
        raise LlmOutputError(f"memory {number}: disputes is not a list of at most {MAX_ENDS}")
    disputes = []
    for item in value:
        if not isinstance(item, dict) or set(item) != {"slot", "value", "previous"}:
            raise LlmOutputError(f"memory {number}: a dispute is not {{slot, value, previous}}")
        slot, said, previous = item["slot"], item["value"], item["previous"]
        for part in (slot, said):
            if part is not None and (not isinstance(part, str) or len(part) > 100):
                raise LlmOutputError(f"memory {number}: a dispute is not short strings or null")
        if not isinstance(previous, bool) or not (slot or said or previous):
            raise LlmOutputError(f"memory {number}: a dispute names no slot, value or previous")
        if previous:
            disputes.append(Dispute(last_said=True))
            continue
        normal = normal_slot(slot) if slot else ""
        own = normal.partition(":")[2] if ":" in normal.rpartition("|")[2] else ""
        disputes.append(Dispute(group=slot_group(normal), value=(said or own).strip()))
    return disputes


def _moment(value: Any, name: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > 40:
        raise LlmOutputError(f"{name} is not an ISO 8601 string or null")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise LlmOutputError(f"{name} is not an ISO 8601 string or null") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class LlmExtractor:
    """User turns as episodic memories (as offline); facts, preferences and plans by the LLM,
    which sees the user and assistant turns without system prompts or recalled memories.
    Its facts are kept only where they keep the rules' contract (`grounding.py`)."""

    name = "llm"

    def __init__(self, client: LlmClient) -> None:
        self.client = client
        self.refused: Counter[str] = Counter()  # the facts refused, by reason

    def extract(self, turns: list[extraction.Turn]) -> list[extraction.Candidate]:
        episodic = [c for c in extraction.OfflineExtractor().extract(turns) if c.kind == "episodic"]
        return episodic + self.facts(turns)

    def facts(
        self, turns: list[extraction.Turn], only: set[int] | None = None
    ) -> list[extraction.Candidate]:
        """The grounded facts the model finds in the turns (in those at positions `only`,
        when given; the others are not sent)."""
        visible = [
            extraction.Turn(t.role, extraction.strip_recalled(t.content), t.position, t.name)
            for t in turns
            if t.role in ("user", "assistant") and (only is None or t.position in only)
        ]
        visible = [t for t in visible if t.content]
        if not any(t.role == "user" for t in visible):
            return []
        conversation = "\n".join(f"[{i}] {t.role}: {t.content}" for i, t in enumerate(visible))
        found = self.client.ask(
            [
                {"role": "system", "content": EXTRACT_PROMPT},
                {"role": "user", "content": conversation},
            ],
            lambda answer: parse_memories(answer, visible),
            json_output=True,
            schema=memories_schema([i for i, t in enumerate(visible) if t.role == "user"]),
        )
        said = {t.position: t.content for t in visible if t.role == "user"}
        # Only the user's turns state facts about the user.
        kept = grounded([c for c in found if c.position in said], said)
        kept.refused["not_a_user_turn"] += sum(c.position not in said for c in found)
        llm_health.facts_refused(+kept.refused, self.client.base_url)
        for candidate in kept.candidates:
            candidate.model = self.client.model
        self.refused.update(+kept.refused)
        return kept.candidates


class LlmSummarizer:
    name = "llm"

    def __init__(self, client: LlmClient, words: int = 150) -> None:
        self.client = client
        self.words = words

    def summarize(self, turns: list[extraction.Turn], previous: str = "") -> str:
        lines = [
            f"{t.role}: {extraction.strip_recalled(t.content)}"
            for t in turns
            if t.role in ("user", "assistant")
        ]
        if previous:
            lines.insert(0, f"(summary so far) {previous}")
        return self.client.ask(
            [
                {"role": "system", "content": SUMMARY_PROMPT.format(words=self.words)},
                {"role": "user", "content": "\n".join(lines)},
            ],
            _summary,
            json_output=False,
        )


def _summary(answer: str) -> str:
    if not answer.strip():
        raise LlmOutputError("the summary is empty")
    return answer.strip()
