"""Cross-tenant isolation: one tenant's key never reads, changes or reveals another's data.

The cast: acme and globex, each with two subjects of their own ("a1", "a2" / "g1", "g2"),
one external id both use ("same-user") and one namespace-shared memory (no subject). Every
subject memory has two versions. The attacker uses its own full-permission key against the
victim's ids in the path, the query and the body. Each attempt runs alone with acme's key
against globex, and all of them run in one sweep in both directions.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import pytest
from rest_framework.test import APIClient

from apps.accounts.selectors import api_key_prefix_of
from apps.audit.actors import Actor
from apps.audit.models import AuditEvent, Outcome
from apps.memories import services
from apps.memories.models import DataKey, Memory, MemoryVersion, Subject
from tests.conftest import ALL_PERMISSIONS, Tenant, api_client, make_api_key

SHARED_ID = "same-user"
SYSTEM = Actor.system("tests")


@dataclass
class Party:
    """A tenant with its subjects, their memory ids (subject -> id) and subject uuids."""

    tenant: Tenant
    own_subjects: list[str]
    memory_ids: dict[str, str]
    subject_uuids: dict[str, str]
    shared_memory_id: str  # the namespace-shared memory (no subject)

    @property
    def slug(self) -> str:
        return self.tenant.slug

    @property
    def client(self) -> APIClient:
        return self.tenant.client

    @property
    def subjects(self) -> list[str]:
        return [*self.own_subjects, SHARED_ID]

    @property
    def key_prefix(self) -> str:
        return api_key_prefix_of(self.tenant.raw_key)


def _populate(tenant: Tenant, own_subjects: list[str]) -> Party:
    memory_ids: dict[str, str] = {}
    for external_id in [*own_subjects, SHARED_ID]:
        memory = services.memory_create(
            actor=SYSTEM,
            namespace=tenant.namespace,
            item=services.NewMemory(
                subject_external_id=external_id,
                content=f"{tenant.slug} secret about {external_id}, first draft",
                tags=[tenant.slug, "common"],
                metadata={"owner": tenant.slug},
            ),
        )
        services.memory_update(
            actor=SYSTEM,
            memory=memory,
            content=f"{tenant.slug} secret about {external_id}, second draft",
        )
        memory_ids[external_id] = str(memory.id)
    shared = services.memory_create(
        actor=SYSTEM,
        namespace=tenant.namespace,
        item=services.NewMemory(
            content=f"{tenant.slug} namespace-wide secret", tags=[tenant.slug, "common"]
        ),
    )
    subject_uuids = {
        subject.external_id: str(subject.pk)
        for subject in Subject.objects.filter(namespace=tenant.namespace)
    }
    return Party(tenant, own_subjects, memory_ids, subject_uuids, str(shared.id))


@pytest.fixture
def world(acme: Tenant, globex: Tenant) -> dict[str, Party]:
    return {
        "acme": _populate(acme, ["a1", "a2"]),
        "globex": _populate(globex, ["g1", "g2"]),
    }


@pytest.fixture(params=[("acme", "globex"), ("globex", "acme")], ids=lambda p: "{}->{}".format(*p))
def sides(request: pytest.FixtureRequest, world: dict[str, Party]) -> tuple[Party, Party]:
    """(attacker, victim), in both directions."""
    attacker, victim = request.param
    return world[attacker], world[victim]


# --- helpers ------------------------------------------------------------------------------


def send(
    client: APIClient,
    method: str,
    path: str,
    body: Any = None,
    query: dict[str, str] | None = None,
) -> Any:
    url = f"/api/v1/namespaces/{path}"
    if query:
        url = f"{url}?{urlencode(query)}"
    call = getattr(client, method.lower())
    if body is None:
        return call(url)
    return call(url, body, format="json")


def fill(template: Any, names: dict[str, str]) -> Any:
    """`template` with every `{name}` in its strings (keys and values) filled from `names`."""
    if isinstance(template, str):
        return template.format(**names)
    if isinstance(template, dict):
        return {fill(key, names): fill(value, names) for key, value in template.items()}
    if isinstance(template, list):
        return [fill(item, names) for item in template]
    return template


def names_for(attacker: Party, victim: Party) -> dict[str, str]:
    first = victim.own_subjects[0]
    return {
        "own": attacker.slug,
        "own_mem": attacker.memory_ids[attacker.own_subjects[0]],
        "foreign": victim.slug,
        "fsubj": first,
        "fsubj_uuid": victim.subject_uuids[first],
        "fmem": victim.memory_ids[first],
        "fsame_mem": victim.memory_ids[SHARED_ID],
        "fns_mem": victim.shared_memory_id,
        "same": SHARED_ID,
    }


def all_rows(client: APIClient, path: str, **query: str) -> list[dict[str, Any]]:
    """Every row of a paginated list, following `next` cursors."""
    response = send(client, "GET", path, query={"page_size": "2", **query})
    assert response.status_code == 200, response.json()
    rows = list(response.json()["results"])
    while response.json()["next"]:
        response = client.get(response.json()["next"])
        assert response.status_code == 200, response.json()
        rows.extend(response.json()["results"])
    return rows


def snapshot(party: Party) -> dict[str, Any]:
    """Everything the party can see of its own data, through its own key, plus row counts."""
    client, slug = party.client, party.slug
    memories = {}
    for row in all_rows(client, f"{slug}/memories"):
        detail = send(client, "GET", f"{slug}/memories/{row['id']}")
        versions = send(client, "GET", f"{slug}/memories/{row['id']}/versions")
        assert detail.status_code == 200, detail.json()
        assert versions.status_code == 200, versions.json()
        memories[row["id"]] = {"detail": detail.json(), "versions": versions.json()["results"]}
    exports = {}
    for external_id in party.subjects:
        response = send(client, "GET", f"{slug}/subjects/{external_id}/export")
        assert response.status_code == 200, response.json()
        document = response.json()
        document.pop("exported_at")
        exports[external_id] = document
    namespace = party.tenant.namespace
    return {
        "memories": memories,
        "exports": exports,
        "counts": {
            "memories": Memory.objects.filter(namespace=namespace).count(),
            "versions": MemoryVersion.objects.filter(memory__namespace=namespace).count(),
            "subjects": Subject.objects.filter(namespace=namespace).count(),
            "data_keys": DataKey.objects.filter(namespace=namespace).count(),
        },
    }


def stored(party: Party) -> dict[str, list[tuple[Any, ...]]]:
    """The party's rows as stored (ciphertexts, versions, timestamps): any write shows here."""
    namespace = party.tenant.namespace

    def rows(queryset: Any, *fields: str) -> list[tuple[Any, ...]]:
        return sorted(
            tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)
            for row in queryset.values_list(*fields)
        )

    return {
        "memories": rows(
            Memory.objects.filter(namespace=namespace),
            *("id", "subject_id", "kind", "content_encrypted", "key_version", "tags"),
            *("metadata", "importance", "confidence", "status", "version", "updated_at"),
            *("expires_at", "valid_to"),
        ),
        "versions": rows(
            MemoryVersion.objects.filter(memory__namespace=namespace),
            *("id", "memory_id", "version", "content_encrypted", "created_at"),
        ),
        "subjects": rows(Subject.objects.filter(namespace=namespace), "id", "external_id"),
        "data_keys": rows(
            DataKey.objects.filter(namespace=namespace), "id", "subject_id", "wrapped"
        ),
    }


