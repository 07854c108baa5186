"""Row-level security, the second wall: behind a namespace's wall the database returns none of
another namespace's rows, even to a query that forgot its namespace filter."""

from __future__ import annotations

import json

import pytest
from django.db import DatabaseError, connection
from django.test import Client, override_settings

from apps.audit.actors import Actor
from apps.evaluation.services import eval_set_import_jsonl, run_start, variant_save
from apps.mem0_bridge.records import record_of
from apps.mem0_bridge.services import mem0_records_import
from apps.memories import selectors
from apps.memories.models import Memory, Subject
from apps.namespaces.services import namespace_update
from apps.privacy.services import erasure_request
from apps.webhooks.delivery import deliver_due
from apps.webhooks.services import NewEndpoint, endpoint_create
from memoryhub.row_security import TENANT_ROLE, namespace_wall, owner_statement
from tests.conftest import Tenant

# Each walled table, with the SQL that counts one namespace's rows of it (%s: its id).
WALLED = {
    "memories_subject": "SELECT count(*) FROM memories_subject WHERE namespace_id = %s",
    "memories_datakey": "SELECT count(*) FROM memories_datakey WHERE namespace_id = %s",
    "memories_memory": "SELECT count(*) FROM memories_memory WHERE namespace_id = %s",
    "memories_memoryversion": (
        "SELECT count(*) FROM memories_memoryversion v JOIN memories_memory m"
        " ON m.id = v.memory_id WHERE m.namespace_id = %s"
    ),
    "memories_session": "SELECT count(*) FROM memories_session WHERE namespace_id = %s",
    "memories_message": (
        "SELECT count(*) FROM memories_message x JOIN memories_session s"
        " ON s.id = x.session_id WHERE s.namespace_id = %s"
    ),
    "memories_sessionsummary": (
        "SELECT count(*) FROM memories_sessionsummary x JOIN memories_session s"
        " ON s.id = x.session_id WHERE s.namespace_id = %s"
    ),
    "memories_job": "SELECT count(*) FROM memories_job WHERE namespace_id = %s",
    "memories_consolidationlog": (
        "SELECT count(*) FROM memories_consolidationlog WHERE namespace_id = %s"
    ),
    "memories_recalllog": "SELECT count(*) FROM memories_recalllog WHERE namespace_id = %s",
    "recall_recallfeedback": "SELECT count(*) FROM recall_recallfeedback WHERE namespace_id = %s",
    "privacy_portallink": "SELECT count(*) FROM privacy_portallink WHERE namespace_id = %s",
    "privacy_portalsession": "SELECT count(*) FROM privacy_portalsession WHERE namespace_id = %s",
    "privacy_schedulederasure": (
        "SELECT count(*) FROM privacy_schedulederasure WHERE namespace_id = %s"
    ),
    "privacy_erasurereceiptcode": (
        "SELECT count(*) FROM privacy_erasurereceiptcode WHERE namespace_id = %s"
    ),
    **{
        f"webhooks_{table}": f"SELECT count(*) FROM webhooks_{table} WHERE namespace_id = %s"  # noqa: S608
        for table in ("webhookendpoint", "webhookevent", "webhookdelivery", "webhookattempt")
    },
    **{
        f"evaluation_{table}": f"SELECT count(*) FROM evaluation_{table} WHERE namespace_id = %s"  # noqa: S608
        for table in ("evalset", "evalcase", "variant", "evalrun", "caseresult")
    },
    "mem0_bridge_importedmemory": (
        "SELECT count(*) FROM mem0_bridge_importedmemory WHERE namespace_id = %s"
    ),
}


def scalar(sql: str, params: list | None = None) -> int:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        return cursor.fetchone()[0]


