"""Writes of recall quality review: eval sets (imported, made from feedback, edited by
hand), variants of the recall configuration, runs, and promoting a variant. Every write is
audited in its own transaction, content-free (ids, counts, field names)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone
from django.utils.translation import gettext_noop

from apps.audit.actors import Actor
from apps.audit.services import audit_record
from apps.evaluation import locomo
from apps.evaluation.models import EvalCase, EvalRun, EvalSet, SetOrigin, Variant
from apps.memories.models import SEARCH_FIELDS, Memory, Status, Subject
from apps.memories.row_encryption import KeyCache, open_memory, seal_row
from apps.namespaces.models import Namespace
from apps.pipeline import jobs
from apps.pipeline.ingestion import IncomingMessage, messages_ingest
from apps.pipeline.models import JobStatus
from apps.recall import config as recall_config
from apps.recall.models import RecallFeedback, RecallLog
from apps.recall.search import MAX_QUERY_CHARS
from apps.recall.services import recall_query
from memoryhub.exceptions import ApplicationError, NotFound
from memoryhub.json_input import MAX_DEPTH, JsonInputError, json_loads

# What an uploaded file, or one line of it, is told when the JSON guard refuses it, by the
# refusal's code.
REFUSED_JSON = {
    "not_json": gettext_noop("The file is not JSON."),
    "too_deep": gettext_noop("The file is nested deeper than %(limit)s levels."),
    "unstorable": gettext_noop("The file holds text or a number that cannot be stored."),
}
REFUSED_LINE = {
    "not_json": gettext_noop("line %(line)s: not JSON."),
    "too_deep": gettext_noop("line %(line)s: nested deeper than %(limit)s levels."),
    "unstorable": gettext_noop("line %(line)s: holds text or a number that cannot be stored."),
}

MAX_CASES = 5000
NAME_LIMIT = 120
CATEGORY_LIMIT = 40
MESSAGES_PER_REQUEST = 100
NAMESPACE_CONFIGURATION = "namespace configuration"
JSONL_FIELDS = frozenset(
    {"question", "subject", "expected_memory_ids", "expected_contains", "category"}
)


@dataclass
class CaseDraft:
    """A case before it is stored: its question in the clear, only in memory."""

    question: str
    subject: Subject | None
    expected: list[uuid.UUID] = field(default_factory=list)
    category: str = ""
    recall_id: uuid.UUID | None = None
    language: str = ""


# --- eval sets ---------------------------------------------------------------------------


def _set_create(
    actor: Actor, namespace: Namespace, name: str, description: str, origin: str
) -> EvalSet:
    name = (name or "").strip()
    if not name or len(name) > NAME_LIMIT:
        raise ApplicationError(
            gettext_noop("An eval set needs a name of at most %(limit)s characters."),
            params={"limit": NAME_LIMIT},
            details={"name": ["required" if not name else "too long"]},
        )
    if EvalSet.objects.filter(namespace=namespace, name=name).exists():
        raise ApplicationError(
            gettext_noop("This namespace has an eval set of that name."),
            details={"name": ["taken"]},
        )
    return EvalSet.objects.create(
        namespace=namespace,
        name=name,
        description=(description or "").strip()[:500],
        origin=origin,
        created_by=actor.name[:200],
    )


def _cases_add(eval_set: EvalSet, drafts: Sequence[CaseDraft], keys: KeyCache) -> list[EvalCase]:
    """Store drafts at the end of the set, each question sealed under its subject's key."""
    start = (eval_set.cases.aggregate(last=Max("position"))["last"] or 0) + 1
    if eval_set.cases.count() + len(drafts) > MAX_CASES:
        raise ApplicationError(
            gettext_noop("An eval set holds at most %(limit)s cases."),
            params={"limit": MAX_CASES},
            details={"cases": ["too many"]},
        )
    cases = []
    for offset, draft in enumerate(drafts):
        case = EvalCase(
            namespace_id=eval_set.namespace_id,
            eval_set=eval_set,
            subject=draft.subject,
            position=start + offset,
            expected=list(dict.fromkeys(draft.expected)),
            category=draft.category[:CATEGORY_LIMIT],
            language=draft.language,
            recall_id=draft.recall_id,
        )
        seal_row(
            keys,
            case,
            eval_set.namespace_id,
            draft.subject.pk if draft.subject else None,
            draft.question,
        )
        cases.append(case)
    return EvalCase.objects.bulk_create(cases)