def assert_error_shape(response: Any, code: str) -> None:
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "details"}, body
    assert body["error"]["code"] == code, body


def attacker_successes_in(victim: Party, attacker: Party) -> int:
    return AuditEvent.objects.filter(
        namespace_id=victim.tenant.namespace.pk,
        actor_id=attacker.key_prefix,
        outcome=Outcome.SUCCESS,
    ).count()


# --- the matrix: every endpoint and method against foreign targets --------------------------


@dataclass(frozen=True)
class Attempt:
    name: str
    method: str
    path: str
    expected: int
    body: Any = None
    query: dict[str, str] | None = None

    def __str__(self) -> str:
        return self.name


# Every endpoint that names one object of a namespace ({id}: a memory, {subject}: a subject).
OBJECT_ENDPOINTS = [
    ("GET", "{ns}/memories/{id}"),
    ("PATCH", "{ns}/memories/{id}"),
    ("DELETE", "{ns}/memories/{id}"),
    ("GET", "{ns}/memories/{id}/versions"),
    ("GET", "{ns}/subjects/{subject}/export"),
    ("POST", "{ns}/subjects/{subject}/erase"),
]
# Every namespaced endpoint: the namespace is checked before anything else is read.
NAMESPACE_ENDPOINTS = [
    ("GET", "{ns}/memories"),
    ("POST", "{ns}/memories"),
    *OBJECT_ENDPOINTS,
    ("POST", "{ns}/recall"),
    ("POST", "{ns}/context"),
    ("POST", "{ns}/messages"),
    ("POST", "{ns}/documents"),
    ("GET", "{ns}/audit"),
]

