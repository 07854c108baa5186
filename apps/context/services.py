"""Context assembly for an app's next model call: recall, the session's turns and summary,
and the namespace's instructions, packed into the model's exact token budget."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils.translation import gettext_noop

from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.context import assembly
from apps.context.models import PlaygroundConfig
from apps.memories.models import Kind, Memory, Subject
from apps.memories.row_encryption import KeyCache, open_memory, open_row, seal_row
from apps.memories.selectors import procedural_memories
from apps.namespaces.models import Namespace
from apps.namespaces.selectors import namespaces_for_user
from apps.pipeline import extraction
from apps.pipeline.models import Session
from apps.pipeline.selectors import (
    session_for_subject,
    session_recent_turns,
    session_summary_latest,
    session_summary_through,
)
from apps.recall.search import RecallRequest, recall_memories
from apps.recall.services import NewRecallLog, recall_log_create
from apps.recall.statements import RecallFilters
from apps.tokens.tokenizers import ModelInfo, Tokenizer, model_table, tokenizer_for
from memoryhub import metrics
from memoryhub.exceptions import ApplicationError, NotFound

STRATEGIES = ("buffer", "window", "summary", "summary_buffer")
MAX_PROCEDURAL = 50
MAX_TURNS = 1000


@dataclass
class ContextRequest:
    query: str
    subject: str | None = None
    session: str | None = None
    model: str = ""
    max_context_tokens: int | None = None
    reserve_tokens: int = 1024
    strategy: str = "summary_buffer"
    system_prompt: str = ""
    recall_k: int = 20
    window: int = 10
    buffer_tokens: int = 2000
    placement: str = "edges"
    sections: dict[str, dict[str, int | None]] = field(default_factory=dict)
    # History too (each line marked "(superseded YYYY-MM-DD)"), and time travel: the
    # memories as they held at `as_of` (apps/recall/time_travel.py).
    include_history: bool = False
    as_of: datetime | None = None

    @classmethod
    def from_data(cls, *, data: Mapping[str, Any], **overrides: Any) -> ContextRequest:
        """From validated API or form data: other keys are ignored, the API's `recall.k` is
        `recall_k`, and a blank subject or session is none."""
        names = {f.name for f in fields(cls)}
        values = {key: value for key, value in data.items() if key in names}
        if "recall" in data:
            values["recall_k"] = data["recall"].get("k", cls.recall_k)
        values["subject"] = values.get("subject") or None
        values["session"] = values.get("session") or None
        values["sections"] = dict(values.get("sections") or {})
        return cls(**(values | overrides))


def history_mark(*, valid_to: datetime) -> str:
    """What starts a history line in a prompt: "(superseded 2026-03-09)", the day in UTC."""
    return f"(superseded {valid_to.astimezone(UTC).date().isoformat()})"


def model_info(*, name: str) -> ModelInfo:
    table = model_table()
    if name not in table:
        raise ApplicationError(
            gettext_noop("Unknown model %(name)s."),
            params={"name": repr(name)},
            code="unknown_model",
            details={"model": [f"known models: {', '.join(sorted(table))}"]},
        )
    return table[name]


def context_assemble(
    *,
    actor: Actor,
    namespace: Namespace,
    spec: ContextRequest,
    purpose: str = "context",
    include_text: bool = False,
) -> dict[str, Any]:
    """The assembled prompt and its accounting (see the API). `include_text` adds each kept
    or dropped item's text (the playground shows it; the API's messages already hold it).
    The served memories are written to the recall log under `purpose`."""
    started = time.perf_counter()
    model, budget = _model_and_budget(spec)
    tokenizer = tokenizer_for(model.tokenizer)
    keys = KeyCache()

    mark = time.perf_counter()
    gathered = _gather_memories(actor, namespace, spec, keys, tokenizer.name)
    recall_ms = (time.perf_counter() - mark) * 1000

    mark = time.perf_counter()
    specs = {
        name: assembly.SectionSpec(priority)
        for name, priority in assembly.DEFAULT_PRIORITIES.items()
    }
    session = (
        session_for_subject(subject=gathered.subject, external_id=spec.session)
        if gathered.subject is not None and spec.session
        else None
    )
    turn_texts: dict[tuple[str, str], str] = {}
    if session is not None:
        turn_texts = _add_conversation(gathered, spec, session, keys, tokenizer, specs)
    _apply_section_overrides(specs, spec.sections)
    result = _pack(spec, gathered, budget, tokenizer, specs)
    assembly_ms = (time.perf_counter() - mark) * 1000

    served = [
        gathered.memories_by_id[item.key].id
        for section in result.sections
        if section.name in (assembly.PROCEDURAL, assembly.MEMORIES, assembly.SHARED)
        for item in section.items
    ]
    log = recall_log_create(
        actor=actor,
        namespace=namespace,
        entry=NewRecallLog(
            subject=gathered.subject,
            memory_ids=served,
            purpose=purpose,
            duration_ms=round((time.perf_counter() - started) * 1000, 3),
            tokens=result.total_tokens,
            query=spec.query,
        ),
        keys=keys,
    )
    texts = turn_texts | {
        (name, item.key): item.text for name, group in gathered.candidates.items() for item in group
    }
    metrics.context_duration.observe(time.perf_counter() - started)
    metrics.context_memories.inc(len(served))
    return {
        **_result_fields(result, texts, include_text=include_text),
        "tokenizer": tokenizer.name,
        "exact": model.exact,
        "model": model.name,
        "strategy": spec.strategy,
        "cost_usd": round(result.total_tokens * model.input_usd_per_mtok / 1_000_000, 8),
        "recall_id": str(log.id),
        "timings_ms": {
            "recall": round(recall_ms, 2),
            "assembly": round(assembly_ms, 2),
            "total": round((time.perf_counter() - started) * 1000, 2),
        },
    }


def _model_and_budget(spec: ContextRequest) -> tuple[ModelInfo, int]:
    """The target model, and the tokens the prompt may take (its window less the reserve)."""
    model = model_info(name=spec.model or settings.MEMORYHUB_DEFAULT_MODEL)
    if spec.strategy not in STRATEGIES:
        raise ApplicationError(
            gettext_noop("Unknown strategy."),
            details={"strategy": [f"one of {', '.join(STRATEGIES)}"]},
        )
    window = spec.max_context_tokens or model.context_window
    if window > model.context_window:
        raise ApplicationError(
            gettext_noop("max_context_tokens is larger than %(model)s's window of %(window)s."),
            params={"model": model.name, "window": model.context_window},
            details={"max_context_tokens": [f"at most {model.context_window}"]},
        )
    budget = window - spec.reserve_tokens
    if budget <= 0:
        raise ApplicationError(
            gettext_noop("The reserve leaves no room for a prompt."),
            code="budget_too_small",
            status_code=422,
            details={
                "budget": {"max_context_tokens": window, "reserve_tokens": spec.reserve_tokens}
            },
        )
    return model, budget


@dataclass
class _Gathered:
    """The memories a prompt may take, as assembly candidates by section."""

    subject: Subject | None
    candidates: dict[str, list[assembly.Item]]
    memories_by_id: dict[str, Memory]
    excluded: list[assembly.Dropped]


def _gather_memories(
    actor: Actor, namespace: Namespace, spec: ContextRequest, keys: KeyCache, tokenizer: str
) -> _Gathered:
    """Recall (the subject's memories and the namespace's shared ones, in one search) and
    the instructions that apply, decrypted; instructions beyond the first MAX_PROCEDURAL
    (by importance) are left out with the reason "limit"."""
    outcome = recall_memories(
        RecallRequest(
            actor=actor,
            namespace=namespace,
            subject_external_id=spec.subject,
            query=spec.query,
            k=spec.recall_k,
            filters=RecallFilters(include_history=spec.include_history, as_of=spec.as_of),
            include_shared=True,
            log=False,
            keys=keys,
        )
    )
    gathered = _Gathered(
        subject=outcome.subject,
        candidates={name: [] for name in assembly.DEFAULT_PRIORITIES},
        memories_by_id={},
        excluded=[],
    )
    for hit in outcome.hits:
        if hit.memory.kind == Kind.PROCEDURAL:
            continue  # instructions come whole, below
        section = assembly.SHARED if hit.memory.subject_id is None else assembly.MEMORIES
        key = str(hit.memory.id)
        gathered.memories_by_id[key] = hit.memory
        text = hit.text_then if hit.text_then is not None else open_memory(keys, hit.memory)
        line_tokens = hit.memory.prompt_tokens.get(tokenizer) if hit.text_then is None else None
        details: dict[str, Any] = {"components": hit.components}
        if not hit.current and hit.memory.valid_to is not None:
            # History says so in the prompt; the packer counts the marked line.
            text = f"{history_mark(valid_to=hit.memory.valid_to)} {text}"
            line_tokens = None
            details |= {"current": False, "valid_to": hit.memory.valid_to.isoformat()}
        gathered.candidates[section].append(
            assembly.Item(key, text, hit.score, details=details, line_tokens=line_tokens)
        )
    procedural, overflow = procedural_memories(
        namespace=namespace, subject=outcome.subject, limit=MAX_PROCEDURAL
    )
    for memory in procedural:
        key = str(memory.id)
        gathered.memories_by_id[key] = memory
        gathered.candidates[assembly.PROCEDURAL].append(
            assembly.Item(
                key,
                open_memory(keys, memory),
                memory.importance,
                line_tokens=memory.prompt_tokens.get(tokenizer),
            )
        )
    gathered.excluded = [
        assembly.Dropped(assembly.PROCEDURAL, str(memory_id), counts.get(tokenizer, 0), "limit")
        for memory_id, counts in overflow
    ]
    return gathered


def _add_conversation(
    gathered: _Gathered,
    spec: ContextRequest,
    session: Session,
    keys: KeyCache,
    tokenizer: Tokenizer,
    specs: dict[str, assembly.SectionSpec],
) -> dict[tuple[str, str], str]:
    """The session's turns and summary as candidates, by strategy (turns a strategy leaves
    out are dropped with its reason); returns the turns' texts by (section, key)."""
    namespace_id, subject_id = session.namespace_id, session.subject_id
    # The newest MAX_TURNS turns at most: no strategy sends more, however long the session.
    turns = [
        assembly.Item(
            str(m.position), open_row(keys, m, namespace_id, subject_id), 0.0, role=m.role
        )
        for m in session_recent_turns(session=session, limit=MAX_TURNS)
    ]
    turn_texts = {(assembly.TURNS, t.key): t.text for t in turns}
    summary = session_summary_latest(session=session)
    if spec.strategy == "summary" and summary is not None:
        text = open_row(keys, summary, namespace_id, subject_id)
        gathered.candidates[assembly.SUMMARY] = [assembly.Item("summary", text, 1.0)]
    left_out: list[assembly.Item] = []
    reason = ""
    if spec.strategy == "window":
        keep = turns[-spec.window :] if spec.window > 0 else []
        left_out, reason, turns = turns[: len(turns) - len(keep)], "window", keep
    elif spec.strategy == "summary":
        # The summary stands for the turns it covers; later ones (not summarized yet:
        # extraction runs after the request) still come verbatim.
        covered = summary.through_position if summary is not None else -1
        left_out = [t for t in turns if int(t.key) <= covered]
        turns = [t for t in turns if int(t.key) > covered]
        reason = "summarized"
    elif spec.strategy == "summary_buffer":
        specs[assembly.TURNS].max_tokens = spec.buffer_tokens
        turns, older = _buffer_split(turns, spec.buffer_tokens, tokenizer)
        text, summarized = _summary_of(session, older, keys) if older else ("", range(0))
        if text:
            gathered.candidates[assembly.SUMMARY] = [assembly.Item("summary", text, 1.0)]
        gathered.excluded += [
            assembly.Dropped(
                assembly.TURNS,
                t.key,
                assembly.turn_cost(t, tokenizer),
                "summarized" if int(t.key) in summarized else "section_cap",
            )
            for t in older
        ]
    gathered.excluded += [
        assembly.Dropped(assembly.TURNS, t.key, assembly.turn_cost(t, tokenizer), reason)
        for t in left_out
    ]
    gathered.candidates[assembly.TURNS] = turns
    # A turn sent verbatim is not recalled as well (ingestion keeps user turns as episodic
    # memories of the session, at the same position).
    verbatim = {int(t.key) for t in turns}
    gathered.candidates[assembly.MEMORIES] = [
        item
        for item in gathered.candidates[assembly.MEMORIES]
        if not (
            gathered.memories_by_id[item.key].session_key == session.external_id
            and gathered.memories_by_id[item.key].position in verbatim
        )
    ]
    return turn_texts


