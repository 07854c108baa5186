"""Schema fuzzing: every API operation, driven by the OpenAPI schema the app itself serves.

Schemathesis loads `/api/schema/` from the WSGI application in-process and generates requests
(schema-valid and schema-violating) for every operation, sent with real tenants' keys against
the real database. Every response must be: no 5xx, a documented status code, a documented
content type, and a body valid against the documented schema. Failures are collected (the run
does not stop at the first) and each test asserts at the end that there were none, listing
every distinct failure with a curl line to reproduce it.

The database: the werkzeug test client calls the app in this thread, so requests use the
test's connection. Django's WSGI handler closes "old" connections when a request starts and
finishes, which inside a test transaction would close it mid-test, so these tests are
transactional (`transaction=True`): fixtures are committed before fuzzing starts and every
request runs in autocommit with its own transactions, as in production.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import schemathesis
from django.core.cache import cache
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import Failure, FailureGroup
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from apps.accounts.models import ApiKey
from apps.audit.actors import Actor
from apps.memories.models import Memory
from apps.memories.services import NewMemory, memory_create, memory_update
from apps.recall.services import NewRecallLog, recall_log_create
from apps.webhooks.services import NewEndpoint, endpoint_create, endpoint_send_test
from tests.conftest import ALL_PERMISSIONS, Tenant

pytestmark = pytest.mark.django_db(transaction=True)

SCHEMA_PATH = "/api/schema/?format=json"
CHECKS = [
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
    content_type_conformance,
]
POSITIVE = schemathesis.GenerationMode.POSITIVE
NEGATIVE = schemathesis.GenerationMode.NEGATIVE
# Examples per operation, per generation mode, per key. By default 10, from a fixed seed
# (derandomized): every run sends the same ~500 requests, every operation in both modes. A
# deeper run explores at random: MEMORYHUB_FUZZ_EXAMPLES=300.
DEEPER_EXAMPLES = os.environ.get("MEMORYHUB_FUZZ_EXAMPLES")
MAX_EXAMPLES = int(DEEPER_EXAMPLES or "10")
FUZZ_SETTINGS = settings(
    max_examples=MAX_EXAMPLES,
    derandomize=DEEPER_EXAMPLES is None,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)

# Path parameter placeholders replaced, just before sending, by a resource made for that one
# request, so destructive operations (DELETE a memory, erase a subject) hit an existing one.
# URL-safe on purpose: schemathesis percent-encodes path parameter values.
FRESH_SHARED_MEMORY = "__fresh__shared-memory"
FRESH_SUBJECT_MEMORY = "__fresh__subject-memory"
FRESH_EDITED_MEMORY = "__fresh__edited-memory"
FRESH_SUBJECT_ONE = "__fresh__subject-1"
FRESH_SUBJECT_MANY = "__fresh__subject-3"
FRESH_MEMORIES = [FRESH_SHARED_MEMORY, FRESH_SUBJECT_MEMORY, FRESH_EDITED_MEMORY]
FRESH_SUBJECTS = [FRESH_SUBJECT_ONE, FRESH_SUBJECT_MANY]
FRESH_ENDPOINT = "__fresh__webhook"
FRESH = {*FRESH_MEMORIES, *FRESH_SUBJECTS, FRESH_ENDPOINT}
# Webhook endpoints the fuzzer creates point here (nothing listens: nothing is sent anyway,
# the dispatcher is off), a host MEMORYHUB_WEBHOOK_ALLOWED_HOSTS lists for these tests.
HOOK_URL = "http://127.0.0.1:9/hooks"

SUBJECTS = ["user-1", "user-2", "user-3"]
SEED_OWNERS = [None, "user-1", "user-2", None, "user-3", "user-1"]  # None: a shared memory
CONTENTS = [
    "Prefers tea over coffee in the morning.",
    "Is allergic to peanuts; mentioned it twice.",
    "Works remotely from Lisbon and travels to Berlin monthly.",
]
SEED_ACTOR = Actor.system("fuzz-seed")


@dataclass
class Seeded:
    tenant: Tenant
    memory_ids: list[str]
    subjects: list[str]
    recall_id: str = ""  # a recall that served every seeded memory (for feedback)
    endpoint_id: str = ""  # a webhook endpoint, with a delivery of a test event
    delivery_id: str = ""
    fresh_memory_ids: list[str] = field(default_factory=list)


@dataclass
class Outcome:
    requests: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    by_operation: dict[str, dict[int, int]] = field(default_factory=dict)
    failures: dict[tuple[str, ...], str] = field(default_factory=dict)
    no_negative_cases: set[str] = field(default_factory=set)

    def record_status(self, label: str, status: int) -> None:
        self.requests += 1
        self.statuses[status] = self.statuses.get(status, 0) + 1
        counts = self.by_operation.setdefault(label, {})
        counts[status] = counts.get(status, 0) + 1

    def summary(self) -> str:
        lines = [f"{self.requests} requests; statuses {sorted(self.statuses.items())}"]
        lines += [f"  {label}: {sorted(c.items())}" for label, c in self.by_operation.items()]
        if self.no_negative_cases:
            lines.append(f"  no negative cases possible: {sorted(self.no_negative_cases)}")
        return "\n".join(lines)

    def report(self) -> str:
        return "\n\n".join(f"{' | '.join(key)}\n{text}" for key, text in self.failures.items())


def _seed(tenant: Tenant) -> Seeded:
    """Six memories (two shared, four of three subjects), one of them with a second version."""
    ids = []
    for index, (content, owner) in enumerate(zip(CONTENTS * 2, SEED_OWNERS, strict=True)):
        memory = memory_create(
            actor=SEED_ACTOR,
            namespace=tenant.namespace,
            item=NewMemory(
                subject_external_id=owner,
                content=content,
                tags=["seed", f"n{index}"],
                metadata={"index": index},
            ),
        )
        ids.append(str(memory.id))
    memory_update(actor=SEED_ACTOR, memory=memory, content=f"{CONTENTS[0]} Still true.")
    recall = recall_log_create(
        actor=SEED_ACTOR,
        namespace=tenant.namespace,
        entry=NewRecallLog(subject=None, memory_ids=[uuid.UUID(i) for i in ids], purpose="recall"),
    )
    # The tenant's key administers webhooks too; an endpoint with a delivery.
    ApiKey.objects.filter(prefix=tenant.raw_key.split("_")[1]).update(
        permissions=[*ALL_PERMISSIONS, "webhooks:admin"]
    )
    endpoint = _webhook_endpoint(tenant)
    delivery = endpoint_send_test(actor=SEED_ACTOR, endpoint=endpoint)
    return Seeded(
        tenant=tenant,
        memory_ids=ids,
        subjects=list(SUBJECTS),
        recall_id=str(recall.pk),
        endpoint_id=str(endpoint.pk),
        delivery_id=str(delivery.pk),
    )


def _webhook_endpoint(tenant: Tenant) -> Any:
    return endpoint_create(
        actor=SEED_ACTOR,
        namespace=tenant.namespace,
        item=NewEndpoint(url=HOOK_URL, events=["memory.created"]),
        created_by="fuzz-seed",
        creator_reads_memories=True,
    ).endpoint


@pytest.fixture
def fuzz_app(settings: Any) -> Iterator[Any]:
    """The WSGI app, reachable as schemathesis' `localhost`, with rate limiting out of the way
    (the fuzzer sends more than a key's per-minute budget; 429 is documented anyway)."""
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "localhost"]
    settings.MEMORYHUB_API_RATE = "1000000/min"
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.MEMORYHUB_WEBHOOK_DISPATCHER = False
    cache.clear()
    from memoryhub.wsgi import application

    yield application
    cache.clear()