FOREIGN_TARGETS = [
    # The victim's namespace slug in the path: outside the key's scope, so 404 for everything.
    Attempt("ns-list", "GET", "{foreign}/memories", 404),
    Attempt("ns-list-by-subject", "GET", "{foreign}/memories", 404, query={"subject": "{fsubj}"}),
    Attempt(
        "ns-create", "POST", "{foreign}/memories", 404, {"subject": "{fsubj}", "content": "planted"}
    ),
    Attempt(
        "ns-create-same-id",
        "POST",
        "{foreign}/memories",
        404,
        {"subject": "{same}", "content": "planted"},
    ),
    Attempt("ns-create-shared", "POST", "{foreign}/memories", 404, {"content": "planted"}),
    Attempt("ns-get", "GET", "{foreign}/memories/{fmem}", 404),
    Attempt("ns-patch", "PATCH", "{foreign}/memories/{fmem}", 404, {"content": "overwritten"}),
    Attempt("ns-patch-shared", "PATCH", "{foreign}/memories/{fns_mem}", 404, {"tags": ["x"]}),
    Attempt("ns-delete", "DELETE", "{foreign}/memories/{fmem}", 404),
    Attempt("ns-delete-shared", "DELETE", "{foreign}/memories/{fns_mem}", 404),
    Attempt("ns-versions", "GET", "{foreign}/memories/{fmem}/versions", 404),
    Attempt("ns-export", "GET", "{foreign}/subjects/{fsubj}/export", 404),
    Attempt("ns-export-same-id", "GET", "{foreign}/subjects/{same}/export", 404),
    Attempt("ns-erase", "POST", "{foreign}/subjects/{fsubj}/erase", 404),
    Attempt("ns-erase-same-id", "POST", "{foreign}/subjects/{same}/erase", 404),
    Attempt("ns-audit", "GET", "{foreign}/audit", 404),
    Attempt(
        "ns-audit-by-subject", "GET", "{foreign}/audit", 404, query={"subject_id": "{fsubj_uuid}"}
    ),
    # The victim's object ids under the attacker's own namespace: 404, like a missing id.
    Attempt("id-get", "GET", "{own}/memories/{fmem}", 404),
    Attempt("id-get-same-id", "GET", "{own}/memories/{fsame_mem}", 404),
    Attempt("id-get-shared", "GET", "{own}/memories/{fns_mem}", 404),
    Attempt(
        "id-patch",
        "PATCH",
        "{own}/memories/{fmem}",
        404,
        {"content": "overwritten", "tags": ["pwned"], "status": "archived"},
    ),
    Attempt("id-patch-same-id", "PATCH", "{own}/memories/{fsame_mem}", 404, {"content": "x"}),
    Attempt("id-patch-shared", "PATCH", "{own}/memories/{fns_mem}", 404, {"importance": 0.0}),
    Attempt("id-delete", "DELETE", "{own}/memories/{fmem}", 404),
    Attempt("id-delete-same-id", "DELETE", "{own}/memories/{fsame_mem}", 404),
    Attempt("id-delete-shared", "DELETE", "{own}/memories/{fns_mem}", 404),
    Attempt("id-versions", "GET", "{own}/memories/{fmem}/versions", 404),
    Attempt("id-versions-same-id", "GET", "{own}/memories/{fsame_mem}/versions", 404),
    Attempt("id-export", "GET", "{own}/subjects/{fsubj}/export", 404),
    Attempt("id-erase", "POST", "{own}/subjects/{fsubj}/erase", 404),
    Attempt("id-export-by-uuid", "GET", "{own}/subjects/{fsubj_uuid}/export", 404),
    Attempt("id-erase-by-uuid", "POST", "{own}/subjects/{fsubj_uuid}/erase", 404),
    # Foreign names in the query string: ignored by detail views, refused by lists.
    Attempt("query-get", "GET", "{own}/memories/{fmem}", 404, query={"namespace": "{foreign}"}),
    Attempt("query-list-ns", "GET", "{own}/memories", 400, query={"namespace": "{foreign}"}),
    Attempt("query-audit-ns", "GET", "{own}/audit", 400, query={"namespace": "{foreign}"}),
    # Foreign ids in the body: unknown fields are refused, never used to pick a target.
    Attempt(
        "body-create-with-id",
        "POST",
        "{own}/memories",
        400,
        {"id": "{fmem}", "subject": "{fsubj}", "content": "hijack"},
    ),
    Attempt(
        "body-create-with-namespace",
        "POST",
        "{own}/memories",
        400,
        {"namespace": "{foreign}", "subject": "{fsubj}", "content": "hijack"},
    ),
    Attempt(
        "body-patch-with-id",
        "PATCH",
        "{own}/memories/{own_mem}",
        400,
        {"id": "{fmem}", "content": "hijack"},
    ),
    Attempt(
        "body-patch-with-namespace",
        "PATCH",
        "{own}/memories/{own_mem}",
        400,
        {"namespace": "{foreign}", "content": "hijack"},
    ),
    Attempt(
        "body-patch-move-subject", "PATCH", "{own}/memories/{own_mem}", 400, {"subject": "{fsubj}"}
    ),
    Attempt(
        "body-patch-foreign-target",
        "PATCH",
        "{own}/memories/{fmem}",
        404,
        {"id": "{fmem}", "namespace": "{foreign}", "content": "hijack"},
    ),
    Attempt(
        "body-delete-foreign-id",
        "DELETE",
        "{own}/memories/{fmem}",
        404,
        {"id": "{fmem}", "namespace": "{foreign}"},
    ),
    Attempt(
        "body-erase-foreign",
        "POST",
        "{own}/subjects/{fsubj}/erase",
        404,
        {"namespace": "{foreign}", "subject_id": "{fsubj_uuid}"},
    ),
]