def populate(tenant: Tenant, capture) -> None:
    """Rows in every walled table but the summaries (which need a long session)."""
    client = tenant.client
    # A webhook endpoint (nothing listens on the discard port: each delivery's attempt fails).
    endpoint_create(
        actor=Actor.system("t"),
        namespace=tenant.namespace,
        item=NewEndpoint(url="http://127.0.0.1:9/hooks", events=["memory.created"]),
        created_by="t",
        creator_reads_memories=False,
    )
    created = client.post(
        tenant.url("memories"), {"subject": "u1", "content": "Likes tea"}, format="json"
    )
    assert created.status_code == 201, created.json()
    memory = created.json()["id"]
    patched = client.patch(
        tenant.url(f"memories/{memory}"), {"content": "Likes green tea"}, format="json"
    )
    assert patched.status_code == 200, patched.json()
    body = {
        "subject": "u1",
        "session": "s1",
        "messages": [{"role": "user", "content": "I live in Lyon and I work as a nurse."}],
    }
    with capture(execute=True):
        ingested = client.post(tenant.url("messages"), body, format="json")
    assert ingested.status_code in (201, 202), ingested.json()
    recalled = client.post(tenant.url("recall"), {"subject": "u1", "query": "tea"}, format="json")
    assert recalled.status_code == 200, recalled.json()
    judged = client.post(
        tenant.url(f"recall/{recalled.json()['recall_id']}/feedback"),
        {"memory_id": recalled.json()["results"][0]["memory"]["id"], "relevant": True},
        format="json",
    )
    assert judged.status_code == 201, judged.json()
    # The privacy portal's rows: a link, the session it opened, a receipt's code, a scheduled
    # erasure.
    link = client.post(tenant.url("subjects/u1/portal-sessions"), {}, format="json")
    assert link.status_code == 201, link.json()
    assert Client().get(link.json()["url"]).status_code == 303
    # An erasure at once leaves the code that fetches its receipt again.
    client.post(tenant.url("memories"), {"subject": "u9", "content": "Gone"}, format="json")
    erased = Subject.objects.get(namespace=tenant.namespace, external_id="u9")
    erasure_request(actor=Actor.for_subject(erased.pk), subject=erased)
    namespace_update(actor=Actor.system("t"), namespace=tenant.namespace, erasure_grace_days=7)
    subject = Subject.objects.get(namespace=tenant.namespace, external_id="u1")
    erasure_request(actor=Actor.for_subject(subject.pk), subject=subject)
    # Recall quality: an eval set with a case, a variant, a run with its case's result.
    line = {"question": "Which tea?", "subject": "u1", "expected_memory_ids": [memory]}
    eval_set = eval_set_import_jsonl(
        actor=Actor.system("t"), namespace=tenant.namespace, name="s", text=json.dumps(line)
    )
    variant = variant_save(actor=Actor.system("t"), namespace=tenant.namespace, name="v", config={})
    with capture(execute=True):
        run_start(actor=Actor.system("t"), eval_set=eval_set, variant=variant)
    deliver_due()
    # A Mem0 memory imported: its id mapped.
    mem0_records_import(
        actor=Actor.system("t"),
        namespace=tenant.namespace,
        records=[record_of({"id": f"mem0-{tenant.slug}", "memory": "Likes jasmine tea"})],
        source="mem0-export",
    )


@pytest.fixture
def two_tenants(acme: Tenant, globex: Tenant, django_capture_on_commit_callbacks, settings):
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.MEMORYHUB_WEBHOOK_DNS_RESOLVER = None
    settings.MEMORYHUB_WEBHOOK_TIMEOUT_SECONDS = 2.0
    settings.MEMORYHUB_WEBHOOK_DISPATCHER = False
    populate(acme, django_capture_on_commit_callbacks)
    populate(globex, django_capture_on_commit_callbacks)
    return acme, globex


@pytest.mark.django_db
def test_behind_the_wall_each_table_shows_only_its_namespace(two_tenants) -> None:
    acme, globex = two_tenants
    owned = {table: scalar(sql, [acme.namespace.pk]) for table, sql in WALLED.items()}
    others = {table: scalar(sql, [globex.namespace.pk]) for table, sql in WALLED.items()}
    populated = [table for table in WALLED if table != "memories_sessionsummary"]
    for table in populated:
        assert owned[table] > 0, table  # both namespaces have rows
        assert others[table] > 0, table
    with namespace_wall(acme.namespace.pk):
        count = "SELECT count(*) FROM {}"  # our table names only
        seen = {table: scalar(count.format(table)) for table in WALLED}
        assert scalar("SELECT current_user") == TENANT_ROLE
    assert seen == owned
    # Outside the wall (the block is over) the connection is itself again and sees all.
    assert scalar("SELECT current_user") != TENANT_ROLE
    assert scalar("SELECT count(*) FROM memories_memory") == (
        owned["memories_memory"] + others["memories_memory"]
    )