@pytest.fixture
def schema(fuzz_app: Any) -> Any:
    return schemathesis.openapi.from_wsgi(SCHEMA_PATH, fuzz_app)


def _api_operations(schema: Any) -> list[Any]:
    operations = [result.ok() for result in schema.get_all_operations()]
    operations = [op for op in operations if op.path.startswith("/api/v1/namespaces/")]
    # Every namespaced endpoint in memoryhub/urls.py: a new one is fuzzed without edits here.
    assert len(operations) >= 9, [op.label for op in operations]
    return operations


def _nothing_can_be_invalid(operation: Any) -> bool:
    """No body, no query, cookie or header parameter but the `Authorization` the fuzzer sets,
    and only free-form string path parameters (the namespace fixed, the ids any string): no
    schema-violating request to the operation exists."""
    headers = [header for header in operation.headers if header.name != "Authorization"]
    if any(map(len, (operation.body, operation.query, operation.cookies, headers))):
        return False
    return all(
        parameter.definition.get("schema") == {"type": "string"}
        for parameter in operation.path_parameters
    )


def _without_negative_cases(operations: list[Any]) -> set[str]:
    return {operation.label for operation in operations if _nothing_can_be_invalid(operation)}


def _is_destructive(operation: Any) -> bool:
    return operation.method.upper() == "DELETE" or operation.path.endswith("/erase")