def _buffer_split(
    turns: list[assembly.Item], cap: int, tokenizer: Tokenizer
) -> tuple[list[assembly.Item], list[assembly.Item]]:
    """The newest turns that fit `cap` tokens together (the buffer), and the older ones."""
    used = 0
    for index in range(len(turns) - 1, -1, -1):
        used += assembly.turn_cost(turns[index], tokenizer)
        if used > cap:
            return turns[index + 1 :], turns[: index + 1]
    return turns, []


# The offline summary of the turns older than the buffer is made per request when no stored
# version ends exactly at the buffer: over the newest this many of them at most (~85 ms on 2
# cores; all 1,000 a session may load would take ~340 ms).
SUMMARY_NOW_TURNS = 200


def _summary_of(session: Session, older: list[assembly.Item], keys: KeyCache) -> tuple[str, range]:
    """A summary of turns older than the buffer, never of a buffered one, and the positions
    it covers. A stored version that ends exactly before the buffer is used as it is; else
    the offline summarizer summarises the newest SUMMARY_NOW_TURNS of those turns now, and
    any other summarizer's newest version that stops before the buffer stands for them (the
    turns a summary does not cover are left out)."""
    newest_older = int(older[-1].key)
    version = session_summary_through(session=session, position=newest_older)
    offline = settings.MEMORYHUB_SUMMARIZER == "offline"
    if version is not None and (version.through_position == newest_older or not offline):
        text = open_row(keys, version, session.namespace_id, session.subject_id)
        return text, range(0, version.through_position + 1)
    if not offline:
        return "", range(0)
    recent = older[-SUMMARY_NOW_TURNS:]
    turns = [extraction.Turn(role=t.role, content=t.text, position=int(t.key)) for t in recent]
    text = extraction.OfflineSummarizer(words=settings.MEMORYHUB_SUMMARY_WORDS).summarize(turns)
    return text, range(int(recent[0].key), newest_older + 1) if text else range(0)


