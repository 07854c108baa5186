"""Conversation ingestion throughput, end to end, with the offline extractor.

    .venv/bin/python bench/ingest_bench.py [--turns 2000] [--batch 20] [--subjects 20]
        [--long-sessions]

Each request is `ingestion.messages_ingest` (validation, PII policy `redact`, encrypted turns,
the job) followed by its job run in-process as without a broker (extraction, consolidation
against the subject's facts, embedding with the configured model, encryption, keyword index,
storage), in batches of `--batch` turns alternating user and assistant. The conversations
are generated from templates: small talk, self-disclosures (facts, preferences, plans,
corrections) and repeats, so consolidation sees duplicates and superseded facts.

Prints turns/s and memories/s against the goal of >= 100 turns/s on 2 cores, and the
decisions taken. With `--long-sessions` each subject keeps one session (an app that sends
its chat a turn at a time: `--batch 1 --subjects 1`), and the median request time of the
first and the last quarter of the run shows whether a request costs more as its session
grows. The temporary namespace is deleted at the end, also on failure.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django

django.setup()

from django.conf import settings  # noqa: E402

from apps.audit.actors import Actor  # noqa: E402
from apps.memories.embeddings import get_provider  # noqa: E402
from apps.memories.models import Memory  # noqa: E402
from apps.namespaces.models import Namespace  # noqa: E402
from apps.namespaces.services import namespace_create, namespace_delete  # noqa: E402
from apps.pipeline.ingestion import IncomingMessage, messages_ingest  # noqa: E402
from apps.pipeline.models import ConsolidationLog  # noqa: E402

ACTOR = Actor.system("ingest-bench")
GOAL_TURNS_PER_S = 100.0
CITIES = ["Lyon", "Porto", "Kyoto", "Denver", "Tartu", "Accra", "Hobart", "Cusco", "Bergen"]
THINGS = ["jazz", "sushi", "hiking", "chess", "opera", "kayaking", "baking", "anime", "rugby"]
COLOURS = ["green", "blue", "amber", "violet", "teal", "crimson"]
USER = [
    "My favourite colour is {colour}.",
    "Actually, my favourite colour is {colour}.",
    "I live in {city} these days.",
    "I really love {thing}, it relaxes me.",
    "I don't like {thing} at all.",
    "I'm planning to visit {city} next spring with my sister.",
    "Can you recommend a good book about {thing}?",
    "What's the weather like in {city} in March?",
    "I had a long day at work, we shipped the {thing} feature finally.",
    "My dog's name is {name}.",
    "I'm allergic to {thing}.",
    "Remind me what I told you about {thing}?",
]
ASSISTANT = [
    "Thanks for sharing! I'll keep that in mind.",
    "Here are three suggestions you might enjoy.",
    "Sounds great. Anything else I can help with?",
    "Good question: it depends on the season, but usually mild.",
]
NAMES = ["Biscuit", "Rex", "Mochi", "Luna", "Pixel"]


def make_turns(count: int, rng: random.Random) -> list[IncomingMessage]:
    turns = []
    for i in range(count):
        if i % 2 == 0:
            text = rng.choice(USER).format(
                colour=rng.choice(COLOURS),
                city=rng.choice(CITIES),
                thing=rng.choice(THINGS),
                name=rng.choice(NAMES),
            )
            turns.append(IncomingMessage(role="user", content=text))
        else:
            turns.append(IncomingMessage(role="assistant", content=rng.choice(ASSISTANT)))
    return turns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--subjects", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--long-sessions", action="store_true", help="one session a subject")
    args = parser.parse_args()
    if min(args.turns, args.batch, args.subjects) < 1:
        parser.error("sizes must be positive")
    settings.DEBUG = False
    settings.CELERY_TASK_ALWAYS_EAGER = True  # the job runs in this process, after its request
    rng = random.Random(args.seed)
    provider = get_provider()
    provider.embed_documents(["warm up the model"])
    namespace = namespace_create(
        actor=ACTOR, slug=f"bench-ingest-{secrets.token_hex(4)}", name="Ingest benchmark"
    )
    Namespace.objects.filter(pk=namespace.pk).update(pii_policy="redact")
    namespace.refresh_from_db()
    print(f"embedder {provider.name}; cores {os.cpu_count()}; batch {args.batch} turns")
    try:
        done = 0
        started = time.perf_counter()
        request = 0
        took: list[float] = []
        while done < args.turns:
            size = min(args.batch, args.turns - done)
            subject = f"user-{request % args.subjects}"
            sent = time.perf_counter()
            job, _ = messages_ingest(
                actor=ACTOR,
                namespace=namespace,
                subject_external_id=subject,
                session_external_id="s-0"
                if args.long_sessions
                else f"s-{request // args.subjects}",
                messages=make_turns(size, rng),
            )
            took.append((time.perf_counter() - sent) * 1000)
            if job.status != "succeeded":
                raise SystemExit(f"job {job.id} {job.status}: {job.error}")
            done += size
            request += 1
        elapsed = time.perf_counter() - started
        memories = Memory.objects.filter(namespace=namespace).count()
        decisions = Counter(
            ConsolidationLog.objects.filter(namespace=namespace).values_list("decision", flat=True)
        )
        rate = done / elapsed
        print(f"{done} turns in {request} requests, {elapsed:.1f}s: {rate:.0f} turns/s")
        print(f"{memories} memories stored ({memories / elapsed:.0f}/s)")
        print(f"consolidation decisions: {dict(decisions)}")
        quarter = max(len(took) // 4, 1)
        first, last = statistics.median(took[:quarter]), statistics.median(took[-quarter:])
        print(f"a request, median: first quarter {first:.1f} ms, last quarter {last:.1f} ms")
        verdict = "met" if rate >= GOAL_TURNS_PER_S else "NOT met"
        print(f"goal >= {GOAL_TURNS_PER_S:.0f} turns/s: {verdict}")
    finally:
        namespace_delete(actor=ACTOR, namespace=namespace)


if __name__ == "__main__":
    main()