@pytest.mark.django_db
@pytest.mark.parametrize("attempt", FOREIGN_TARGETS, ids=str)
def test_it_refuses_every_foreign_target_and_leaves_the_victim_unchanged(
    world: dict[str, Party], attempt: Attempt
) -> None:
    """Each attempt alone, acme's key against globex (the sweep below runs both directions)."""
    attacker, victim = world["acme"], world["globex"]
    names = names_for(attacker, victim)
    before = stored(victim)

    response = send(
        attacker.client,
        attempt.method,
        fill(attempt.path, names),
        fill(attempt.body, names),
        fill(attempt.query, names),
    )

    assert response.status_code == attempt.expected, response.content
    expected_code = "not_found" if attempt.expected == 404 else "validation_error"
    assert_error_shape(response, expected_code)
    for secret in (victim.slug + " secret", victim.slug + " namespace-wide"):
        assert secret not in response.content.decode()
    assert stored(victim) == before
    assert attacker_successes_in(victim, attacker) == 0


@pytest.mark.django_db
def test_it_lets_no_foreign_attempt_succeed_in_one_sweep(sides: tuple[Party, Party]) -> None:
    """All attempts one after another (so none can prepare another): zero 2xx, victim intact."""
    attacker, victim = sides
    names = names_for(attacker, victim)
    before, stored_before = snapshot(victim), stored(victim)
    own_before = stored(attacker)

    statuses = {
        attempt.name: send(
            attacker.client,
            attempt.method,
            fill(attempt.path, names),
            fill(attempt.body, names),
            fill(attempt.query, names),
        ).status_code
        for attempt in FOREIGN_TARGETS
    }

    assert [name for name, code in statuses.items() if 200 <= code < 300] == []
    assert statuses == {attempt.name: attempt.expected for attempt in FOREIGN_TARGETS}
    assert snapshot(victim) == before
    assert stored(victim) == stored_before
    assert stored(attacker) == own_before  # the refused body tricks changed nothing of its own
    assert attacker_successes_in(victim, attacker) == 0