def _audit_set(actor: Actor, action: str, eval_set: EvalSet, **details: Any) -> None:
    audit_record(
        actor=actor,
        action=action,
        namespace=eval_set.namespace,
        object_type="eval_set",
        object_id=str(eval_set.pk),
        details=details,
    )


def _line_refused(number: int, template: str, problem: Any, **params: object) -> ApplicationError:
    """A refusal of one line of an imported file: the message names the line, the details
    key it as `line <number>`."""
    return ApplicationError(
        template, params={"line": number, **params}, details={f"line {number}": problem}
    )


def _check_question(question: Any, number: int) -> str:
    if not isinstance(question, str) or not question.strip():
        raise _line_refused(
            number, gettext_noop("line %(line)s: the question is empty."), ["question"]
        )
    if len(question) > MAX_QUERY_CHARS or "\x00" in question:
        raise _line_refused(
            number,
            gettext_noop("line %(line)s: a question has at most %(limit)s characters."),
            ["question too long"],
            limit=MAX_QUERY_CHARS,
        )
    return question


def _memories_matching(
    namespace: Namespace, subject: Subject | None, phrases: list[str], keys: KeyCache
) -> list[uuid.UUID]:
    """The current memories a case may be answered by that hold one of `phrases`
    (case-insensitive): the subject's and the namespace's shared ones."""
    owner = Q(subject=None) if subject is None else Q(subject=subject) | Q(subject=None)
    lowered = [phrase.lower() for phrase in phrases]
    found = []
    for memory in Memory.objects.filter(owner, namespace=namespace, status=Status.ACTIVE).defer(
        *SEARCH_FIELDS
    ):
        text = open_memory(keys, memory).lower()
        if any(phrase in text for phrase in lowered):
            found.append(memory.pk)
    return found


def eval_set_import_file(
    *,
    actor: Actor,
    namespace: Namespace,
    name: str,
    file_format: str,
    raw: bytes,
    subject_external_id: str = "",
) -> EvalSet:
    """An uploaded file as a new eval set: JSON lines ("jsonl") or a LoCoMo conversation's
    JSON, refused whole when it is not UTF-8 text or not JSON."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ApplicationError(gettext_noop("The file is not UTF-8 text.")) from None
    if file_format == "jsonl":
        return eval_set_import_jsonl(actor=actor, namespace=namespace, name=name, text=text)
    try:
        parsed = json_loads(text)
    except JsonInputError as refused:
        template = REFUSED_JSON[refused.code]  # marked with gettext_noop where defined
        raise ApplicationError(
            template,
            params={"limit": MAX_DEPTH},
            details={"file": [str(refused)]},
        ) from None
    return eval_set_import_locomo(
        actor=actor,
        namespace=namespace,
        name=name,
        data=parsed,
        subject_external_id=subject_external_id,
    )


def eval_set_import_jsonl(
    *, actor: Actor, namespace: Namespace, name: str, text: str, description: str = ""
) -> EvalSet:
    """An eval set from JSON lines, one case a line (README, "Eval sets"):

        {"question": "...", "subject": "<external id>" | null,
         "expected_memory_ids": ["<uuid>", ...], "expected_contains": ["phrase", ...],
         "category": "..."}

    Expected memories are given by id, or found by a phrase they hold; none at all makes an
    unanswerable case. Every line is checked before anything is stored: a bad line is a
    400 naming it, and nothing is kept."""
    keys = KeyCache()
    subjects: dict[str, Subject] = {}
    drafts = [
        _jsonl_draft(namespace, line, number, subjects, keys)
        for number, line in enumerate(_jsonl_lines(text), start=1)
    ]
    with transaction.atomic():
        eval_set = _set_create(actor, namespace, name, description, SetOrigin.JSONL)
        _cases_add(eval_set, drafts, keys)
        _audit_set(actor, "eval_set.import", eval_set, format="jsonl", cases=len(drafts))
    return eval_set


def _jsonl_lines(text: str) -> list[str]:
    """The file's cases, one a non-blank line: at least one, at most MAX_CASES (counted
    before any line is parsed, so an oversized file costs no queries)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise ApplicationError(
            gettext_noop("The file holds no cases."), details={"file": ["empty"]}
        )
    if len(lines) > MAX_CASES:
        raise ApplicationError(
            gettext_noop("An eval set holds at most %(limit)s cases."),
            params={"limit": MAX_CASES},
            details={"file": ["too many"]},
        )
    return lines