def _apply_section_overrides(
    specs: dict[str, assembly.SectionSpec], overrides: dict[str, dict[str, int | None]]
) -> None:
    for name, override in overrides.items():
        if name not in specs:
            raise ApplicationError(
                gettext_noop("Unknown section."),
                details={"sections": [f"{name!r} is not a section"]},
            )
        if override.get("priority") is not None:
            specs[name].priority = int(override["priority"] or 0)
        if "max_tokens" in override:
            cap = override["max_tokens"]
            specs[name].max_tokens = None if cap is None else int(cap)


def _pack(
    spec: ContextRequest,
    gathered: _Gathered,
    budget: int,
    tokenizer: Tokenizer,
    specs: dict[str, assembly.SectionSpec],
) -> assembly.Assembly:
    try:
        return assembly.assemble(
            system_prompt=spec.system_prompt,
            query=spec.query,
            candidates=gathered.candidates,
            budget=budget,
            tokenizer=tokenizer,
            specs=specs,
            placement=spec.placement,
            excluded=gathered.excluded,
        )
    except assembly.BudgetTooSmall as error:
        raise ApplicationError(
            gettext_noop(
                "The budget of %(budget)s tokens cannot hold the system prompt and the query "
                "(%(required)s tokens)."
            ),
            params={"budget": error.budget, "required": error.required},
            code="budget_too_small",
            status_code=422,
            details={"budget": {"required_tokens": error.required, "budget_tokens": error.budget}},
        ) from None