@pytest.mark.django_db
def test_the_victim_snapshots_cover_every_memory_and_version(world: dict[str, Party]) -> None:
    """Guards the matrix against vacuous snapshots: they see all 4 memories and 7 versions."""
    state = snapshot(world["globex"])
    assert len(state["memories"]) == 4
    assert sum(len(m["versions"]) for m in state["memories"].values()) == 7
    assert set(state["exports"]) == {"g1", "g2", SHARED_ID}
    assert state["counts"] == {"memories": 4, "versions": 7, "subjects": 3, "data_keys": 4}
    rows = stored(world["globex"])
    assert [len(rows[name]) for name in ("memories", "versions", "subjects", "data_keys")] == [
        4,
        7,
        3,
        4,
    ]


# --- foreign ids in the query of the attacker's own lists: 200, but no foreign rows ---------


@pytest.mark.django_db
def test_it_lists_no_rows_for_a_foreign_subject_filter(sides: tuple[Party, Party]) -> None:
    attacker, victim = sides
    for external_id in victim.own_subjects:
        assert all_rows(attacker.client, f"{attacker.slug}/memories", subject=external_id) == []


@pytest.mark.django_db
def test_it_lists_only_own_rows_for_a_shared_external_id(sides: tuple[Party, Party]) -> None:
    attacker, _ = sides
    rows = all_rows(attacker.client, f"{attacker.slug}/memories", subject=SHARED_ID)
    assert [row["id"] for row in rows] == [attacker.memory_ids[SHARED_ID]]
    assert rows[0]["content"].startswith(f"{attacker.slug} secret")


@pytest.mark.django_db
def test_it_lists_no_foreign_rows_unfiltered_or_by_a_common_tag(
    sides: tuple[Party, Party],
) -> None:
    attacker, victim = sides
    victim_ids = {*victim.memory_ids.values(), victim.shared_memory_id}
    for query in ({}, {"tag": "common"}, {"tag": victim.slug}):
        rows = all_rows(attacker.client, f"{attacker.slug}/memories", **query)
        assert victim_ids.isdisjoint(row["id"] for row in rows), query
        assert all(row["content"].startswith(attacker.slug) for row in rows), query
    assert len(all_rows(attacker.client, f"{attacker.slug}/memories", tag="common")) == 4


@pytest.mark.django_db
def test_it_ignores_a_foreign_cursor_position_in_its_own_namespace(
    sides: tuple[Party, Party],
) -> None:
    attacker, victim = sides
    victim_page = send(victim.client, "GET", f"{victim.slug}/memories", query={"page_size": "1"})
    cursor = victim_page.json()["next"].split("cursor=")[1].split("&")[0]
    response = attacker.client.get(
        f"/api/v1/namespaces/{attacker.slug}/memories?page_size=200&cursor={cursor}"
    )
    assert response.status_code == 200
    victim_ids = {*victim.memory_ids.values(), victim.shared_memory_id}
    assert victim_ids.isdisjoint(row["id"] for row in response.json()["results"])


@pytest.mark.django_db
def test_it_exports_only_its_own_memories_for_a_shared_external_id(
    sides: tuple[Party, Party],
) -> None:
    attacker, victim = sides
    response = send(attacker.client, "GET", f"{attacker.slug}/subjects/{SHARED_ID}/export")
    assert response.status_code == 200
    document = response.json()
    assert document["namespace"] == attacker.slug
    assert [m["id"] for m in document["memories"]] == [attacker.memory_ids[SHARED_ID]]
    assert victim.slug + " secret" not in response.content.decode()


@pytest.mark.django_db
def test_erasing_a_shared_external_id_leaves_the_other_tenants_subject(
    sides: tuple[Party, Party],
) -> None:
    attacker, victim = sides
    before = snapshot(victim)
    response = send(attacker.client, "POST", f"{attacker.slug}/subjects/{SHARED_ID}/erase")
    assert response.status_code == 200, response.json()
    assert response.json()["memories_deleted"] == 1
    assert response.json()["versions_deleted"] == 2
    assert response.json()["subject_id"] == attacker.subject_uuids[SHARED_ID]
    assert snapshot(victim) == before