def _jsonl_draft(
    namespace: Namespace, line: str, number: int, subjects: dict[str, Subject], keys: KeyCache
) -> CaseDraft:
    """Line `number` as a case to store, its fields checked one after the other: the first
    problem found is the one the refusal names. `subjects` holds the subjects earlier lines
    named, so each is looked up once."""
    item = _jsonl_object(line, number)
    question = _check_question(item.get("question"), number)
    subject = _jsonl_subject(namespace, item.get("subject"), number, subjects)
    expected = _expected_ids(namespace, subject, item.get("expected_memory_ids") or [], number)
    expected += _expected_by_phrase(namespace, subject, item.get("expected_contains"), number, keys)
    category = _jsonl_category(item.get("category"), number)
    return CaseDraft(question, subject, expected, category)


def _jsonl_object(line: str, number: int) -> dict[str, Any]:
    """The line parsed: a JSON object holding no field but the known ones."""
    try:
        item = json_loads(line)
    except JsonInputError as refused:
        raise _line_refused(
            number, REFUSED_LINE[refused.code], [str(refused)], limit=MAX_DEPTH
        ) from None
    if not isinstance(item, dict):
        raise _line_refused(
            number, gettext_noop("line %(line)s: not an object."), ["not an object"]
        )
    unknown = set(item) - JSONL_FIELDS
    if unknown:
        raise _line_refused(
            number,
            gettext_noop("line %(line)s: unknown fields %(fields)s."),
            sorted(unknown),
            fields=", ".join(sorted(unknown)),
        )
    return item


def _jsonl_subject(
    namespace: Namespace, external_id: Any, number: int, subjects: dict[str, Subject]
) -> Subject | None:
    """The namespace's subject a line names (None when it names none, for a question about
    shared memories), looked up once per file through `subjects`."""
    if external_id is None:
        return None
    if not isinstance(external_id, str):
        raise _line_refused(
            number, gettext_noop("line %(line)s: subject is a string."), ["subject"]
        )
    subject = (
        subjects.get(external_id)
        or Subject.objects.filter(namespace=namespace, external_id=external_id).first()
    )
    if subject is None:
        raise _line_refused(
            number,
            gettext_noop("line %(line)s: no subject of that id in this namespace."),
            ["unknown subject"],
        )
    subjects[external_id] = subject
    return subject


def _expected_by_phrase(
    namespace: Namespace, subject: Subject | None, raw: Any, number: int, keys: KeyCache
) -> list[uuid.UUID]:
    """The memories a line expects through `expected_contains`: none when it gives no phrase;
    phrases that no current memory holds are a refusal, not an unanswerable case."""
    phrases = raw or []
    if not isinstance(phrases, list) or not all(isinstance(p, str) and p for p in phrases):
        raise _line_refused(
            number,
            gettext_noop("line %(line)s: expected_contains is a list of phrases."),
            ["expected_contains"],
        )
    if not phrases:
        return []
    matched = _memories_matching(namespace, subject, phrases, keys)
    if not matched:
        raise _line_refused(
            number,
            gettext_noop("line %(line)s: no current memory holds any expected phrase."),
            ["expected_contains matches nothing"],
        )
    return matched


def _jsonl_category(raw: Any, number: int) -> str:
    category = raw or ""
    if not isinstance(category, str | int) or len(str(category)) > CATEGORY_LIMIT:
        raise _line_refused(
            number, gettext_noop("line %(line)s: category is a short label."), ["category"]
        )
    return str(category)


def _expected_ids(
    namespace: Namespace, subject: Subject | None, raw: Any, number: int
) -> list[uuid.UUID]:
    if not isinstance(raw, list):
        raise _line_refused(
            number,
            gettext_noop("line %(line)s: expected_memory_ids is a list."),
            ["expected_memory_ids"],
        )
    try:
        ids = [uuid.UUID(str(value)) for value in raw]
    except ValueError:
        raise _line_refused(
            number,
            gettext_noop("line %(line)s: an expected memory id is not a UUID."),
            ["expected_memory_ids"],
        ) from None
    owner = Q(subject=None) if subject is None else Q(subject=subject) | Q(subject=None)
    known = set(
        Memory.objects.filter(owner, namespace=namespace, pk__in=ids).values_list("pk", flat=True)
    )
    if len(known) != len(set(ids)):
        raise _line_refused(
            number,
            gettext_noop(
                "line %(line)s: an expected memory is not the subject's (nor shared) in this "
                "namespace."
            ),
            ["unknown memory"],
        )
    return ids


