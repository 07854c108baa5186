"""The load test's data: 20 namespaces of generated memories, their API keys, an admin.

    .venv/bin/python bench/loadtest/seed.py --out var/loadtest [--namespaces 20]
                                            [--memories 5000] [--subjects 50]

Run by `run.py` with the production environment it gives the server (DATABASE_URL at the
load test's own database, the same MEMORYHUB_KEK), never by hand on the project's database.

Memories are planned and stored as `bench/recall_bench.py` stores them (its functions,
imported): one plan of `namespaces x memories` over `namespaces x subjects` subjects, each
namespace taking its own block of subjects; vectors composed from a pool the real model
embedded once; `services.memories_create_bulk` in batches of 1,000 with the HNSW and keyword
GIN indexes dropped for the load and rebuilt after it (also on failure), then VACUUM ANALYZE.
A namespace's description records the seed's size: when every namespace is there with that
description and its memories, loading is skipped.

Every run then revokes the previous load-test keys, makes one key per namespace
(memories:read, memories:write, context) and gives the admin `loadtest-admin` a new password;
they go to `<out>/credentials.json` (0600), read by the locustfile. `<out>/workload.json`
(0600) holds what the simulated apps send: per namespace its subjects, recall queries
(paraphrases of a subject's memories), new facts to write and user turns for `messages`.
Nothing here prints a memory, a query or a key.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402

from apps.accounts.models import ApiKey, Permission  # noqa: E402
from apps.accounts.services import api_key_create, api_key_revoke  # noqa: E402
from apps.audit.actors import Actor  # noqa: E402
from apps.memories.embeddings import get_provider, set_provider  # noqa: E402
from apps.memories.models import Memory  # noqa: E402
from apps.memories.row_encryption import KeyCache  # noqa: E402
from apps.memories.services import memories_create_bulk  # noqa: E402
from apps.namespaces.models import Namespace  # noqa: E402
from apps.namespaces.services import namespace_create  # noqa: E402
from bench import recall_bench  # noqa: E402  (its plan and load functions)

ACTOR = Actor.system("loadtest-seed")
ADMIN = "loadtest-admin"
KEY_NAME = "loadtest {slug}"
PERMISSIONS = [Permission.MEMORIES_READ, Permission.MEMORIES_WRITE, Permission.CONTEXT]
QUERIES_PER_NAMESPACE = 300
WRITES_PER_NAMESPACE = 300
TURNS_PER_NAMESPACE = 200
# First-person statements the offline extractor turns into facts (slots: recall_bench.WORDS).
USER_TURNS = [
    "I live in {city} now, close to the station.",
    "My {relation} {person} is coming to visit in {month}.",
    "I prefer {drink} in the morning.",
    "I'm allergic to {allergen}, please remember that.",
    "My {pet} is called {petname}.",
    "I play {sport} every {day} evening.",
    "I'm learning {lang} with a tutor from {city}.",
    "I work on the {project} project, mostly in {tool}.",
    "Actually, I moved to {city} last {month}.",
    "I really don't like {dislike}.",
    "Can you remind me what I said about {topic}?",
    "I'm reading {book} at the moment.",
]


def slug_of(index: int) -> str:
    return f"lt-{index:02d}"


def description_of(args: argparse.Namespace) -> str:
    return (
        f"MemoryHub load test: {args.memories} memories over {args.subjects} subjects "
        f"(seed {args.seed}, pool {args.pool})"
    )


def write_private(path: Path, payload: dict[str, Any]) -> None:
    """Write JSON readable by the owner only (created 0600, replaced atomically)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(payload, handle)
    os.chmod(temporary, 0o600)
    os.replace(temporary, path)


def seeded(args: argparse.Namespace) -> bool:
    """Whether every namespace holds the seed already; refuses a different seed's data."""
    slugs = [slug_of(i) for i in range(args.namespaces)]
    found = {n.slug: n for n in Namespace.objects.filter(slug__in=slugs)}
    if not found:
        return False
    expected = description_of(args)
    for slug in slugs:
        namespace = found.get(slug)
        if namespace is None or namespace.description != expected:
            raise SystemExit(
                f"namespace {slug} is missing or was seeded with other sizes: run with --reseed"
            )
        if Memory.objects.filter(namespace=namespace).count() < args.memories:
            raise SystemExit(f"namespace {slug} is not fully loaded: run with --reseed")
    return True