@pytest.mark.django_db
def test_creating_a_memory_for_a_foreign_external_id_makes_a_new_own_subject(
    sides: tuple[Party, Party],
) -> None:
    attacker, victim = sides
    before = snapshot(victim)
    external_id = victim.own_subjects[0]
    response = send(
        attacker.client,
        "POST",
        f"{attacker.slug}/memories",
        {"subject": external_id, "content": "planted"},
    )
    assert response.status_code == 201, response.json()
    created = Subject.objects.get(namespace=attacker.tenant.namespace, external_id=external_id)
    assert str(created.pk) != victim.subject_uuids[external_id]
    assert snapshot(victim) == before


@pytest.mark.django_db
def test_its_own_audit_log_holds_no_foreign_events(sides: tuple[Party, Party]) -> None:
    attacker, victim = sides
    rows = all_rows(attacker.client, f"{attacker.slug}/audit")
    assert rows, "the fixtures wrote audit events for the attacker's namespace"
    assert {row["namespace_slug"] for row in rows} == {attacker.slug}
    victim_subjects = set(victim.subject_uuids.values())
    assert victim_subjects.isdisjoint(row["subject_id"] for row in rows)


@pytest.mark.django_db
def test_its_own_audit_log_filtered_by_a_foreign_subject_is_empty(
    sides: tuple[Party, Party],
) -> None:
    attacker, victim = sides
    for subject_uuid in victim.subject_uuids.values():
        rows = all_rows(attacker.client, f"{attacker.slug}/audit", subject_id=subject_uuid)
        assert rows == []


# --- outsiders and missing objects look alike -------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "path"), OBJECT_ENDPOINTS)
def test_a_foreign_object_is_indistinguishable_from_a_missing_one(
    world: dict[str, Party], method: str, path: str
) -> None:
    acme, globex = world["acme"], world["globex"]
    body = {"content": "x"} if method == "PATCH" else None
    foreign = send(
        acme.client,
        method,
        path.format(ns=acme.slug, id=globex.memory_ids["g1"], subject="g1"),
        body,
    )
    missing = send(
        acme.client,
        method,
        path.format(ns=acme.slug, id=uuid.uuid4(), subject="nobody-by-this-name"),
        body,
    )
    assert foreign.status_code == missing.status_code == 404
    assert foreign.json() == missing.json()
    assert_error_shape(foreign, "not_found")


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "path"), NAMESPACE_ENDPOINTS)
def test_a_foreign_namespace_is_indistinguishable_from_a_missing_one(
    world: dict[str, Party], method: str, path: str
) -> None:
    acme, globex = world["acme"], world["globex"]
    memory_id = globex.memory_ids["g1"]
    body = {"content": "x"} if method in ("POST", "PATCH") else None
    foreign = send(
        acme.client, method, path.format(ns=globex.slug, id=memory_id, subject="g1"), body
    )
    missing = send(
        acme.client, method, path.format(ns="no-such-namespace", id=memory_id, subject="g1"), body
    )
    assert foreign.status_code == missing.status_code == 404
    assert foreign.json() == missing.json()
    assert_error_shape(foreign, "not_found")


# --- scope and permissions --------------------------------------------------------------------


@pytest.mark.django_db
def test_a_key_scoped_to_both_namespaces_sees_both(world: dict[str, Party]) -> None:
    acme, globex = world["acme"], world["globex"]
    both = api_client(
        make_api_key([acme.tenant.namespace, globex.tenant.namespace], ALL_PERMISSIONS)
    )
    for party in (acme, globex):
        rows = all_rows(both, f"{party.slug}/memories")
        assert {row["id"] for row in rows} == {
            *party.memory_ids.values(),
            party.shared_memory_id,
        }
        memory_id = party.memory_ids[party.own_subjects[0]]
        assert send(both, "GET", f"{party.slug}/memories/{memory_id}").status_code == 200
        export = send(both, "GET", f"{party.slug}/subjects/{party.own_subjects[0]}/export")
        assert export.status_code == 200
        assert send(both, "GET", f"{party.slug}/audit").status_code == 200


@pytest.mark.django_db
def test_a_key_scoped_to_both_still_finds_ids_only_under_their_own_namespace(
    world: dict[str, Party],
) -> None:
    acme, globex = world["acme"], world["globex"]
    both = api_client(
        make_api_key([acme.tenant.namespace, globex.tenant.namespace], ALL_PERMISSIONS)
    )
    response = send(both, "GET", f"{acme.slug}/memories/{globex.memory_ids['g1']}")
    assert response.status_code == 404
    assert send(both, "GET", f"{acme.slug}/subjects/g1/export").status_code == 404