def _path_choices(operation: Any, seeded: Seeded) -> tuple[dict[str, str], list[dict[str, str]]]:
    """(path parameters with only the namespace fixed, so schemathesis generates the ids;
    path parameters naming existing resources)."""
    base = {"namespace": seeded.tenant.slug}
    existing: list[dict[str, str]] = []
    destructive = _is_destructive(operation)
    if "{memory_id}" in operation.path:
        ids = FRESH_MEMORIES if destructive else seeded.memory_ids
        existing += [{**base, "memory_id": memory_id} for memory_id in ids]
    if "{external_id}" in operation.path:
        subjects = FRESH_SUBJECTS if destructive else seeded.subjects
        existing += [{**base, "external_id": subject} for subject in subjects]
    if "{recall_id}" in operation.path:
        existing.append({**base, "recall_id": seeded.recall_id})
    if "{endpoint_id}" in operation.path:
        endpoint = FRESH_ENDPOINT if destructive else seeded.endpoint_id
        hook = {**base, "endpoint_id": endpoint}
        if "{delivery_id}" in operation.path:
            hook["delivery_id"] = seeded.delivery_id
        existing.append(hook)
    return base, existing


def _served_memory(case: Any, seeded: Seeded) -> None:
    """Feedback on the seeded recall names a memory it served (a made-up id never is one)."""
    params = case.path_parameters or {}
    body = case.body
    ours = params.get("recall_id") == seeded.recall_id
    if ours and isinstance(body, dict) and "memory_id" in body:
        body["memory_id"] = seeded.memory_ids[0]


def _webhook_url(case: Any) -> None:
    """A webhook endpoint's URL is one that may be called (a made-up string never is)."""
    if isinstance(case.body, dict) and "url" in case.body and case.path.endswith("/webhooks"):
        case.body["url"] = HOOK_URL


def _fresh_resources(case: Any, seeded: Seeded) -> None:
    """Replace a FRESH placeholder with a memory, subject or webhook endpoint created for this
    request."""
    params = case.path_parameters or {}
    if params.get("endpoint_id") == FRESH_ENDPOINT:
        case.path_parameters["endpoint_id"] = str(_webhook_endpoint(seeded.tenant).pk)
        return
    memory_kind, subject_kind = params.get("memory_id"), params.get("external_id")
    if memory_kind not in FRESH_MEMORIES and subject_kind not in FRESH_SUBJECTS:
        return
    namespace = seeded.tenant.namespace
    subject = f"fresh-{uuid.uuid4().hex[:8]}"
    count = 3 if subject_kind == FRESH_SUBJECT_MANY else 1
    for index in range(count):
        memory = memory_create(
            actor=SEED_ACTOR,
            namespace=namespace,
            item=NewMemory(
                subject_external_id=None if memory_kind == FRESH_SHARED_MEMORY else subject,
                content=f"A memory the fuzzer may delete, number {index}.",
            ),
        )
        seeded.fresh_memory_ids.append(str(memory.id))
    if memory_kind == FRESH_EDITED_MEMORY:
        memory_update(actor=SEED_ACTOR, memory=memory, content="Edited once.", reason="fuzz")
    if memory_kind in FRESH_MEMORIES:
        case.path_parameters["memory_id"] = str(memory.id)
    if subject_kind in FRESH_SUBJECTS:
        case.path_parameters["external_id"] = subject


def _fuzz_operation(
    operation: Any,
    *,
    raw_key: str,
    seeded: Seeded,
    outcome: Outcome,
    extra_check: Callable[[Any, Any], str | None] = lambda case, response: None,
) -> None:
    """Fuzz one operation with one key: schema-valid cases, then schema-violating ones."""
    generated, existing = _path_choices(operation, seeded)
    for mode in (POSITIVE, NEGATIVE):
        choices = [generated, *existing]
        if mode is NEGATIVE:
            # Invalid bodies and queries against existing resources (else they stop at a 404);
            # a destructive operation's only inputs are its path parameters, which stay valid.
            choices = [params for params in choices if not set(params.values()) & FRESH]
        try:
            _fuzz_mode(operation, mode, choices, raw_key, seeded, outcome, extra_check)
        except Unsatisfiable:
            # No negative case could be made: right only when nothing in the request can be
            # schema-invalid (the tests compare these with `_without_negative_cases`).
            if mode is POSITIVE:
                raise
            outcome.no_negative_cases.add(operation.label)