def load(args: argparse.Namespace, data: recall_bench.Dataset, owner: dict[str, int]) -> None:
    real = get_provider()
    vectors = recall_bench.compose_vectors(data, real, print, args.seed)
    namespaces = [
        namespace_create(
            actor=ACTOR,
            slug=slug_of(i),
            name=f"Load test app {i:02d}",
            description=description_of(args),
        )
        for i in range(args.namespaces)
    ]
    by_namespace: dict[int, list[Any]] = defaultdict(list)
    for planned in data.items:  # the plan's interleaved order, kept within each namespace
        by_namespace[owner[planned.item.subject_external_id or ""]].append(planned.item)
    saved = recall_bench.index_definitions()
    missing = [name for name in recall_bench.BULK_INDEXES if name not in saved]
    if missing:
        raise SystemExit(f"indexes missing before the load: {missing}")
    recall_bench.drop_indexes(list(saved))
    print(f"  dropped {', '.join(saved)} for the load", flush=True)
    started = time.perf_counter()
    try:
        pool = recall_bench.PoolEmbedder(real.name, real.dimensions, vectors)
        set_provider(pool)  # type: ignore[arg-type]  # it takes list[str], not Sequence[str]
        done = 0
        for index, namespace in enumerate(namespaces):
            keys = KeyCache()
            items = by_namespace[index]
            for start in range(0, len(items), recall_bench.BATCH):
                memories_create_bulk(
                    actor=ACTOR,
                    namespace=namespace,
                    items=items[start : start + recall_bench.BATCH],
                    keys=keys,
                )
            done += len(items)
            rate = done / (time.perf_counter() - started)
            print(
                f"  loaded {namespace.slug}: {done:>7} memories in all, {rate:,.0f}/s", flush=True
            )
    finally:
        set_provider(real)
        index_seconds = recall_bench.build_indexes(saved, print)
        vacuum_seconds = recall_bench.vacuum_analyze()
    print(
        f"  load {time.perf_counter() - started - index_seconds - vacuum_seconds:.1f}s, "
        f"index build {index_seconds:.1f}s, VACUUM ANALYZE {vacuum_seconds:.1f}s; "
        f"{recall_bench.relation_sizes()}",
        flush=True,
    )


def credentials(args: argparse.Namespace) -> dict[str, Any]:
    """New keys (the previous load-test ones revoked) and a new admin password."""
    keys = []
    for i in range(args.namespaces):
        namespace = Namespace.objects.get(slug=slug_of(i))
        name = KEY_NAME.format(slug=namespace.slug)
        for old in ApiKey.objects.filter(name=name, revoked_at__isnull=True):
            api_key_revoke(actor=ACTOR, api_key=old)
        _, raw = api_key_create(
            actor=ACTOR, name=name, namespaces=[namespace], permissions=PERMISSIONS
        )
        keys.append({"namespace": namespace.slug, "key": raw})
    User = get_user_model()
    password = secrets.token_urlsafe(18)
    admin = User.objects.filter(username=ADMIN).first()
    if admin is None:
        User.objects.create_superuser(username=ADMIN, email="", password=password)
    else:
        admin.set_password(password)
        admin.is_superuser = admin.is_staff = admin.is_active = True
        admin.save()
    return {"keys": keys, "admin": {"username": ADMIN, "password": password}}


def workload(
    args: argparse.Namespace, data: recall_bench.Dataset, owner: dict[str, int]
) -> dict[str, Any]:
    rng = random.Random(args.seed + 7)
    cores_of: dict[str, list[recall_bench.Core]] = defaultdict(list)
    for planned in data.items:
        cores_of[planned.item.subject_external_id or ""].append(planned.core)
    apps = []
    for i in range(args.namespaces):
        subjects = sorted(s for s, n in owner.items() if n == i)
        queries = []
        for _ in range(QUERIES_PER_NAMESPACE):
            subject = rng.choice(subjects)
            queries.append([subject, recall_bench.make_query(rng.choice(cores_of[subject]), rng)])
        writes = []
        for _ in range(WRITES_PER_NAMESPACE):
            family = recall_bench.FAMILIES[rng.randrange(len(recall_bench.FAMILIES))]
            content = recall_bench.fill(family.content, {}, rng) + "."
            writes.append([rng.choice(subjects), content, str(family.kind)])
        turns = [
            recall_bench.fill(rng.choice(USER_TURNS), {}, rng) for _ in range(TURNS_PER_NAMESPACE)
        ]
        apps.append(
            {
                "namespace": slug_of(i),
                "subjects": subjects,
                "queries": queries,
                "writes": writes,
                "turns": turns,
            }
        )
    return {"apps": apps, "memories": args.memories * args.namespaces}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder of the two JSON files")
    parser.add_argument("--namespaces", type=int, default=20)
    parser.add_argument("--memories", type=int, default=5000, help="per namespace")
    parser.add_argument("--subjects", type=int, default=50, help="per namespace")
    parser.add_argument("--pool", type=int, default=6000, help="distinct sentence cores")
    parser.add_argument("--seed", type=int, default=20_241_201)
    args = parser.parse_args()
    if min(args.namespaces, args.memories, args.subjects, args.pool) < 1:
        parser.error("sizes must be positive")
    if args.memories < args.subjects:
        parser.error("--memories must be at least --subjects")
    if not connection.settings_dict["NAME"].endswith("_loadtest"):
        raise SystemExit("refusing to seed a database whose name does not end in _loadtest")

    started = time.perf_counter()
    data = recall_bench.plan(
        args.memories * args.namespaces,
        args.subjects * args.namespaces,
        0,
        args.pool,
        args.seed,
    )
    owner = {subject: n // args.subjects for n, subject in enumerate(data.subjects)}
    print(
        f"planned {len(data.items)} memories over {len(data.subjects)} subjects in "
        f"{args.namespaces} namespaces in {time.perf_counter() - started:.1f}s",
        flush=True,
    )
    if seeded(args):
        print("the seed is in place: not loading again (--reseed to redo)", flush=True)
    else:
        load(args, data, owner)
    args.out.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_private(args.out / "credentials.json", credentials(args))
    write_private(args.out / "workload.json", workload(args, data, owner))
    print(
        f"wrote {args.namespaces} API keys ({', '.join(PERMISSIONS)}) and the admin "
        f"{ADMIN}'s password to {args.out / 'credentials.json'} (0600)",
        flush=True,
    )


if __name__ == "__main__":
    main()
