"""POST /messages: storage, extraction, consolidation, idempotency, PII, limits, jobs."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.audit.actors import Actor
from apps.audit.models import AuditEvent, Outcome
from apps.memories.models import Memory
from apps.memories.row_encryption import KeyCache, open_memory, open_row
from apps.namespaces.models import Namespace
from apps.pipeline.models import ConsolidationLog, Job, Message, Session
from tests.conftest import Tenant, api_client, make_api_key


def post(tenant: Tenant, body: dict, key: str | None = None, capture=None):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    with capture(execute=True):
        return tenant.client.post(tenant.url("messages"), body, format="json", **headers)


def turns(*pairs: tuple[str, str]) -> list[dict]:
    return [{"role": role, "content": content} for role, content in pairs]


def texts(subject: str, **filters) -> list[str]:
    keys = KeyCache()
    memories = Memory.objects.filter(subject__external_id=subject, **filters).order_by("created_at")
    return [open_memory(keys, m) for m in memories]


@pytest.mark.django_db
def test_turns_are_stored_encrypted_and_user_turns_become_memories(
    acme: Tenant, django_capture_on_commit_callbacks
) -> None:
    body = {
        "subject": "u1",
        "session": "s1",
        "messages": turns(
            ("system", "You are a helpful travel assistant for ACME bookings."),
            ("user", "My favourite colour is green and I live in Lyon."),
            ("assistant", "Noted! How can I help you today?"),
            ("user", "I am allergic to peanuts."),
        ),
    }
    response = post(acme, body, capture=django_capture_on_commit_callbacks)
    assert response.status_code == 201, response.json()
    job = response.json()
    assert job["status"] == "succeeded", job["error"]
    assert job["result"]["messages"] == 4
    session = Session.objects.get(subject__external_id="u1", external_id="s1")
    stored = list(Message.objects.filter(session=session).order_by("position"))
    assert [m.role for m in stored] == ["system", "user", "assistant", "user"]
    assert b"Lyon" not in bytes(stored[1].content_encrypted)
    keys = KeyCache()
    assert open_row(keys, stored[1], acme.namespace.pk, session.subject_id).endswith("Lyon.")
    episodic = texts("u1", kind="episodic")
    assert episodic == [
        "My favourite colour is green and I live in Lyon.",
        "I am allergic to peanuts.",
    ]
    semantic = texts("u1", kind="semantic")
    assert "The user is allergic to peanuts." in semantic
    assert any("Lyon" in text for text in semantic)
    # Neither the system prompt nor the assistant's words became memories.
    assert not any("travel assistant" in t or "Noted" in t for t in episodic + semantic)
    assert ConsolidationLog.objects.filter(job_id=job["id"]).count() == len(
        job["result"]["memories"]
    )


@pytest.mark.django_db
def test_recalled_memories_and_restated_system_prompts_are_not_extracted(
    acme: Tenant, django_capture_on_commit_callbacks
) -> None:
    body = {
        "subject": "u1",
        "session": "s1",
        "messages": turns(
            ("system", "You are Max, a cheerful assistant who keeps answers short."),
            ("user", "You are Max, a cheerful assistant who keeps answers short."),
            ("user", "<memories>- The user likes cats</memories> I like dogs."),
        ),
    }
    assert post(acme, body, capture=django_capture_on_commit_callbacks).status_code == 201
    everything = texts("u1")
    assert everything == ["I like dogs.", "The user likes dogs."]


@pytest.mark.django_db
def test_the_same_fact_twice_is_one_memory(
    acme: Tenant, django_capture_on_commit_callbacks
) -> None:
    for session in ("s1", "s2"):
        body = {"subject": "u1", "session": session, "messages": turns(("user", "I live in Lyon."))}
        assert post(acme, body, capture=django_capture_on_commit_callbacks).status_code == 201
    assert texts("u1", kind="semantic") == ["The user lives in Lyon."]
    noop = ConsolidationLog.objects.get(decision="noop")
    assert noop.reason == "near-duplicate of a current fact"


@pytest.mark.django_db
def test_a_corrected_fact_supersedes_the_old_one_which_stays_in_history(
    acme: Tenant, django_capture_on_commit_callbacks
) -> None:
    first = {
        "subject": "u1",
        "session": "s1",
        "messages": turns(("user", "My favourite colour is green.")),
    }
    second = {
        "subject": "u1",
        "session": "s1",
        "messages": turns(("user", "Actually, my favourite colour is blue.")),
    }
    post(acme, first, capture=django_capture_on_commit_callbacks)
    post(acme, second, capture=django_capture_on_commit_callbacks)
    facts = Memory.objects.filter(subject__external_id="u1", kind="semantic").order_by("created_at")
    old, new = list(facts)
    keys = KeyCache()
    assert open_memory(keys, old) == "The user's favourite colour is green."
    assert open_memory(keys, new) == "The user's favourite colour is blue."
    assert old.valid_to is not None
    assert old.superseded_by_id == new.id
    assert new.valid_to is None
    assert new.metadata["supersedes"] == [str(old.id)]
    # Recall serves the current value only; the history keeps both.
    response = acme.client.post(
        acme.url("recall"), {"subject": "u1", "query": "favourite colour"}, format="json"
    )
    served = [hit["memory"]["content"] for hit in response.json()["results"]]
    assert "The user's favourite colour is blue." in served
    assert "The user's favourite colour is green." not in served
    assert ConsolidationLog.objects.filter(decision="supersede", related_id=old.id).exists()


@pytest.mark.django_db
def test_an_idempotency_key_makes_a_retry_store_nothing_twice(
    acme: Tenant, django_capture_on_commit_callbacks
) -> None:
    body = {"subject": "u1", "session": "s1", "messages": turns(("user", "I live in Lyon."))}
    first = post(acme, body, key="retry-1", capture=django_capture_on_commit_callbacks)
    again = post(acme, body, key="retry-1", capture=django_capture_on_commit_callbacks)
    assert first.status_code == again.status_code == 201
    assert first.json()["id"] == again.json()["id"]
    assert again["Idempotent-Replayed"] == "true"
    assert Message.objects.count() == 1
    assert Job.objects.count() == 1
    other = dict(body, messages=turns(("user", "I live in Paris.")))
    conflict = post(acme, other, key="retry-1", capture=django_capture_on_commit_callbacks)
    assert conflict.status_code == 409
    assert conflict.json()["error"]["code"] == "idempotency_conflict"
    assert Message.objects.count() == 1


@pytest.mark.django_db
def test_a_paused_subjects_turns_become_no_memories(
    acme: Tenant, django_capture_on_commit_callbacks
) -> None:
    from apps.audit.actors import Actor
    from apps.memories.services import subject_get_or_create, subject_set_paused

    subject = subject_get_or_create(
        actor=Actor.system("t"), namespace=acme.namespace, external_id="u1"
    )
    subject_set_paused(actor=Actor.system("t"), subject=subject, paused=True)
    body = {"subject": "u1", "session": "s1", "messages": turns(("user", "I live in Lyon."))}
    response = post(acme, body, capture=django_capture_on_commit_callbacks)
    assert response.status_code == 201
    assert response.json()["result"]["skipped"] == "paused"
    assert Memory.objects.count() == 0
    assert Message.objects.count() == 0
    from apps.namespaces.services import namespace_update

    namespace_update(actor=Actor.system("t"), namespace=acme.namespace, keep_turns_when_paused=True)
    post(acme, body, capture=django_capture_on_commit_callbacks)
    assert Memory.objects.count() == 0
    assert Message.objects.count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"session": "s1", "messages": turns(("user", "hi"))}, "subject"),
        ({"subject": "u1", "session": "s1", "messages": []}, "messages"),
        (
            {"subject": "u1", "session": "s1", "messages": [{"role": "robot", "content": "hi"}]},
            "messages",
        ),
        ({"subject": "u1", "session": "s1", "messages": [{"role": "user"}]}, "messages"),
        (
            {
                "subject": "u1",
                "session": "s1",
                "messages": [{"role": "user", "content": "hi", "x": 1}],
            },
            "messages",
        ),
        (
            {"subject": "u1", "session": "s1", "messages": [{"role": "user", "content": "   "}]},
            "messages",
        ),
        ({"subject": "u1", "session": "s1", "messages": "hi"}, "messages"),
    ],
)
def test_malformed_messages_are_refused_naming_the_field(
    acme: Tenant, body: dict, field: str, django_capture_on_commit_callbacks
) -> None:
    response = post(acme, body, capture=django_capture_on_commit_callbacks)
    assert response.status_code == 400, response.json()
    assert field in response.json()["error"]["details"]
    assert Message.objects.count() == 0
    assert Job.objects.count() == 0


@pytest.mark.django_db
def test_too_many_messages_is_413(
    acme: Tenant, settings, django_capture_on_commit_callbacks
) -> None:
    settings.MEMORYHUB_MAX_MESSAGES_PER_REQUEST = 3
    body = {"subject": "u1", "session": "s1", "messages": turns(*[("user", "hi")] * 4)}
    response = post(acme, body, capture=django_capture_on_commit_callbacks)
    assert response.status_code == 413
    assert response.json()["error"]["details"]["messages"] == {"count": 4, "limit": 3}
    assert Message.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("policy", "stored", "tags"),
    [
        ("redact", "Mail me at [EMAIL] please.", []),
        ("tag", "Mail me at jane@example.com please.", ["pii:email"]),
        ("allow", "Mail me at jane@example.com please.", []),
    ],
)
def test_the_pii_policy_runs_before_anything_is_stored(
    acme: Tenant, policy: str, stored: str, tags: list, django_capture_on_commit_callbacks
) -> None:
    Namespace.objects.filter(pk=acme.namespace.pk).update(pii_policy=policy)
    body = {
        "subject": "u1",
        "session": "s1",
        "messages": turns(("user", "Mail me at jane@example.com please.")),
    }
    assert post(acme, body, capture=django_capture_on_commit_callbacks).status_code == 201
    (memory,) = Memory.objects.filter(kind="episodic")
    assert open_memory(KeyCache(), memory) == stored
    assert memory.tags == tags
    message = Message.objects.get()
    assert open_row(KeyCache(), message, acme.namespace.pk, memory.subject_id) == stored


@pytest.mark.django_db
def test_the_reject_policy_answers_422_naming_types_only(
    acme: Tenant, django_capture_on_commit_callbacks
) -> None:
    Namespace.objects.filter(pk=acme.namespace.pk).update(pii_policy="reject")
    body = {
        "subject": "u1",
        "session": "s1",
        "messages": turns(("user", "ok"), ("user", "card 4111 1111 1111 1111")),
    }
    response = post(acme, body, capture=django_capture_on_commit_callbacks)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "pii_rejected"
    assert error["details"]["messages"] == {"index": 1, "pii": ["card"]}
    assert "4111" not in response.content.decode()
    assert Message.objects.count() == 0
    assert Memory.objects.count() == 0
    # Explicit memory writes follow the same policy.
    direct = acme.client.post(
        acme.url("memories"), {"subject": "u1", "content": "ssn 123-45-6789"}, format="json"
    )
    assert direct.status_code == 422
    assert "6789" not in direct.content.decode()


@pytest.mark.django_db
def test_a_job_is_readable_by_keys_of_its_namespace_only(
    acme: Tenant, globex: Tenant, django_capture_on_commit_callbacks
) -> None:
    body = {"subject": "u1", "session": "s1", "messages": turns(("user", "I live in Lyon."))}
    job_id = post(acme, body, capture=django_capture_on_commit_callbacks).json()["id"]
    mine = acme.client.get(f"/api/v1/jobs/{job_id}")
    assert mine.status_code == 200
    assert mine.json()["status"] == "succeeded"
    assert globex.client.get(f"/api/v1/jobs/{job_id}").status_code == 404
    assert acme.client.get("/api/v1/jobs/not-a-uuid").status_code == 404
    assert api_client(None).get(f"/api/v1/jobs/{job_id}").status_code == 401
    reader = api_client(make_api_key([acme.namespace], ["memories:read"]))
    assert reader.post(acme.url("messages"), body, format="json").status_code == 403


@pytest.mark.django_db
def test_duplicates_and_corrections_within_one_batch(
    acme: Tenant, django_capture_on_commit_callbacks
) -> None:
    said = [
        "I live in Lyon.",
        "My favourite colour is green.",
        "I live in Lyon.",
        "Actually, my favourite colour is blue.",
    ]
    body = {"subject": "u1", "session": "s1", "messages": turns(*[("user", t) for t in said])}
    assert post(acme, body, capture=django_capture_on_commit_callbacks).status_code == 201
    current = texts("u1", kind="semantic", valid_to__isnull=True)
    assert sorted(current) == ["The user lives in Lyon.", "The user's favourite colour is blue."]
    assert texts("u1", kind="semantic", valid_to__isnull=False) == [
        "The user's favourite colour is green."
    ]


@pytest.mark.django_db
def test_the_export_holds_the_sessions_turns_and_summary_and_matches_its_schema(
    acme: Tenant, django_capture_on_commit_callbacks
) -> None:
    import jsonschema

    from apps.memories.api.views import EXPORT_SCHEMA

    body = {
        "subject": "u1",
        "session": "s1",
        "messages": turns(
            ("user", "My favourite colour is green and I live in Lyon."),
            ("assistant", "Noted!"),
        ),
    }
    post(acme, body, capture=django_capture_on_commit_callbacks)
    document = acme.client.get(acme.url("subjects/u1/export")).json()
    jsonschema.validate(document, EXPORT_SCHEMA, cls=jsonschema.Draft202012Validator)
    (session,) = document["sessions"]
    assert [m["content"] for m in session["messages"]] == [
        "My favourite colour is green and I live in Lyon.",
        "Noted!",
    ]
    assert session["summary"]["version"] == 1
    assert "Lyon" in session["summary"]["content"]
    # Erasure takes the sessions with it.
    assert acme.client.post(acme.url("subjects/u1/erase")).status_code == 200
    assert not Message.objects.exists()
    assert not Session.objects.exists()


@pytest.mark.django_db
def test_a_new_value_for_a_slot_supersedes_even_when_the_sentences_are_alike(
    acme: Tenant, django_capture_on_commit_callbacks
) -> None:
    for said in (
        "My address is 12 Baker Street, London.",
        "My address is 14 Baker Street, London.",
    ):
        body = {"subject": "u1", "session": "s1", "messages": turns(("user", said))}
        post(acme, body, capture=django_capture_on_commit_callbacks)
    assert texts("u1", kind="semantic", valid_to__isnull=True) == [
        "The user's address is 14 Baker Street, London."
    ]
    assert texts("u1", kind="semantic", valid_to__isnull=False) == [
        "The user's address is 12 Baker Street, London."
    ]
    assert not ConsolidationLog.objects.filter(decision="merge").exists()


@pytest.mark.django_db
def test_a_message_name_follows_the_pii_policy(
    acme: Tenant, django_capture_on_commit_callbacks
) -> None:
    Namespace.objects.filter(pk=acme.namespace.pk).update(pii_policy="redact")
    message = {"role": "user", "content": "I live in Lyon.", "name": "jane@example.com"}
    body = {"subject": "u1", "session": "s1", "messages": [message]}
    assert post(acme, body, capture=django_capture_on_commit_callbacks).status_code == 201
    assert Message.objects.get().name == "[EMAIL]"
    Namespace.objects.filter(pk=acme.namespace.pk).update(pii_policy="reject")
    refused = post(acme, body, capture=django_capture_on_commit_callbacks)
    assert refused.status_code == 422
    assert "jane" not in refused.content.decode()


@pytest.mark.django_db
def test_a_pause_after_the_request_still_holds_when_the_job_runs(acme: Tenant, settings) -> None:
    from apps.audit.actors import Actor
    from apps.memories.services import subject_set_paused
    from apps.pipeline.ingestion import IncomingMessage, messages_ingest
    from apps.pipeline.jobs import ingest_job_run

    settings.CELERY_TASK_ALWAYS_EAGER = False  # queued for after commit, which never comes here
    job, _ = messages_ingest(
        actor=Actor.system("t"),
        namespace=acme.namespace,
        subject_external_id="u1",
        session_external_id="s1",
        messages=[IncomingMessage(role="user", content="I live in Lyon.")],
    )
    assert job.status == "queued"
    subject_set_paused(actor=Actor.system("t"), subject=job.subject, paused=True)
    done = ingest_job_run(job_id=str(job.id))
    assert done.status == "succeeded"
    assert done.result["skipped"] == "paused"
    assert Memory.objects.count() == 0


@pytest.mark.django_db
def test_reading_a_job_needs_a_memories_permission(
    acme: Tenant, django_capture_on_commit_callbacks
) -> None:
    body = {"subject": "u1", "session": "s1", "messages": turns(("user", "I live in Lyon."))}
    job_id = post(acme, body, capture=django_capture_on_commit_callbacks).json()["id"]
    context_only = api_client(make_api_key([acme.namespace], ["context"]))
    assert context_only.get(f"/api/v1/jobs/{job_id}").status_code == 403
    refused = AuditEvent.objects.order_by("-id").first()
    assert refused is not None
    assert refused.outcome == Outcome.DENIED
    assert refused.namespace_slug == acme.namespace.slug
    assert refused.details == {"reason": "missing_permission:memories:read"}
    writer = api_client(make_api_key([acme.namespace], ["memories:write"]))
    assert writer.get(f"/api/v1/jobs/{job_id}").status_code == 200


@pytest.mark.django_db
def test_a_turns_name_and_time_become_its_speaker_and_when_it_happened(
    acme, django_capture_on_commit_callbacks
) -> None:
    """The signals recall uses (the speaker boost, dates indexed as words) come from what an
    app sends: a message's `name` and `created_at`."""
    from apps.memories.models import Memory

    body = {
        "subject": "u1",
        "session": "s1",
        "messages": [
            {"role": "user", "name": "Ana", "content": "I adopted a grey kitten.",
             "created_at": "2023-05-08T13:56:00Z"},
            {"role": "user", "content": "No name, no time."},
        ],
    }  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        response = acme.client.post(acme.url("messages"), body, format="json")
    assert response.status_code in (201, 202), response.json()
    named, plain = Memory.objects.filter(kind="episodic").order_by("position")
    assert named.metadata["speaker"] == "Ana"
    assert named.occurred_at.isoformat() == "2023-05-08T13:56:00+00:00"
    assert "speaker" not in plain.metadata
    assert plain.occurred_at is not None  # when it was received
    found = acme.client.post(
        acme.url("recall"), {"subject": "u1", "query": "May 2023"}, format="json"
    ).json()
    assert found["results"][0]["memory"]["id"] == str(named.pk)


