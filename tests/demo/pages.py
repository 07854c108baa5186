"""Every dashboard and portal page a person reads, with real objects behind it: the demo
namespace that `make run` loads, and what the demo alone does not make (a purge job, an eval
set with two runs, a variant, an API key, an erasure receipt, a failing webhook endpoint, a
chain verification). The pages are found from the URL configuration (`url_names`): each is
listed with its arguments (`page_kwargs`) or set aside (`NOT_PAGES`), so a new page is
noticed. Used by tests/demo/test_chinese_pages.py (every page in Chinese) and
tests/demo/test_pages_axe_browser.py (axe on every page).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from apps.accounts.services import api_key_create
from apps.audit.actors import Actor
from apps.audit.models import AuditEvent, ChainVerification
from apps.demo.services import demo_actor, demo_subject_ids
from apps.evaluation.models import EvalSet, Variant
from apps.evaluation.runs import run_work
from apps.evaluation.services import eval_set_import_jsonl, run_start, variant_save
from apps.governance.purge import purge_job_run
from apps.governance.services import purge_start
from apps.memories.models import Kind, Memory, Status, Subject
from apps.memories.row_encryption import KeyCache, open_memory
from apps.namespaces.models import Namespace
from apps.pipeline.models import Job
from apps.privacy.services import KeptReceipt, erasure_request
from apps.recall.models import RecallLog
from apps.webhooks.delivery import deliver_due
from apps.webhooks.services import NewEndpoint, endpoint_create, endpoint_send_test

ZH = "zh-CN,zh;q=0.9"
AREAS = ("dashboard", "privacy")
# Addresses that are not pages a person reads: form targets, downloads and redirects. Each
# is reached from a page below (`page_kwargs`), which the tests read instead.
NOT_PAGES = {
    "dashboard:account:logout": "POST only",
    "dashboard:keys:expiry": "POST only",
    "dashboard:members:change": "POST only",
    "dashboard:memories:bulk": "POST only",
    "dashboard:memories:feedback": "POST only",
    "dashboard:memories:action": "POST only",
    "dashboard:review:merge": "POST only",
    "dashboard:subjects:export": "a JSON download",
    "dashboard:subjects:portal_link": "POST only",
    "dashboard:subjects:pause": "POST only",
    "dashboard:account:set_password": "an invitation link, tested in tests/governance",
    "dashboard:account:sso_start": "a redirect to the identity provider",
    "dashboard:account:sso_callback": "the provider's redirect back, tested in tests/accounts",
    "dashboard:account:login_link": "a one-time link, tested in tests/accounts (Chinese too)",
    "dashboard:playground:feedback": "POST only",
    "dashboard:quality:set_import": "POST only",
    "dashboard:quality:set_create": "POST only",
    "dashboard:quality:set_delete": "POST only",
    "dashboard:quality:set_from_feedback": "POST only",
    "dashboard:quality:case_from_recall": "POST only",
    "dashboard:quality:variant_save": "POST only",
    "dashboard:quality:variant_promote": "POST only",
    "dashboard:audit:export": "a JSON lines download",
    "dashboard:audit:verify": "POST only",
    "dashboard:audit:subjects": "the subject filter's <datalist> options (tests/dashboard/audit)",
    "dashboard:webhooks:change": "POST only",
    "privacy:enter": "a redirect into the portal",
    "privacy:export_json": "a JSON download",
    "privacy:receipt_json": "a JSON download",
    "privacy:erase_cancel": "POST only",
    "privacy:pause": "POST only",
    "privacy:language": "POST only",
    "privacy:leave": "POST only",
    "privacy:forget": "POST only",
    "privacy:confirm": "POST only",
}


PLAYGROUND = {
    "namespace": "demo",
    "subject": "demo-user-1",
    "session": "demo-user-1-s3",
    "query": "What is the user allergic to?",
    "model": settings.MEMORYHUB_DEFAULT_MODEL,
    "reserve_tokens": 1024,
    "strategy": "summary_buffer",
    "recall_k": 20,
    "window": 2,
    "buffer_tokens": 200,
    "placement": "edges",
}


@dataclass
class Demo:
    namespace: Namespace
    memory: Memory
    subject: Subject
    job: Job
    eval_set: EvalSet
    run_id: str
    baseline_id: str
    case_id: str
    variant: Variant
    recall: RecallLog
    key_prefix: str
    event: AuditEvent
    verification_id: int
    receipt_code: str
    endpoint_id: str


def failing_endpoint(actor: Actor, namespace: Namespace) -> str:
    """A webhook endpoint nothing listens at, whose test event failed for good: its log has
    an attempt, and owners see the failing banner."""
    endpoint = endpoint_create(
        actor=actor,
        namespace=namespace,
        item=NewEndpoint(url="http://127.0.0.1:9/hooks", events=["memory.created"]),
        created_by="tests",
        creator_reads_memories=True,
    ).endpoint
    endpoint_send_test(actor=actor, endpoint=endpoint)
    deliver_due()
    return str(endpoint.pk)


def build_world(demo: Namespace, alice_client: Client, settings: Any) -> Demo:
    """The objects behind every page, in the demo namespace (Alice, a superuser, acts)."""
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.MEMORYHUB_WEBHOOK_DISPATCHER = False
    settings.MEMORYHUB_WEBHOOK_RETRY_SCHEDULE = []
    actor = demo_actor(name="tests")
    keys = KeyCache()
    memory = next(
        row
        for row in Memory.objects.filter(namespace=demo, status=Status.ACTIVE, kind=Kind.SEMANTIC)
        if open_memory(keys, row) == "The user lives in Shanghai."
    )
    assert memory.subject is not None
    job = purge_start(
        actor=actor,
        namespace=demo,
        filters={"tag": "no-such-tag"},
        reason="A tag no memory has",
        confirmation="demo",
        expected=0,
    )
    job = purge_job_run(job_id=str(job.pk))
    eval_set = eval_set_import_jsonl(
        actor=actor,
        namespace=demo,
        name="Allergies",
        text='{"question": "What is the user allergic to?", "subject": "demo-user-1",'
        ' "expected_contains": ["shellfish"]}',
    )
    variant = variant_save(
        actor=actor, namespace=demo, name="Keyword heavy", config={"k": 5, "mmr": 0.5}
    )
    baseline = run_start(actor=actor, eval_set=eval_set)
    run_work(run_id=str(baseline.pk))
    run = run_start(actor=actor, eval_set=eval_set, variant=variant)
    run_work(run_id=str(run.pk))
    case = eval_set.cases.get()
    recall = RecallLog.objects.filter(namespace=demo).order_by("-created_at").first()
    assert recall is not None
    key, _ = api_key_create(
        actor=actor, name="Demo app", namespaces=[demo], permissions=["memories:read"]
    )
    alice_client.post("/playground/", PLAYGROUND)
    erased = Subject.objects.get(namespace=demo, external_id=demo_subject_ids()[-1])
    assert erased != memory.subject
    kept = erasure_request(actor=actor, subject=erased, locale="zh-hans")
    assert isinstance(kept, KeptReceipt)
    alice_client.post("/audit/verify/", {})
    verification = ChainVerification.objects.order_by("-id").first()
    assert verification is not None
    event = AuditEvent.objects.filter(namespace_id=demo.pk).order_by("-id").first()
    assert event is not None
    return Demo(
        demo,
        memory,
        memory.subject,
        job,
        eval_set,
        str(run.pk),
        str(baseline.pk),
        str(case.pk),
        variant,
        recall,
        key.prefix,
        event,
        verification.pk,
        kept.code,
        failing_endpoint(actor, demo),
    )


def page_kwargs(world: Demo) -> dict[str, dict[str, object]]:
    ns = {"slug": "demo"}
    memory = {**ns, "memory_id": str(world.memory.pk)}
    subject = {**ns, "subject_id": str(world.subject.pk)}
    portal = {"subject_id": world.subject.pk}
    return {
        "dashboard:account:login": {},
        "dashboard:account:no_namespace": {},
        "dashboard:keys:list": {},
        "dashboard:keys:new": {},
        "dashboard:keys:detail": {"prefix": world.key_prefix},
        "dashboard:keys:revoke": {"prefix": world.key_prefix},
        "dashboard:overview:index": {},
        "dashboard:overview:namespace": ns,
        "dashboard:memories:pick": {},
        "dashboard:overview:namespaces": {},
        "dashboard:policies:settings": ns,
        "dashboard:members:list": ns,
        "dashboard:memories:list": ns,
        "dashboard:memories:purge": ns,
        "dashboard:memories:job": {**ns, "job_id": str(world.job.pk)},
        "dashboard:memories:detail": memory,
        "dashboard:memories:edit": memory,
        "dashboard:memories:delete": memory,
        "dashboard:review:queue": ns,
        "dashboard:subjects:list": ns,
        "dashboard:subjects:detail": subject,
        "dashboard:subjects:erase": subject,
        "dashboard:playground:index": {},
        "dashboard:quality:pick": {},
        "dashboard:quality:overview": ns,
        "dashboard:quality:set": {**ns, "set_id": world.eval_set.pk},
        "dashboard:quality:case_delete": {**ns, "case_id": world.case_id},
        "dashboard:quality:run": {**ns, "run_id": world.run_id},
        "dashboard:quality:case": {**ns, "run_id": world.run_id, "case_id": world.case_id},
        "dashboard:quality:compare": ns,
        "dashboard:quality:variant_delete": {**ns, "variant_id": world.variant.pk},
        "dashboard:audit:log": {},
        "dashboard:audit:verification": {"verification_id": world.verification_id},
        "dashboard:webhooks:list": ns,
        "dashboard:webhooks:detail": {**ns, "endpoint_id": world.endpoint_id},
        "dashboard:audit:event": {"event_id": world.event.pk},
        "privacy:overview": portal,
        "privacy:memories": portal,
        "privacy:memory": {**portal, "memory_id": str(world.memory.pk)},
        "privacy:correct": {**portal, "memory_id": str(world.memory.pk)},
        "privacy:delete": {**portal, "memory_id": str(world.memory.pk)},
        "privacy:export": portal,
        "privacy:export_print": portal,
        "privacy:erase": portal,
        "privacy:activity": portal,
        "privacy:blocked": portal,
        "privacy:receipt": {"code": world.receipt_code},
    }


def url_names() -> set[str]:
    names: set[str] = set()

    def walk(patterns: list[URLPattern | URLResolver], prefix: str) -> None:
        for entry in patterns:
            if isinstance(entry, URLResolver):
                inner = f"{prefix}:{entry.namespace}" if prefix and entry.namespace else None
                walk(entry.url_patterns, inner or entry.namespace or prefix)
            elif prefix.split(":")[0] in AREAS and entry.name:
                names.add(f"{prefix}:{entry.name}")

    walk(get_resolver().url_patterns, "")
    return names


def queries(world: Demo) -> dict[str, list[str]]:
    return {**QUERIES, "dashboard:quality:compare": [f"?a={world.baseline_id}&b={world.run_id}"]}


QUERIES = {
    "dashboard:memories:list": ["", "?q=allergic", "?kind=episodic", "?status=superseded"],
    "dashboard:memories:purge": ["?kind=semantic"],
    "dashboard:review:queue": ["", "?section=disputed"],
    "dashboard:audit:log": ["", "?namespace=demo"],
    "privacy:memories": ["", "?kind=history"],
}