def eval_set_import_locomo(
    *,
    actor: Actor,
    namespace: Namespace,
    name: str,
    data: Any,
    subject_external_id: str,
    unanswerable: Iterable[tuple[str, str]] = (),
    adversarial: bool = True,
    description: str = "",
) -> EvalSet:
    """An eval set from a LoCoMo-format conversation: the conversation is sent for the
    subject as an app would (each session to the service of `POST …/messages`, the speaker
    as `name`, the session's date as `created_at`), then each answerable question becomes a
    case answered by the memories made from its evidence turns, and each adversarial one
    (category 5) an unanswerable case. `unanswerable` adds (question, category) cases with
    no expected memory (recall_eval: the other conversations' questions). `data` is the
    parsed JSON of a LoCoMo file, or a conversation read already."""
    if isinstance(data, locomo.Conversation):
        conversation = data
    else:
        try:
            conversation = locomo.parse_conversation(data, name=name)
        except locomo.NotLocomo as error:
            raise ApplicationError(
                gettext_noop("Not a LoCoMo conversation: %(reason)s."),
                params={"reason": error},
                details={"file": [str(error)]},
            ) from None
    external_id = (subject_external_id or "").strip()
    if not external_id or len(external_id) > 255:
        raise ApplicationError(
            gettext_noop("A subject id is needed."), details={"subject": ["required"]}
        )
    if EvalSet.objects.filter(namespace=namespace, name=name.strip()).exists():
        raise ApplicationError(
            gettext_noop("This namespace has an eval set of that name."),
            details={"name": ["taken"]},
        )
    message_of = _send_conversation(actor, namespace, external_id, conversation)
    subject = Subject.objects.get(namespace=namespace, external_id=external_id)
    by_message: dict[str, list[uuid.UUID]] = {}
    for memory_id, source in Memory.objects.filter(subject=subject).values_list("pk", "source"):
        message = (source or {}).get("message")
        if message:
            by_message.setdefault(str(message), []).append(memory_id)
    turn_memories = {dia: by_message.get(message, []) for message, dia in message_of.items()}
    drafts = []
    for question in conversation.questions:
        expected = [m for dia in question.evidence for m in turn_memories.get(dia, [])]
        if expected:  # evidence naming no turn of the conversation cannot be scored
            drafts.append(
                CaseDraft(
                    question.question,
                    subject,
                    expected,
                    locomo.CATEGORY_NAMES.get(question.category, str(question.category)),
                    language=question.language,
                )
            )
    if adversarial:
        drafts += [
            CaseDraft(q.question, subject, [], "adversarial") for q in conversation.adversarial
        ]
    drafts += [CaseDraft(text, subject, [], category) for text, category in unanswerable]
    keys = KeyCache()
    with transaction.atomic():
        eval_set = _set_create(actor, namespace, name, description, SetOrigin.LOCOMO)
        _cases_add(eval_set, drafts, keys)
        _audit_set(actor, "eval_set.import", eval_set, format="locomo", cases=len(drafts))
    return eval_set


def _send_conversation(
    actor: Actor, namespace: Namespace, external_id: str, conversation: locomo.Conversation
) -> dict[str, str]:
    """Each session through the service of `POST …/messages`, its jobs run here and now;
    returns each stored message's LoCoMo turn id."""
    sessions: dict[int, list[locomo.Turn]] = {}
    for turn in conversation.turns:
        sessions.setdefault(turn.session, []).append(turn)
    message_of: dict[str, str] = {}
    for number, turns in sorted(sessions.items()):
        for start in range(0, len(turns), MESSAGES_PER_REQUEST):
            batch = turns[start : start + MESSAGES_PER_REQUEST]
            job, _ = messages_ingest(
                actor=actor,
                namespace=namespace,
                subject_external_id=external_id,
                session_external_id=f"session-{number}",
                messages=[
                    IncomingMessage(
                        "user",
                        turn.text + (f" [shared a photo: {turn.caption}]" if turn.caption else ""),
                        name=turn.speaker[:64],
                        created_at=turn.occurred_at,
                    )
                    for turn in batch
                ],
            )
            if job.status == JobStatus.QUEUED:  # a broker is configured: do it here, now
                jobs.run_ingest_job_inline(str(job.id))
            for message_id, turn in zip(job.payload["messages"], batch, strict=True):
                message_of[message_id] = turn.dia_id
    return message_of