@pytest.fixture
def partial_key(world: dict[str, Party]) -> Any:
    """A client for acme with every permission but the ones named."""

    def make(*missing: str) -> APIClient:
        permissions = [p for p in ALL_PERMISSIONS if p not in missing]
        return api_client(make_api_key([world["acme"].tenant.namespace], permissions))

    return make


def _acme_memory_rows() -> list[tuple[Any, ...]]:
    return sorted(
        Memory.objects.filter(namespace__slug="acme").values_list(
            "id", "version", "updated_at", "status", "tags"
        )
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "memories", {"subject": "a1", "content": "new"}),
        ("POST", "memories", {"subject": "brand-new", "content": "new"}),
        ("PATCH", "memories/{id}", {"content": "changed", "tags": ["changed"]}),
        ("DELETE", "memories/{id}", None),
    ],
)
def test_a_key_without_write_permission_gets_403_and_writes_nothing(
    world: dict[str, Party], partial_key: Any, method: str, path: str, body: Any
) -> None:
    acme = world["acme"]
    client = partial_key("memories:write")
    rows, versions = _acme_memory_rows(), MemoryVersion.objects.count()
    subjects = Subject.objects.count()

    response = send(client, method, f"acme/{path.format(id=acme.memory_ids['a1'])}", body)

    assert response.status_code == 403
    assert_error_shape(response, "permission_denied")
    assert "memories:write" in response.json()["error"]["message"]
    assert _acme_memory_rows() == rows
    assert MemoryVersion.objects.count() == versions
    assert Subject.objects.count() == subjects


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["memories", "memories/{id}", "memories/{id}/versions"])
def test_a_key_without_read_permission_gets_403_on_reads(
    world: dict[str, Party], partial_key: Any, path: str
) -> None:
    client = partial_key("memories:read")
    response = send(client, "GET", f"acme/{path.format(id=world['acme'].memory_ids['a1'])}")
    assert response.status_code == 403
    assert_error_shape(response, "permission_denied")
    assert "a1, second draft" not in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "subjects/a1/export"), ("POST", "subjects/a1/erase"), ("GET", "audit")],
)
def test_a_key_without_subjects_admin_gets_403_on_export_erase_and_audit(
    world: dict[str, Party], partial_key: Any, method: str, path: str
) -> None:
    client = partial_key("subjects:admin")
    before = snapshot(world["acme"])
    response = send(client, method, f"acme/{path}")
    assert response.status_code == 403
    assert_error_shape(response, "permission_denied")
    assert snapshot(world["acme"]) == before


@pytest.mark.django_db
def test_a_refused_permission_is_audited_as_denied(
    world: dict[str, Party], partial_key: Any
) -> None:
    client = partial_key("memories:write")
    send(client, "DELETE", f"acme/memories/{world['acme'].memory_ids['a1']}")
    event = AuditEvent.objects.order_by("-id").first()
    assert event is not None
    assert event.outcome == Outcome.DENIED
    assert event.namespace_slug == "acme"
    assert event.details == {"reason": "missing_permission:memories:write"}


@pytest.mark.django_db
def test_an_out_of_scope_namespace_is_404_before_any_permission_check(
    world: dict[str, Party],
) -> None:
    """A key lacking a permission still must not learn that a foreign namespace exists."""
    no_read = api_client(make_api_key([world["acme"].tenant.namespace], ["context"]))
    foreign = send(no_read, "GET", "globex/memories")
    missing = send(no_read, "GET", "no-such-namespace/memories")
    assert foreign.status_code == missing.status_code == 404
    assert foreign.json() == missing.json()
    assert send(no_read, "GET", "acme/memories").status_code == 403


@pytest.mark.django_db
def test_an_out_of_scope_attempt_is_audited_without_naming_the_target_namespace(
    world: dict[str, Party],
) -> None:
    acme = world["acme"]
    send(acme.client, "GET", "globex/memories")
    event = AuditEvent.objects.order_by("-id").first()
    assert event is not None
    assert event.outcome == Outcome.DENIED
    assert event.actor_id == acme.key_prefix
    assert event.details == {"reason": "namespace_out_of_scope"}
    assert event.namespace_id is None
