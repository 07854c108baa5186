"""Importing a Mem0 export at scale: `manage.py import_mem0 --export` on a generated file.

    .venv/bin/python bench/mem0_import_bench.py [--memories 10000] [--users 200]

The file is what Mem0's platform returns for get_all (paginated v3 pages): the memories of
`--users` users, about a tenth of them in Chinese, with categories, agent and run ids, and a
few repeated texts (duplicates). The command imports it into a temporary namespace through
the write path (PII policy `tag`, encryption, both embedding models, deduplication, audit),
its progress bar on standard error. Then the same texts are embedded by the namespace's
models alone, in batches of the import's size: the import's rate is printed as a ratio to
that batch rate, measured in the same run on the same machine, so the figure says what the
write path costs beyond the embedding. A second run of the command shows that it imports
nothing twice. The namespace is deleted at the end, also on failure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

from apps.audit.actors import Actor  # noqa: E402
from apps.audit.models import AuditEvent  # noqa: E402
from apps.mem0_bridge.services.importing import BATCH_SIZE  # noqa: E402
from apps.memories.embeddings import get_provider  # noqa: E402
from apps.memories.models import Memory  # noqa: E402
from apps.memories.multilingual import get_multilingual_provider  # noqa: E402
from apps.namespaces.models import Namespace  # noqa: E402
from apps.namespaces.services import namespace_create, namespace_delete  # noqa: E402
from bench.machine import cpu, terminate_as_exit  # noqa: E402

ACTOR = Actor.system("mem0-import-bench")
PAGE = 100
ENGLISH = [
    "{name} is allergic to {thing}",
    "{name} lives in {city} and works as a {job}",
    "{name} prefers {thing} over everything else",
    "{name} is planning a trip to {city} in {month}",
    "{name}'s favourite colour is {colour}",
    "{name} asked to be reminded about the {thing} appointment",
    "{name} drives to {city} every {month} to see family",
]
CHINESE = [
    "{name}住在{city_zh}，喜欢喝{tea}",  # noqa: RUF001 (Chinese punctuation)
    "{name}对{food}过敏",
    "{name}计划{month_zh}去{city_zh}旅行",
]
WORDS: dict[str, list[str]] = {
    "thing": ["peanuts", "jazz", "sushi", "hiking", "chess", "opera", "kayaking", "cats"],
    "city": ["Lyon", "Porto", "Kyoto", "Denver", "Tartu", "Accra", "Hobart", "Cusco"],
    "job": ["nurse", "teacher", "welder", "pilot", "chemist", "designer"],
    "month": ["March", "April", "June", "October", "December"],
    "colour": ["green", "blue", "amber", "violet", "teal"],
    "city_zh": ["上海", "北京", "杭州", "成都", "西安"],
    "tea": ["绿茶", "红茶", "乌龙茶", "普洱"],
    "food": ["花生", "海鲜", "牛奶", "鸡蛋"],
    "month_zh": ["三月", "五月", "九月", "十二月"],
}


def make_export(count: int, users: int, rng: random.Random) -> list[dict[str, Any]]:
    """Mem0's paginated get_all pages holding `count` memories; 1 in 50 repeats an earlier
    text of its user (a duplicate for the import to find)."""
    memories: list[dict[str, Any]] = []
    for i in range(count):
        user = f"user-{i % users}"
        chinese = rng.random() < 0.1
        template = rng.choice(CHINESE if chinese else ENGLISH)
        words = {key: rng.choice(values) for key, values in WORDS.items()}
        text = template.format(name="王先生" if chinese else f"User {i % users}", **words)
        text += f" ({i})"
        if i % 50 == 49 and i >= users:  # the same user's text again
            text = memories[i - users]["memory"]
        memories.append(
            {
                "id": f"mem0-{i:06d}-{secrets.token_hex(4)}",
                "memory": text,
                "user_id": user,
                "agent_id": rng.choice(["support-bot", "travel-bot", None]),
                "run_id": f"run-{i % (users * 3)}" if rng.random() < 0.5 else None,
                "metadata": {"source": "bench"},
                "categories": rng.sample(["health", "travel", "food", "work"], k=rng.randint(0, 2)),
                "created_at": f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}T10:{i % 60:02d}:00Z",
                "updated_at": f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}T11:{i % 60:02d}:00Z",
            }
        )
    return [
        {
            "count": count,
            "next": "next" if start + PAGE < count else None,
            "previous": "previous" if start else None,
            "results": memories[start : start + PAGE],
        }
        for start in range(0, count, PAGE)
    ]


def embedding_rate(texts: list[str]) -> tuple[float, float]:
    """Texts per second of the namespace's models on these texts, in batches of the
    import's size: (the primary model alone, the primary and the multilingual together)."""
    primary, multilingual = get_provider(), get_multilingual_provider()
    batches = [texts[i : i + BATCH_SIZE] for i in range(0, len(texts), BATCH_SIZE)]
    started = time.perf_counter()
    for batch in batches:
        primary.embed_documents(batch)
    primary_seconds = time.perf_counter() - started
    multilingual_seconds = 0.0
    if multilingual is not None:
        started = time.perf_counter()
        for batch in batches:
            multilingual.embed_documents(batch)
        multilingual_seconds = time.perf_counter() - started
    return len(texts) / primary_seconds, len(texts) / (primary_seconds + multilingual_seconds)


def run_import(path: Path, slug: str) -> float:
    started = time.perf_counter()
    call_command("import_mem0", namespace=slug, export=path)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if min(args.memories, args.users) < 1:
        parser.error("sizes must be positive")
    settings.DEBUG = False
    rng = random.Random(args.seed)
    pages = make_export(args.memories, args.users, rng)
    texts = [memory["memory"] for page in pages for memory in page["results"]]
    get_provider().embed_documents(["warm up the model"])
    multilingual = get_multilingual_provider()
    if multilingual is not None:
        multilingual.embed_documents(["预热模型"])
    print(f"CPU: {cpu()}")
    print(
        f"models: {get_provider().name}"
        + (f" + {multilingual.name}" if multilingual is not None else "")
    )
    namespace = namespace_create(
        actor=ACTOR, slug=f"bench-mem0-{secrets.token_hex(4)}", name="Mem0 import benchmark"
    )
    Namespace.objects.filter(pk=namespace.pk).update(pii_policy="tag")
    with tempfile.TemporaryDirectory() as folder, terminate_as_exit():
        path = Path(folder) / "mem0-export.json"
        path.write_text(json.dumps(pages, ensure_ascii=False), encoding="utf-8")
        try:
            seconds = run_import(path, namespace.slug)
            stored = Memory.objects.filter(namespace=namespace).count()
            again = run_import(path, namespace.slug)
            totals = AuditEvent.objects.filter(namespace_id=namespace.pk, action="mem0.import")
            second = totals.order_by("-id").first()
            if second is None or second.details["imported"] != 0:
                raise SystemExit("the second run imported again")
        finally:
            namespace_delete(actor=ACTOR, namespace=namespace)
        primary_rate, models_rate = embedding_rate(texts)
    rate = args.memories / seconds
    print(f"{args.memories} records, {stored} memories stored, in {seconds:.1f} s: {rate:.0f}/s")
    print(f"second run: nothing imported, {again:.1f} s")
    print(f"embedding alone, batches of {BATCH_SIZE}: primary {primary_rate:.0f} texts/s; ", end="")
    print(f"the namespace's models together {models_rate:.0f} texts/s")
    print(f"import rate / the models' batch rate: {rate / models_rate:.2f}", end="")
    print(f" (/ the primary's alone: {rate / primary_rate:.2f})")


if __name__ == "__main__":
    main()