def eval_set_from_feedback(
    *, actor: Actor, namespace: Namespace, name: str, days: int = 30, description: str = ""
) -> EvalSet:
    """An eval set of every recall with positive feedback in the last `days` days whose
    query is still kept: a case a recall, answered by the memories judged relevant."""
    if not 1 <= days <= 365:
        raise ApplicationError(
            gettext_noop("Days between 1 and 365."), details={"days": ["out of range"]}
        )
    since = timezone.now() - timedelta(days=days)
    relevant: dict[uuid.UUID, list[uuid.UUID]] = {}
    for recall_id, memory_id in (
        RecallFeedback.objects.filter(namespace=namespace, relevant=True, created_at__gte=since)
        .order_by("created_at")
        .values_list("recall_id", "memory_id")
    ):
        relevant.setdefault(recall_id, []).append(memory_id)
    keys = KeyCache()
    logs = RecallLog.objects.filter(pk__in=relevant, content_encrypted__isnull=False)
    drafts = []
    for log in logs.select_related("subject").order_by("created_at"):
        question = recall_query(log=log, keys=keys)
        if question:
            drafts.append(CaseDraft(question, log.subject, relevant[log.pk], recall_id=log.pk))
    if not drafts:
        raise ApplicationError(
            gettext_noop(
                "No recall with positive feedback (and its query still kept) in that time."
            ),
            details={"days": ["no feedback"]},
        )
    with transaction.atomic():
        eval_set = _set_create(actor, namespace, name, description, SetOrigin.FEEDBACK)
        _cases_add(eval_set, drafts, keys)
        _audit_set(actor, "eval_set.from_feedback", eval_set, days=days, cases=len(drafts))
    return eval_set


def eval_set_create_empty(
    *, actor: Actor, namespace: Namespace, name: str, description: str = ""
) -> EvalSet:
    with transaction.atomic():
        eval_set = _set_create(actor, namespace, name, description, SetOrigin.MANUAL)
        _audit_set(actor, "eval_set.create", eval_set, cases=0)
    return eval_set


def eval_case_from_recall(
    *,
    actor: Actor,
    eval_set: EvalSet,
    recall_id: str,
    expected: list[str],
    category: str = "",
) -> EvalCase:
    """A case made from a recall-log row: its query (while still kept) asked for its
    subject, answered by the chosen memories it served (none: unanswerable)."""
    try:
        log = RecallLog.objects.select_related("subject").get(
            namespace_id=eval_set.namespace_id, pk=uuid.UUID(str(recall_id))
        )
    except (ValueError, RecallLog.DoesNotExist):
        raise NotFound(gettext_noop("No such recall.")) from None
    keys = KeyCache()
    question = recall_query(log=log, keys=keys)
    if not question:
        raise ApplicationError(
            gettext_noop("This recall's query is no longer kept."),
            details={"recall": ["query forgotten"]},
        )
    try:
        chosen = [uuid.UUID(str(value)) for value in expected]
    except ValueError:
        raise ApplicationError(
            gettext_noop("Not a memory id."), details={"expected": ["not a UUID"]}
        ) from None
    if not set(chosen) <= set(log.memory_ids):
        raise ApplicationError(
            gettext_noop("Expected memories are chosen among those the recall served."),
            details={"expected": ["not served"]},
        )
    with transaction.atomic():
        (case,) = _cases_add(
            eval_set,
            [CaseDraft(question, log.subject, chosen, category.strip(), recall_id=log.pk)],
            keys,
        )
        _audit_set(
            actor,
            "eval_case.add",
            eval_set,
            case=str(case.pk),
            recall=str(log.pk),
            expected=len(chosen),
        )
    return case


def eval_case_delete(*, actor: Actor, case: EvalCase) -> None:
    with transaction.atomic():
        eval_set = case.eval_set
        case_id = str(case.pk)
        case.delete()
        _audit_set(actor, "eval_case.delete", eval_set, case=case_id)


def eval_set_delete(*, actor: Actor, eval_set: EvalSet) -> None:
    with transaction.atomic():
        cases = eval_set.cases.count()
        runs = eval_set.runs.count()
        _audit_set(actor, "eval_set.delete", eval_set, cases=cases, runs=runs)
        eval_set.delete()


# --- variants and the namespace's configuration --------------------------------------------


def _parsed(config: Any) -> recall_config.RecallConfig:
    try:
        return recall_config.parse(config)
    except recall_config.ConfigError as error:
        raise ApplicationError(
            gettext_noop("The recall configuration is not valid."), details=error.errors
        ) from None