@pytest.mark.django_db
def test_every_table_with_a_namespace_is_walled() -> None:
    """A new table that holds a namespace's rows must get a policy (memoryhub/row_security)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.table_name FROM information_schema.columns c"
            " WHERE c.table_schema = 'public' AND c.column_name = 'namespace_id'"
        )
        namespaced = {row[0] for row in cursor.fetchall()}
        cursor.execute(
            "SELECT tablename FROM pg_policies WHERE policyname = 'namespace_wall'"
            " AND %s = ANY(roles)",
            [TENANT_ROLE],
        )
        walled = {row[0] for row in cursor.fetchall()}
    # Audit events name their namespace but are a hash chain over all of them; API keys
    # and memberships are how a namespace is reached, read before the wall goes up.
    unwalled = {
        "audit_auditevent",
        "accounts_apikey_namespaces",
        "namespaces_membership",
        "context_playgroundconfig",
    }
    assert walled == set(WALLED)
    assert namespaced - walled <= unwalled, namespaced - walled


@pytest.mark.django_db
def test_a_write_into_another_namespace_is_refused(two_tenants) -> None:
    acme, globex = two_tenants
    stranger = Subject.objects.get(namespace=globex.namespace, external_id="u1")
    with (
        pytest.raises(DatabaseError, match="row-level security"),
        namespace_wall(acme.namespace.pk),
    ):
        Subject.objects.create(namespace=globex.namespace, external_id="planted")
    with namespace_wall(acme.namespace.pk):
        # Invisible behind acme's wall, so the update touches nothing.
        assert Subject.objects.filter(pk=stranger.pk).update(external_id="x") == 0
    # A memory of acme's moved into globex is refused (the new row fails the wall's check).
    moved = Memory.objects.filter(namespace=acme.namespace)
    with pytest.raises(DatabaseError), namespace_wall(acme.namespace.pk):
        moved.update(namespace=globex.namespace)
    assert Subject.objects.filter(external_id="planted").count() == 0
    assert Memory.objects.filter(namespace=acme.namespace).exists()
    assert Subject.objects.get(pk=stranger.pk).external_id == "u1"


def _sabotaged_memory_list(*, namespace, subject_external_id=None, **filters):
    """The memory list's selector with its namespace filter dropped: a bug to survive."""
    return Memory.objects.select_related("subject").order_by("-created_at", "-id")


@pytest.mark.django_db
@pytest.mark.parametrize("wall", [True, False], ids=["walled", "unwalled"])
def test_a_selector_without_its_namespace_filter_still_leaks_nothing(
    two_tenants, monkeypatch, wall: bool
) -> None:
    acme, globex = two_tenants
    monkeypatch.setattr(selectors, "memory_list", _sabotaged_memory_list)
    with override_settings(MEMORYHUB_ROW_SECURITY=wall):
        response = acme.client.get(acme.url("memories"))
    assert response.status_code == 200, response.json()
    listed = {item["id"] for item in response.json()["results"]}
    theirs = {
        str(pk)
        for pk in Memory.objects.filter(namespace=globex.namespace).values_list("pk", flat=True)
    }
    ours = {
        str(pk)
        for pk in Memory.objects.filter(namespace=acme.namespace).values_list("pk", flat=True)
    }
    if wall:
        assert listed == ours
    else:  # the control: without the wall the sabotage does leak, so the test can fail
        assert listed & theirs


@pytest.mark.django_db
def test_the_keyword_statement_steps_out_of_the_role_but_not_out_of_the_wall(two_tenants) -> None:
    """The one statement run as the owner (the GIN keyword search) carries the wall in its
    own WHERE clause: still only the walled namespace's rows, and the role comes back."""
    acme, _ = two_tenants
    everyone = Memory.objects.count()
    acme_rows = Memory.objects.filter(namespace=acme.namespace).count()
    assert everyone > acme_rows
    with namespace_wall(acme.namespace.pk), connection.cursor() as cursor:
        with owner_statement(cursor) as wall:
            cursor.execute("SELECT current_user")
            assert cursor.fetchone()[0] != TENANT_ROLE
            cursor.execute(f"SELECT count(*) FROM memories_memory WHERE {wall}")  # noqa: S608
            assert cursor.fetchone()[0] == acme_rows
        cursor.execute("SELECT current_user")
        assert cursor.fetchone()[0] == TENANT_ROLE
    with connection.cursor() as cursor, owner_statement(cursor) as wall:
        assert wall == ""  # unwalled: nothing to re-impose


@pytest.mark.django_db
def test_recall_through_the_gin_keyword_path_behind_the_wall(two_tenants, monkeypatch) -> None:
    from apps.recall import statements

    acme, _ = two_tenants
    monkeypatch.setattr(statements, "KEYWORD_SCAN_DOCUMENTS", 0)  # the large-population path
    response = acme.client.post(
        acme.url("recall"), {"subject": "u1", "query": "green tea"}, format="json"
    )
    assert response.status_code == 200, response.json()
    contents = [hit["memory"]["content"] for hit in response.json()["results"]]
    assert "Likes green tea" in contents