@pytest.mark.django_db
def test_a_fact_the_index_walk_misses_is_still_found_as_a_duplicate(
    acme: Tenant, django_capture_on_commit_callbacks
) -> None:
    """The nearest current facts come through the HNSW index; a walk that comes back short
    (here starved: one candidate, no iterative scan, among others' identical facts) is
    followed by comparing every vector, so the fact said again is still one memory."""
    from django.db import connection

    from tests.recall.plans import recorded_statements

    for other in range(12):
        body = {
            "subject": f"other-{other}",
            "session": "s1",
            "messages": turns(("user", "I live in Lyon.")),
        }
        assert post(acme, body, capture=django_capture_on_commit_callbacks).status_code == 201
    body = {"subject": "u1", "session": "s1", "messages": turns(("user", "I live in Lyon."))}
    assert post(acme, body, capture=django_capture_on_commit_callbacks).status_code == 201
    with connection.cursor() as cursor:  # until the test's transaction ends
        cursor.execute("ANALYZE memories_memory")
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute("SET LOCAL hnsw.ef_search = 1")
        cursor.execute("SET LOCAL hnsw.iterative_scan = off")
    body = {"subject": "u1", "session": "s2", "messages": turns(("user", "I live in Lyon."))}
    with recorded_statements() as statements:
        assert post(acme, body, capture=django_capture_on_commit_callbacks).status_code == 201
    assert texts("u1", kind="semantic") == ["The user lives in Lyon."]
    searches = [
        sql
        for sql, _ in statements
        if "ORDER BY (embedding <=>" in sql or "ORDER BY embedding <=>" in sql
    ]
    # The walk, then (fewer than NEAR_FACTS came back) the exact comparison.
    assert len(searches) == 2, searches
    assert "+ 0" in searches[1]