def _result_fields(
    result: assembly.Assembly, texts: dict[tuple[str, str], str], *, include_text: bool
) -> dict[str, Any]:
    """The messages, the sections with their items' tokens, and what was dropped and why."""
    scored = (assembly.MEMORIES, assembly.SHARED)
    return {
        "messages": result.messages,
        "sections": [
            {
                "name": section.name,
                "tokens": section.tokens,
                "items": [
                    {
                        "id": item.key,
                        "tokens": tokens,
                        **({"text": item.text} if include_text else {}),
                        **({"role": item.role} if item.role else {}),
                        **item.details,
                    }
                    | ({"score": round(item.value, 6)} if section.name in scored else {})
                    for item, tokens in zip(section.items, section.item_tokens, strict=True)
                ],
            }
            for section in result.sections
        ],
        "total_tokens": result.total_tokens,
        "budget_tokens": result.budget_tokens,
        "dropped": [
            {"section": d.section, "id": d.key, "tokens": d.tokens, "reason": d.reason}
            | ({"text": texts.get((d.section, d.key), "")} if include_text else {})
            for d in result.dropped
        ],
    }


def playground_config_save(
    *, actor: Actor, user: Any, namespace: Namespace, config: dict[str, Any]
) -> PlaygroundConfig:
    """Save a playground set-up (encrypted under the namespace's shared key) to share by link."""
    saved = PlaygroundConfig(namespace=namespace, created_by=user)
    seal_row(KeyCache(), saved, namespace.pk, None, json.dumps(config, sort_keys=True))
    with transaction.atomic():
        saved.save()
        audit_record(
            actor=actor,
            action="playground.save",
            namespace=namespace,
            object_type="playground_config",
            object_id=str(saved.id),
        )
    return saved


def playground_config_get(*, user: Any, config_id: str) -> dict[str, Any]:
    """A saved set-up in one of the user's namespaces; anything else is not found."""
    try:
        key = uuid.UUID(str(config_id))
    except ValueError:
        raise NotFound(gettext_noop("Saved configuration not found.")) from None
    saved = PlaygroundConfig.objects.filter(pk=key, namespace__in=namespaces_for_user(user)).first()
    if saved is None:
        raise NotFound(gettext_noop("Saved configuration not found."))
    return json.loads(open_row(KeyCache(), saved, saved.namespace_id, None))
