"""Context assembly for an app's next model call: recall, the session's turns and summary,
and the namespace's instructions, packed into the model's exact token budget."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.context import assembly
from apps.context.models import PlaygroundConfig
from apps.context.tokenizers import ModelInfo, model_table, tokenizer_for
from apps.memories.encryption import KeyCache, open_memory, open_row, seal_row
from apps.memories.models import Kind, Memory, Role, Session, Status, Subject
from apps.memories.recall import recall_log_create, recall_memories
from apps.namespaces.models import Namespace
from apps.namespaces.selectors import namespaces_for_user
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

    @classmethod
    def from_data(cls, data: Mapping[str, Any], **overrides: Any) -> ContextRequest:
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


def model_info(name: str) -> ModelInfo:
    table = model_table()
    if name not in table:
        raise ApplicationError(
            f"Unknown model {name!r}.",
            code="unknown_model",
            details={"model": [f"known models: {', '.join(sorted(table))}"]},
        )
    return table[name]


def context_assemble(
    *,
    actor: Actor,
    namespace: Namespace,
    request: ContextRequest,
    purpose: str = "context",
    include_text: bool = False,
) -> dict[str, Any]:
    """The assembled prompt and its accounting (see the API). `include_text` adds each kept
    or dropped item's text (the playground shows it; the API's messages already hold it).
    The served memories are written to the recall log under `purpose`."""
    started = time.perf_counter()
    model = model_info(request.model or settings.MEMORYHUB_DEFAULT_MODEL)
    if request.strategy not in STRATEGIES:
        raise ApplicationError(
            "Unknown strategy.", details={"strategy": [f"one of {', '.join(STRATEGIES)}"]}
        )
    window = request.max_context_tokens or model.context_window
    if window > model.context_window:
        raise ApplicationError(
            f"max_context_tokens is larger than {model.name}'s window of {model.context_window}.",
            details={"max_context_tokens": [f"at most {model.context_window}"]},
        )
    budget = window - request.reserve_tokens
    if budget <= 0:
        raise ApplicationError(
            "The reserve leaves no room for a prompt.",
            code="budget_too_small",
            status_code=422,
            details={
                "budget": {"max_context_tokens": window, "reserve_tokens": request.reserve_tokens}
            },
        )
    tokenizer = tokenizer_for(model.tokenizer)
    exact = model.exact
    keys = KeyCache()

    # Recall: the subject's memories and the namespace's shared ones, in one search.
    mark = time.perf_counter()
    outcome = recall_memories(
        actor=actor,
        namespace=namespace,
        subject_external_id=request.subject,
        query=request.query,
        k=request.recall_k,
        include_shared=True,
        log=False,
        keys=keys,
    )
    subject = outcome.subject
    candidates: dict[str, list[assembly.Item]] = {name: [] for name in assembly.DEFAULT_PRIORITIES}
    memories_by_id: dict[str, Memory] = {}
    for hit in outcome.hits:
        if hit.memory.kind == Kind.PROCEDURAL:
            continue  # instructions come whole, below
        section = assembly.SHARED if hit.memory.subject_id is None else assembly.MEMORIES
        key = str(hit.memory.id)
        memories_by_id[key] = hit.memory
        candidates[section].append(
            assembly.Item(
                key,
                open_memory(keys, hit.memory),
                hit.score,
                details={"components": hit.components},
                line_tokens=hit.memory.prompt_tokens.get(tokenizer.name),
            )
        )
    procedural, overflow = _procedural(namespace, subject)
    for memory in procedural:
        key = str(memory.id)
        memories_by_id[key] = memory
        candidates[assembly.PROCEDURAL].append(
            assembly.Item(
                key,
                open_memory(keys, memory),
                memory.importance,
                line_tokens=memory.prompt_tokens.get(tokenizer.name),
            )
        )
    recall_ms = (time.perf_counter() - mark) * 1000

    # The conversation, by strategy.
    mark = time.perf_counter()
    # Instructions beyond the first MAX_PROCEDURAL (by importance) are not considered.
    excluded: list[assembly.Dropped] = [
        assembly.Dropped(
            assembly.PROCEDURAL, str(memory_id), counts.get(tokenizer.name, 0), "limit"
        )
        for memory_id, counts in overflow
    ]
    turn_texts: dict[tuple[str, str], str] = {}
    session = (
        Session.objects.filter(subject=subject, external_id=request.session).first()
        if subject is not None and request.session
        else None
    )
    specs = {
        name: assembly.SectionSpec(priority)
        for name, priority in assembly.DEFAULT_PRIORITIES.items()
    }
    if session is not None:
        # The newest MAX_TURNS turns at most: no strategy sends more, however long the session.
        rows = list(
            session.messages.filter(role__in=[Role.USER, Role.ASSISTANT]).order_by("-position")[
                :MAX_TURNS
            ]
        )
        turns = [
            assembly.Item(
                str(m.position), open_row(keys, m, namespace.pk, subject.pk), 0.0, role=m.role
            )
            for m in reversed(rows)
        ]
        turn_texts = {(assembly.TURNS, t.key): t.text for t in turns}
        summary = session.summaries.order_by("-version").first()
        if request.strategy in ("summary", "summary_buffer") and summary is not None:
            text = open_row(keys, summary, namespace.pk, subject.pk)
            candidates[assembly.SUMMARY] = [assembly.Item("summary", text, 1.0)]
        left_out: list[assembly.Item] = []
        reason = ""
        if request.strategy == "window":
            keep = turns[-request.window :] if request.window > 0 else []
            left_out, reason, turns = turns[: len(turns) - len(keep)], "window", keep
        elif request.strategy == "summary":
            # The summary stands for the turns it covers; later ones (not summarized yet:
            # extraction runs after the request) still come verbatim.
            covered = summary.through_position if summary is not None else -1
            left_out = [t for t in turns if int(t.key) <= covered]
            turns = [t for t in turns if int(t.key) > covered]
            reason = "summarized"
        elif request.strategy == "summary_buffer":
            specs[assembly.TURNS].max_tokens = request.buffer_tokens
        excluded += [
            assembly.Dropped(assembly.TURNS, t.key, assembly.turn_cost(t, tokenizer), reason)
            for t in left_out
        ]
        candidates[assembly.TURNS] = turns
        # A turn sent verbatim is not recalled as well (ingestion keeps user turns as
        # episodic memories of the session, at the same position).
        verbatim = {int(t.key) for t in turns}
        candidates[assembly.MEMORIES] = [
            item
            for item in candidates[assembly.MEMORIES]
            if not (
                memories_by_id[item.key].session_key == session.external_id
                and memories_by_id[item.key].position in verbatim
            )
        ]
    for name, override in request.sections.items():
        if name not in specs:
            raise ApplicationError(
                "Unknown section.", details={"sections": [f"{name!r} is not a section"]}
            )
        if override.get("priority") is not None:
            specs[name].priority = int(override["priority"])
        if "max_tokens" in override:
            cap = override["max_tokens"]
            specs[name].max_tokens = None if cap is None else int(cap)

    try:
        result = assembly.assemble(
            system_prompt=request.system_prompt,
            query=request.query,
            candidates=candidates,
            budget=budget,
            tokenizer=tokenizer,
            specs=specs,
            placement=request.placement,
            excluded=excluded,
        )
    except assembly.BudgetTooSmall as error:
        raise ApplicationError(
            f"The budget of {error.budget} tokens cannot hold the system prompt and the query "
            f"({error.required} tokens).",
            code="budget_too_small",
            status_code=422,
            details={"budget": {"required_tokens": error.required, "budget_tokens": error.budget}},
        ) from None
    assembly_ms = (time.perf_counter() - mark) * 1000

    served = [
        memories_by_id[item.key].id
        for section in result.sections
        if section.name in (assembly.PROCEDURAL, assembly.MEMORIES, assembly.SHARED)
        for item in section.items
    ]
    log = recall_log_create(
        actor=actor, namespace=namespace, subject=subject, memory_ids=served, purpose=purpose
    )
    texts = turn_texts | {
        (name, item.key): item.text for name, group in candidates.items() for item in group
    }
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
                    | (
                        {"score": round(item.value, 6)}
                        if section.name in (assembly.MEMORIES, assembly.SHARED)
                        else {}
                    )
                    for item, tokens in zip(section.items, section.item_tokens, strict=True)
                ],
            }
            for section in result.sections
        ],
        "total_tokens": result.total_tokens,
        "budget_tokens": result.budget_tokens,
        "tokenizer": tokenizer.name,
        "exact": exact,
        "model": model.name,
        "strategy": request.strategy,
        "dropped": [
            {"section": d.section, "id": d.key, "tokens": d.tokens, "reason": d.reason}
            | ({"text": texts.get((d.section, d.key), "")} if include_text else {})
            for d in result.dropped
        ],
        "cost_usd": round(result.total_tokens * model.input_usd_per_mtok / 1_000_000, 8),
        "recall_id": str(log.id),
        "timings_ms": {
            "recall": round(recall_ms, 2),
            "assembly": round(assembly_ms, 2),
            "total": round((time.perf_counter() - started) * 1000, 2),
        },
    }


def _procedural(
    namespace: Namespace, subject: Subject | None
) -> tuple[list[Memory], list[tuple[Any, dict[str, int]]]]:
    """Instructions that apply (the subject's procedural memories and the shared ones), the
    MAX_PROCEDURAL most important, and (id, prompt tokens) of some of the others."""
    owners = Memory.objects.filter(
        Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()),
        namespace=namespace,
        kind=Kind.PROCEDURAL,
        status=Status.ACTIVE,
        valid_to__isnull=True,
    )
    owners = owners.filter(Q(subject__isnull=True) | Q(subject=subject))
    ordered = owners.order_by("-importance", "created_at")
    memories = list(ordered.defer("embedding", "context_embedding")[:MAX_PROCEDURAL])
    for memory in memories:
        memory.namespace = namespace
    overflow = list(
        ordered.values_list("id", "prompt_tokens")[MAX_PROCEDURAL : MAX_PROCEDURAL * 20]
    )
    return memories, overflow


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
        raise NotFound("Saved configuration not found.") from None
    saved = PlaygroundConfig.objects.filter(pk=key, namespace__in=namespaces_for_user(user)).first()
    if saved is None:
        raise NotFound("Saved configuration not found.")
    return json.loads(open_row(KeyCache(), saved, saved.namespace_id, None))
