"""The overview: per-day charts of the last 30 days with their figures, the review queue's
size, retention coming due, the audit chain's last verification; only of the namespaces the
user may see. Recall and context assembly record their server time and tokens for it."""

from __future__ import annotations

import re
from datetime import timedelta

from django.utils import timezone

from apps.audit.actors import Actor
from apps.audit.models import ChainVerification
from apps.context.services import ContextRequest, context_assemble
from apps.governance.figures import overview_for
from apps.governance.selectors import review_counts
from apps.memories.models import Memory
from apps.pipeline.models import Job
from apps.recall.models import RecallLog
from apps.recall.search import RecallRequest, recall_memories
from tests.governance.conftest import Cast

ACTOR = Actor.system("tests")


def test_it_draws_six_charts_with_their_figures(cast: Cast) -> None:
    html = cast.client("olive").get("/").content.decode()
    assert html.count('<img src="data:image/svg+xml;base64,') == 6
    assert html.count("<details>") >= 6
    assert "New memories per day, by kind" in html
    assert "<script" not in html.split("<main", 1)[1]  # charts are pictures: no script


def test_it_counts_per_day_in_the_viewers_days(cast: Cast) -> None:
    two_days_ago = timezone.now() - timedelta(days=2)
    Memory.objects.filter(pk__in=[cast.fact.pk, cast.pii.pk]).update(created_at=two_days_ago)
    figures = overview_for(namespaces=[cast.acme])
    index = figures.days.index(timezone.localdate(two_days_ago))
    assert figures.new_memories["semantic"][index] == 2
    total = Memory.objects.filter(namespace=cast.acme).count()
    assert sum(sum(values) for values in figures.new_memories.values()) == total
    assert figures.turns[-1] == 3  # the cast's conversation, today


def test_it_reports_recall_latency_percentiles_and_tokens(cast: Cast) -> None:
    for duration in (10.0, 20.0, 30.0, 40.0):
        RecallLog.objects.create(namespace=cast.acme, actor_type="api_key", duration_ms=duration)
    RecallLog.objects.create(namespace=cast.acme, actor_type="api_key", purpose="context",
                             duration_ms=50.0, tokens=700)  # fmt: skip
    figures = overview_for(namespaces=[cast.acme])
    assert figures.recalls[-1] == 6  # these five and the cast's own recall
    assert figures.recall_p50[-1] == 30.0
    assert figures.recall_p95[-1] == 48.0
    assert figures.tokens[-1] == 700


def test_it_counts_failed_jobs(cast: Cast) -> None:
    Job.objects.create(namespace=cast.acme, kind="ingest", status="failed")
    assert overview_for(namespaces=[cast.acme]).failed_jobs[-1] == 1


def test_it_sizes_the_review_queue_and_what_retention_does_soon(cast: Cast) -> None:
    cast.acme.retention_days = 30
    cast.acme.save()
    Memory.objects.filter(pk=cast.shared.pk).update(created_at=timezone.now() - timedelta(days=25))
    Memory.objects.filter(pk=cast.fact.pk).update(expires_at=timezone.now() + timedelta(days=3))
    figures = overview_for(namespaces=[cast.acme])
    assert review_counts(namespaces=[cast.acme]) == {
        "disputed": 0,
        "pending": 1,
        "low_confidence": 0,
        "duplicate": 0,
        "pii": 1,
        "superseded": 2,
    }
    assert figures.retention_due == 1
    assert figures.expiring == 1


def test_it_shows_the_chain_verified_or_broken(cast: Cast) -> None:
    now = timezone.now()
    ChainVerification.objects.create(
        started_at=now,
        finished_at=now,
        status="succeeded",
        requested_by="beat",
        through_event_id=41,
        through_at=now,
    )
    html = cast.client("olive").get("/n/acme/").content.decode()
    assert "Verified through event #41" in html
    ChainVerification.objects.create(started_at=now, finished_at=now + timedelta(seconds=1),
                                     status="broken", requested_by="beat",
                                     broken_event_id=7, broken_reason="hash mismatch")  # fmt: skip
    html = cast.client("olive").get("/n/acme/").content.decode()
    assert re.search(r'class="bad" role="alert">Broken at event #7: hash mismatch', html)


def test_it_shows_only_the_users_namespaces(cast: Cast) -> None:
    acme_total = Memory.objects.filter(namespace=cast.acme).count()
    html = cast.client("oscar").get("/").content.decode()  # a member of globex only
    assert "1 memories written in the last 30 days." in html
    assert f"{acme_total} memories written" not in html
    assert cast.client("oscar").get("/n/acme/").status_code == 404


def test_it_records_recall_time_and_context_tokens(cast: Cast) -> None:
    recall_memories(
        RecallRequest(actor=ACTOR, namespace=cast.acme, subject_external_id="u1", query="tea")
    )
    logged = RecallLog.objects.filter(namespace=cast.acme).latest("created_at")
    assert logged.duration_ms is not None
    assert logged.duration_ms > 0
    result = context_assemble(
        actor=ACTOR,
        namespace=cast.acme,
        spec=ContextRequest.from_data(data={"subject": "u1", "query": "tea"}, strategy="buffer"),
    )
    logged = RecallLog.objects.get(pk=result["recall_id"])
    assert logged.tokens == result["total_tokens"]
    assert logged.duration_ms is not None


def test_it_serves_the_overview_from_its_rollup_until_refreshed(cast: Cast) -> None:
    from apps.governance.models import OverviewSnapshot
    from apps.governance.rollups import overview_snapshots_refresh
    from apps.memories.services import NewMemory, memory_create

    client = cast.client("olive")
    total = Memory.objects.filter(namespace=cast.acme).count()
    assert f"{total} memories written" in client.get("/n/acme/").content.decode()
    memory_create(
        actor=ACTOR, namespace=cast.acme, item=NewMemory(subject_external_id="u1", content="New.")
    )
    assert f"{total} memories written" in client.get("/n/acme/").content.decode()  # the rollup
    assert overview_snapshots_refresh() == 1
    assert f"{total + 1} memories written" in client.get("/n/acme/").content.decode()
    assert OverviewSnapshot.objects.count() == 1


def test_it_recomputes_a_stale_rollup_and_forgets_unused_ones(cast: Cast) -> None:
    from apps.governance.models import OverviewSnapshot
    from apps.governance.rollups import overview_snapshots_refresh

    client = cast.client("olive")
    client.get("/n/acme/")
    OverviewSnapshot.objects.update(computed_at=timezone.now() - timedelta(minutes=2))
    Job.objects.create(namespace=cast.acme, kind="ingest", status="failed")
    assert "1 jobs failed" in client.get("/n/acme/").content.decode()
    OverviewSnapshot.objects.update(used_at=timezone.now() - timedelta(days=2))
    assert overview_snapshots_refresh() == 0
    assert not OverviewSnapshot.objects.exists()


def test_it_says_which_extractor_the_namespace_runs(cast: Cast, settings) -> None:  # type: ignore[no-untyped-def]
    page = cast.client("vera").get("/n/acme/").content.decode()
    assert "extracted by the offline rules" in page
    settings.MEMORYHUB_EXTRACTOR = "llm"
    settings.MEMORYHUB_LLM_URL = "http://127.0.0.1:11434/v1"
    settings.MEMORYHUB_LLM_MODEL = "qwen2.5:7b"
    page = cast.client("vera").get("/n/acme/").content.decode()
    assert "extracted by an LLM: qwen2.5:7b at 127.0.0.1" in page