def _fuzz_mode(
    operation: Any,
    mode: Any,
    path_choices: list[dict[str, str]],
    raw_key: str,
    seeded: Seeded,
    outcome: Outcome,
    extra_check: Callable[[Any, Any], str | None],
) -> None:
    headers = {"Authorization": f"Bearer {raw_key}"}
    strategies = [
        operation.as_strategy(mode, path_parameters=params, headers=headers)
        for params in path_choices
    ]
    # As likely to name an existing resource as one schemathesis makes up.
    strategy = (
        st.one_of(strategies[0], st.one_of(strategies[1:]))
        if len(strategies) > 1
        else strategies[0]
    )
    label = f"{operation.label} [{mode.value}]"

    @FUZZ_SETTINGS
    @given(case=strategy)
    def run(case: Any) -> None:
        _fresh_resources(case, seeded)
        if mode is POSITIVE:
            _served_memory(case, seeded)
            _webhook_url(case)
        response = case.call()
        outcome.record_status(label, response.status_code)
        try:
            case.validate_response(response, checks=CHECKS)
        except (FailureGroup, Failure) as error:
            failures = error.exceptions if isinstance(error, FailureGroup) else (error,)
            for failure in failures:
                key = (label, type(failure).__name__, failure.title)
                outcome.failures.setdefault(key, f"{failure.message}\n{case.as_curl_command()}")
        problem = extra_check(case, response)
        if problem:
            outcome.failures.setdefault((label, problem), case.as_curl_command())

    run()


def test_every_operation_conforms_to_the_schema_for_each_tenant(
    schema: Any, acme: Tenant, globex: Tenant
) -> None:
    tenants = [_seed(acme), _seed(globex)]
    operations = _api_operations(schema)
    outcome = Outcome()
    started = time.monotonic()
    for seeded in tenants:
        for operation in operations:
            _fuzz_operation(
                operation, raw_key=seeded.tenant.raw_key, seeded=seeded, outcome=outcome
            )
    print(f"\nfuzzed in {time.monotonic() - started:.1f}s: {outcome.summary()}")

    assert outcome.requests >= len(operations) * len(tenants) * MAX_EXAMPLES
    # The fuzzer reached the application for every operation, not only its 404s and 400s.
    for operation in operations:
        statuses = outcome.by_operation[f"{operation.label} [{POSITIVE.value}]"]
        assert any(200 <= status < 300 for status in statuses), (operation.label, statuses)
    # Schema-violating requests were sent to every operation that can receive one.
    assert outcome.no_negative_cases == _without_negative_cases(operations)
    assert not outcome.failures, f"{len(outcome.failures)} failure(s):\n\n{outcome.report()}"


def test_a_key_never_reaches_another_tenants_namespace(
    schema: Any, acme: Tenant, globex: Tenant
) -> None:
    """acme's key against globex's slug (and the reverse), with the other tenant's real ids in
    the path: always a 4xx (the namespace is outside the key's scope), never a 2xx or 5xx,
    and nothing of the other tenant changes."""
    seeded = {"acme": _seed(acme), "globex": _seed(globex)}
    operations = _api_operations(schema)
    outcome = Outcome()

    def state(namespace: Any) -> set[tuple[Any, ...]]:
        fields = ("pk", "version", "status", "updated_at", "content_encrypted")
        rows = Memory.objects.filter(namespace=namespace).values_list(*fields)
        return {(*row[:-1], bytes(row[-1])) for row in rows}

    before = {
        name: state(tenant.namespace) for name, tenant in (("acme", acme), ("globex", globex))
    }

    def never_2xx(case: Any, response: Any) -> str | None:
        if not 400 <= response.status_code < 500:
            return f"cross-tenant request answered {response.status_code}"
        return None

    for attacker, victim in (("acme", "globex"), ("globex", "acme")):
        for operation in operations:
            _fuzz_operation(
                operation,
                raw_key=seeded[attacker].tenant.raw_key,
                seeded=seeded[victim],
                outcome=outcome,
                extra_check=never_2xx,
            )
    print(f"\n{outcome.summary()}")

    assert outcome.requests >= len(operations) * 2 * MAX_EXAMPLES
    assert set(outcome.statuses) <= {400, 401, 403, 404}, outcome.statuses
    assert outcome.no_negative_cases == _without_negative_cases(operations)
    assert not outcome.failures, f"{len(outcome.failures)} failure(s):\n\n{outcome.report()}"
    for name, victim in seeded.items():
        after = state(victim.tenant.namespace)
        # The seeded memories are untouched; the fresh ones (made for DELETE and erase) remain.
        assert before[name] <= after
        assert {str(row[0]) for row in after} == {*victim.memory_ids, *victim.fresh_memory_ids}