def variant_save(
    *, actor: Actor, namespace: Namespace, name: str, config: dict[str, Any]
) -> Variant:
    """Create a variant, or change the one of that name; its configuration is stored in the
    form that keeps only what differs from the defaults."""
    name = (name or "").strip()
    if not name or len(name) > 80 or name == NAMESPACE_CONFIGURATION:
        raise ApplicationError(
            gettext_noop("A variant needs a name of at most 80 characters."),
            details={"name": ["invalid"]},
        )
    stored = _parsed(config).as_dict()
    with transaction.atomic():
        variant, created = Variant.objects.select_for_update().get_or_create(
            namespace=namespace,
            name=name,
            defaults={"config": stored, "created_by": actor.name[:200]},
        )
        if not created:
            variant.config = stored
            variant.save(update_fields=["config"])
        audit_record(
            actor=actor,
            action="recall.variant_create" if created else "recall.variant_change",
            namespace=namespace,
            object_type="variant",
            object_id=str(variant.pk),
            details={"settings": sorted(stored)},
        )
    return variant


def variant_delete(*, actor: Actor, variant: Variant) -> None:
    with transaction.atomic():
        audit_record(
            actor=actor,
            action="recall.variant_delete",
            namespace=variant.namespace,
            object_type="variant",
            object_id=str(variant.pk),
            details={},
        )
        variant.delete()


def variant_promote(*, actor: Actor, variant: Variant) -> Namespace:
    """Make a variant's configuration the namespace's (owners; the view checks the role).
    The audit event names the settings that changed, and the previous and new values'
    digests are not needed: both are in the variant and the run records."""
    with transaction.atomic():
        namespace = Namespace.objects.select_for_update().get(pk=variant.namespace_id)
        before = _parsed(namespace.recall_config).as_dict()
        after = _parsed(variant.config).as_dict()
        namespace.recall_config = after
        namespace.save(update_fields=["recall_config", "updated_at"])
        variant.promoted_at = timezone.now()
        variant.save(update_fields=["promoted_at"])
        changed = sorted(
            key for key in set(before) | set(after) if before.get(key) != after.get(key)
        )
        audit_record(
            actor=actor,
            action="recall.config_promote",
            namespace=namespace,
            object_type="variant",
            object_id=str(variant.pk),
            details={"changed": changed},
        )
    return namespace


# --- runs -----------------------------------------------------------------------------------


def run_start(
    *,
    actor: Actor,
    eval_set: EvalSet,
    variant: Variant | None = None,
    token_budget: int = 2000,
) -> EvalRun:
    """Queue a run of the set against the namespace's configuration (or the variant's), as
    it is now; it runs on a worker after commit (in this process without a broker)."""
    from apps.evaluation.tasks import enqueue_run  # the task module imports the runner

    if not 100 <= token_budget <= 1_000_000:
        raise ApplicationError(
            gettext_noop("The token budget is between 100 and 1,000,000."),
            details={"token_budget": ["range"]},
        )
    total = eval_set.cases.count()
    if not total:
        raise ApplicationError(
            gettext_noop("The eval set has no cases yet."), details={"eval_set": ["empty"]}
        )
    namespace = eval_set.namespace
    config = _parsed(variant.config if variant is not None else namespace.recall_config)
    with transaction.atomic():
        run = EvalRun.objects.create(
            namespace=namespace,
            eval_set=eval_set,
            variant=variant,
            label=variant.name if variant is not None else NAMESPACE_CONFIGURATION,
            config=config.as_dict(),
            k=config.k,
            token_budget=token_budget,
            total=total,
            created_by=actor.name[:200],
        )
        audit_record(
            actor=actor,
            action="eval_run.start",
            namespace=namespace,
            object_type="eval_run",
            object_id=str(run.pk),
            details={
                "eval_set": str(eval_set.pk),
                "variant": str(variant.pk) if variant else None,
                "cases": total,
            },
        )
        enqueue_run(str(run.pk))
    return run


def unique_name(*, namespace: Namespace, base: str) -> str:
    """`base`, or `base (2)`, `base (3)`… whichever is free among the namespace's sets."""
    taken = set(
        EvalSet.objects.filter(namespace=namespace, name__startswith=base[:NAME_LIMIT]).values_list(
            "name", flat=True
        )
    )
    name, number = base[:NAME_LIMIT], 2
    while name in taken:
        suffix = f" ({number})"
        name = base[: NAME_LIMIT - len(suffix)] + suffix
        number += 1
    return name