@pytest.mark.django_db
def test_a_job_reads_each_turns_facts_once_and_remembers_nothing_after(
    acme: Tenant, django_capture_on_commit_callbacks, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The extraction and the session's offline summary read the same turns: the rules run
    once a turn, within the job only (what they remember is plaintext)."""
    from apps.facts import rules

    said = ["I live in Lyon.", "My sister Ana is a nurse.", "I started learning the cello."]
    read: list[str] = []
    facts_of = rules._facts_of

    def counted(text, now):  # type: ignore[no-untyped-def]
        read.append(text)
        return facts_of(text, now)

    monkeypatch.setattr(rules, "_facts_of", counted)
    body = {"subject": "u1", "session": "s1", "messages": turns(*(("user", s) for s in said))}
    assert post(acme, body, capture=django_capture_on_commit_callbacks).status_code == 201
    assert "The user lives in Lyon." in texts("u1", kind="semantic")
    assert Session.objects.get().summaries.exists()  # the summary read the turns too
    assert [read.count(text) for text in said] == [1, 1, 1]
    assert rules._remembered.get() is None
    read.clear()
    now = datetime.now(UTC)
    assert rules.facts_of(said[0], now) == rules.facts_of(said[0], now)
    assert read == [said[0], said[0]]  # outside a job, nothing is remembered


SENT_ONE_AT_A_TIME = [
    "Hi, I'm Mei. I live in Hangzhou and I work as a pastry chef.",
    "We walked along the river in Lyon for two hours.",
    "I'm allergic to peanuts.",
    "I moved to Shanghai last week.",
    "Actually, I'm not allergic to peanuts, it's shellfish.",
]


def _summary_text(session: Session) -> str:
    from apps.pipeline.selectors import session_summary_latest

    latest = session_summary_latest(session=session)
    assert latest is not None
    return open_row(KeyCache(), latest, session.namespace_id, session.subject_id)


@pytest.mark.django_db
def test_a_session_sent_a_turn_at_a_time_is_summarised_without_reading_it_again(
    acme: Tenant, django_capture_on_commit_callbacks, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each job extends the digest its session's newest summary keeps: every turn's facts
    are read once over the whole session, and the summary is the whole session's."""
    from apps.facts import rules
    from apps.pipeline.extraction import OfflineSummarizer, Turn

    read: list[str] = []
    facts_of = rules._facts_of
    monkeypatch.setattr(
        rules, "_facts_of", lambda text, now: read.append(text) or facts_of(text, now)
    )
    for text in SENT_ONE_AT_A_TIME:
        body = {"subject": "u1", "session": "s1", "messages": turns(("user", text))}
        assert post(acme, body, capture=django_capture_on_commit_callbacks).status_code == 201
    assert [read.count(text) for text in SENT_ONE_AT_A_TIME] == [1] * 5
    session = Session.objects.get()
    whole = OfflineSummarizer(words=150).summarize(
        [Turn("user", text, i) for i, text in enumerate(SENT_ONE_AT_A_TIME)]
    )
    assert _summary_text(session) == whole
    assert "shellfish" in whole
    assert "(previously: lives in Hangzhou)" in whole
    digests = list(session.summaries.order_by("version").values_list("digest_encrypted", flat=True))
    assert len(digests) == 5
    assert digests[:-1] == [None] * 4
    assert digests[-1] is not None
    assert b"shellfish" not in bytes(digests[-1])  # encrypted, like the summary


@pytest.mark.django_db
def test_a_forgotten_turn_lives_on_in_no_later_summary(
    acme: Tenant, django_capture_on_commit_callbacks
) -> None:
    """The privacy portal's delete of a turn deletes the summary versions made from it (and
    so their digests): the session's summary is the one from before it, and the next is
    made from the turns that are left."""
    from apps.privacy.services import memories_forget

    for text in ("I live in Hangzhou.", "My sister Ana is a nurse in Porto."):
        body = {"subject": "u1", "session": "s1", "messages": turns(("user", text))}
        assert post(acme, body, capture=django_capture_on_commit_callbacks).status_code == 201
    session = Session.objects.get()
    assert "Porto" in _summary_text(session)
    turn = Memory.objects.get(
        kind="episodic", source__message=str(Message.objects.get(position=1).pk)
    )
    assert memories_forget(actor=Actor.system("tests"), subject=session.subject, ids=[turn.pk]) == 1
    assert list(session.summaries.values_list("through_position", flat=True)) == [0]
    assert _summary_text(session) == "The user lives in Hangzhou."
    assert AuditEvent.objects.get(action="memory.delete").details["summaries"] == 1
    body = {
        "subject": "u1",
        "session": "s1",
        "messages": turns(("user", "I'm learning the cello.")),
    }
    assert post(acme, body, capture=django_capture_on_commit_callbacks).status_code == 201
    latest = _summary_text(session)
    assert "Hangzhou" in latest
    assert "Porto" not in latest
    assert "Ana" not in latest
