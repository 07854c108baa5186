"""Recall latency at scale, next to an exact in-memory scan of the same vectors.

    .venv/bin/python bench/recall_bench.py [--memories 100000] [--subjects 1000] [--big 10000]
                                           [--queries 200] [--explain] [--quiet-wait 300]
                                           [--torch-threads N] [--restore-indexes]
                                           [--keep | --reuse SLUG] [--no-subject-indexes]
                                           [--row-security]

Goal (server-side, query embedding included, 2 cores): recall p95 <= 25 ms with 100k memories
in the namespace over 1,000 subjects (layout A: ~100 memories per subject) and with one
subject holding 10k memories (layout B). One temporary namespace holds both layouts:
`--memories` over `--subjects` subjects plus one extra subject with `--big` memories.

Load. Contents are short sentences (8-30 words) from templates and word lists, a share of
them conversation turns (sessions with neighbour context), generated deterministically. They
go through `services.memories_create_bulk` (encryption, keyword index, versions, neighbour
context) in batches of 1,000, in an interleaved order (a subject's rows are spread over the
table, as when writes arrive over time). The load is not model-bound: the real model embeds
a pool of distinct sentence cores and follow-up clauses once, and each memory's vector is the
word-weighted mean of its parts plus a little noise (its fidelity to the model's own
embedding of the full sentence is printed). The HNSW and GIN keyword indexes are dropped for
the load and rebuilt afterwards from their exact definitions (maintenance_work_mem 1GB, one
parallel worker), then VACUUM ANALYZE; times are printed.

Timing. Queries are paraphrases of one memory of the subject (same template family and
slot words). Each timed recall is `recall.recall_memories(..., k=10)` with the real query
embedder (the configured provider, MiniLM by default), wall time around the call plus its
`timings_ms` stages; the database time of each SQL statement in it is recorded through an
execute wrapper. Layouts A (a random subject each time) and B (the big subject) alternate.
The baseline, in the same loop: the same query embedded again plus a brute-force top-10
cosine over the subject's vectors held in numpy. Vector-candidate overlap is the share of
the exact top-10 (pure cosine) found among the 60 nearest by `embedding` that the HNSW index
returns when asked as the recall asks it (untimed).

Latency figures are only as good as the machine is idle: the line under the table says how
much CPU other processes took during the timing, and the figures are repeated over the
"quiet" samples only (other processes under 0.25 cores while the sample ran); `--quiet-wait S`
first waits up to S seconds for the machine to calm down. `--torch-threads N` sets torch's
thread count for the timed queries.

`--row-security` adds a walled twin of each layout ("A+wall", "B+wall"): the same recalls, each
in a transaction behind the namespace's row-level security wall (memoryhub/row_security.py),
as the API runs them; the unwalled layouts are its baseline in the same loop.

The namespace is deleted at the end, also on failure (audit events stay: append-only), and
the indexes exist again when the script ends. After a hard kill, `--restore-indexes`
recreates any missing index of the memory table from the model's definitions.

For iterating on the recall code: `--keep` leaves the loaded namespace in place (its load
order is saved under var/bench/) and `--reuse SLUG` times against it without loading again;
`--reuse SLUG --drop` deletes it at the end.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import secrets
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django

django.setup()

import numpy as np  # noqa: E402
from django.conf import settings  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from apps.audit.actors import Actor  # noqa: E402
from apps.memories.embeddings import get_provider, normalise, set_provider  # noqa: E402
from apps.memories.fields import vector_literal  # noqa: E402
from apps.memories.models import Kind, Memory, Subject  # noqa: E402
from apps.memories.row_encryption import KeyCache  # noqa: E402
from apps.memories.services import NewMemory, memories_create_bulk  # noqa: E402
from apps.namespaces.models import Namespace  # noqa: E402
from apps.namespaces.services import namespace_create, namespace_delete  # noqa: E402
from apps.recall import subject_indexes  # noqa: E402
from apps.recall.search import RecallRequest, recall_memories  # noqa: E402
from apps.recall.statements import VECTOR_CANDIDATES  # noqa: E402
from bench.machine import terminate_as_exit  # noqa: E402
from memoryhub.row_security import namespace_wall  # noqa: E402

GOAL_P95_MS = 25.0
K = 10
BATCH = 1000
ACTOR = Actor.system("recall-bench")
TABLE = Memory._meta.db_table
# Dropped for the load, rebuilt after it: the vector indexes and the keyword (GIN) ones.
BULK_INDEXES = (
    "memory_embedding_hnsw",
    "memory_token_index",
    "memory_context_index",
)

# --- Deterministic, realistic content ----------------------------------------------------------

# fmt: off
WORDS: dict[str, list[str]] = {
    "drink": [
        "green tea", "black coffee", "oat milk lattes", "sparkling water", "chai", "espresso",
        "mint tea", "hot chocolate", "cold brew", "rooibos", "orange juice", "kombucha",
        "flat whites", "earl grey", "matcha", "decaf coffee",
    ],
    "food": [
        "Thai curry", "sushi", "vegetarian lasagne", "ramen", "tacos", "Greek salad",
        "mushroom risotto", "falafel wraps", "dim sum", "pizza margherita", "pho", "paella",
        "lentil soup", "grilled salmon", "pad thai", "bibimbap", "burritos", "gnocchi",
        "Indian thali", "shakshuka", "poke bowls", "dumplings", "Caesar salad", "moussaka",
    ],
    "allergen": [
        "peanuts", "shellfish", "gluten", "lactose", "sesame", "tree nuts", "eggs", "soy",
        "penicillin", "cat dander", "pollen", "kiwi",
    ],
    "relation": [
        "sister", "brother", "mother", "father", "manager", "cousin", "partner", "daughter",
        "son", "best friend", "flatmate", "colleague", "grandmother", "uncle", "neighbour",
        "mentor",
    ],
    "person": [
        "Maria", "Tom", "Aisha", "Kenji", "Lucia", "Omar", "Priya", "Jonas", "Elena", "Sam",
        "Fatima", "Lars", "Mei", "Diego", "Hannah", "Ravi", "Chloe", "Ivan", "Noor", "Paolo",
        "Grace", "Mateo", "Yuki", "Amara", "Felix", "Sofia", "Bruno", "Leila", "Oscar", "Zoe",
        "Tariq", "Ingrid", "Marco", "Ana", "Wei", "Nadia",
    ],
    "city": [
        "Lisbon", "Berlin", "Toronto", "Osaka", "Madrid", "Nairobi", "Melbourne", "Krakow",
        "Seattle", "Porto", "Vienna", "Lyon", "Dublin", "Bangalore", "Mexico City", "Oslo",
        "Edinburgh", "Seoul", "Cape Town", "Montreal", "Prague", "Istanbul", "Austin", "Milan",
        "Copenhagen", "Athens", "Valencia", "Hamburg",
    ],
    "month": [
        "January", "February", "March", "April", "May", "June", "July", "August", "September",
        "October", "November", "December",
    ],
    "day": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
    "lang": [
        "Spanish", "Japanese", "German", "Portuguese", "Italian", "Mandarin", "French",
        "Korean", "Arabic", "Dutch", "Swedish", "Greek", "Turkish", "Polish",
    ],
    "project": [
        "billing migration", "search rewrite", "onboarding flow", "data warehouse",
        "mobile checkout", "fraud detection", "design system", "quarterly forecast",
        "customer portal", "API gateway", "recommendation engine", "support chatbot",
        "inventory sync", "analytics dashboard", "payroll integration", "marketing site",
    ],
    "tool": [
        "Python", "Rust", "TypeScript", "Postgres", "Kubernetes", "Terraform", "Figma",
        "Excel", "Jupyter notebooks", "Go", "React", "Airflow", "dbt", "Tableau", "Kotlin",
        "Swift", "Django", "Spark",
    ],
    "activity": [
        "hiking", "kayaking", "skiing", "camping", "cycling", "surfing", "rock climbing",
        "birdwatching", "sailing", "trail running", "snorkelling", "horse riding",
        "wine tasting", "fishing",
    ],
    "place": [
        "the lake", "the old harbour", "the national park", "the coast", "the mountains",
        "the botanical garden", "the river delta", "the vineyards", "the glacier",
        "the island", "the forest trail", "the canyon",
    ],
    "pet": ["dog", "cat", "parrot", "rabbit", "hamster", "tortoise", "beagle", "labrador"],
    "petname": [
        "Biscuit", "Luna", "Pepper", "Milo", "Coco", "Oreo", "Nala", "Ziggy", "Mochi",
        "Bruno", "Pixel", "Olive", "Waffles", "Juniper",
    ],
    "need": [
        "a special diet", "daily walks", "medication twice a day", "a quiet room",
        "grooming every month", "a vet check in spring", "lots of attention",
    ],
    "sport": [
        "tennis", "badminton", "football", "basketball", "squash", "volleyball",
        "table tennis", "padel", "swimming", "yoga", "boxing", "climbing",
    ],
    "venue": [
        "community centre", "sports hall", "park", "club", "gym", "leisure centre", "pool",
    ],
    "format": [
        "short", "detailed", "bullet point", "step by step", "code-first", "plain language",
        "table-based", "concise",
    ],
    "topic": [
        "taxes", "machine learning", "home repairs", "investing", "travel plans",
        "database design", "nutrition", "parenting", "career changes", "gardening",
        "photography", "contracts", "cloud costs", "exam preparation",
    ],
    "book": [
        "Dune", "Middlemarch", "The Overstory", "Sapiens", "Project Hail Mary",
        "The Remains of the Day", "Thinking, Fast and Slow", "Circe", "The Three-Body Problem",
        "Educated", "Piranesi", "The Name of the Rose",
    ],
    "gift": [
        "books", "plants", "concert tickets", "board games", "good chocolate", "vinyl records",
        "cooking classes", "handmade ceramics", "experiences rather than objects",
    ],
    "dislike": [
        "early meetings", "loud restaurants", "long phone calls", "crowded trains",
        "spicy food", "cold weather", "surprise parties", "small talk", "red-eye flights",
        "open-plan offices", "horror films", "pineapple on pizza",
    ],
    "alternative": [
        "get a written summary", "eat somewhere quiet", "send a message", "cycle to work",
        "stay in", "work from home", "fly in the morning", "watch a documentary",
    ],
    "hour": ["8am", "9:30", "11am", "noon", "2pm", "3:15", "4pm", "5:30", "6pm", "7pm"],
    "purchase": [
        "laptop", "bicycle", "sofa", "camera", "car", "phone", "standing desk",
        "washing machine", "tent", "headphones", "monitor", "coffee machine",
    ],
    "brand": [
        "Lenovo", "Canyon", "IKEA", "Fujifilm", "Volvo", "Google", "Bosch", "Sony", "Miele",
        "Apple", "Dell", "Sage", "Trek", "Samsung",
    ],
    "amount": ["300", "450", "800", "1,200", "1,500", "2,000", "2,500", "4,000", "15,000"],
    "supplement": [
        "vitamin D", "iron tablets", "magnesium", "an antihistamine", "omega-3 capsules",
        "a thyroid pill", "probiotics",
    ],
    "room": ["kitchen", "bathroom cabinet", "bedside drawer", "hallway shelf", "office desk"],
    "instrument": ["piano", "guitar", "violin", "drums", "cello", "ukulele", "saxophone"],
    "school": ["evening class", "music school", "online course", "private teacher"],
    "car": ["an old Golf", "an electric Kia", "a Volvo estate", "a Vespa", "a Tesla"],
    "team": [
        "Arsenal", "the Lakers", "FC Porto", "the Yankees", "Real Madrid", "the All Blacks",
        "Celtic", "the Raptors",
    ],
}
# fmt: on


@dataclass(frozen=True)
class Family:
    kind: str
    content: str
    queries: tuple[str, ...]


FAMILIES = [
    Family(Kind.SEMANTIC,
           "Prefers {drink} in the morning and switches to {drink2} after lunch",
           ("what does the user drink in the morning", "{drink} or {drink2}?",
            "which drinks do they like after lunch")),
    Family(Kind.SEMANTIC,
           "Is allergic to {allergen} and always asks restaurants before ordering {food}",
           ("does the user have any allergies", "{allergen} allergy",
            "what should they avoid when ordering {food}")),
    Family(Kind.SEMANTIC,
           "Their {relation} {person} lives in {city} and usually visits in {month}",
           ("where does their {relation} live", "when does {person} come to visit",
            "family in {city}")),
    Family(Kind.SEMANTIC,
           "Has been learning {lang} on {day} evenings with a tutor from {city}",
           ("which language is the user learning", "{lang} lessons",
            "what do they do on {day} evenings")),
    Family(Kind.SEMANTIC,
           "Works on the {project} project with {person}, mostly in {tool}",
           ("what tools does the user use at work", "who is on the {project} project",
            "{project} with {tool}")),
    Family(Kind.EPISODIC,
           "Went {activity} near {place} with {person} in {month} and wants to go back",
           ("what did they do in {month}", "trip with {person}", "{activity} near {place}")),
    Family(Kind.SEMANTIC,
           "Has a {pet} called {petname} who needs {need}",
           ("what is the name of their {pet}", "does the user have pets",
            "what does {petname} need")),
    Family(Kind.SEMANTIC,
           "Plays {sport} every {day} evening at the {venue} near their flat",
           ("what sport does the user play", "when do they play {sport}",
            "{sport} on {day}")),
    Family(Kind.PROCEDURAL,
           "Wants {format} answers whenever the conversation is about {topic}",
           ("how should answers about {topic} be written", "{topic} answer style",
            "does the user like {format} answers")),
    Family(Kind.SEMANTIC,
           "Is reading {book} and hopes to finish it before the trip to {city}",
           ("what book is the user reading", "plans before going to {city}", "{book}")),
    Family(Kind.SEMANTIC,
           "Birthday is on the {date} of {month} and they love getting {gift}",
           ("when is the user's birthday", "gift ideas for them", "do they like {gift}")),
    Family(Kind.SEMANTIC,
           "Dislikes {dislike} and would rather {alternative}",
           ("what does the user dislike", "how do they feel about {dislike}",
            "would they rather {alternative}")),
    Family(Kind.EPISODIC,
           "The meeting with {person} about the {project} moved to {day} at {hour}",
           ("when is the meeting with {person}", "{project} meeting time",
            "what happens on {day} at {hour}")),
    Family(Kind.SEMANTIC,
           "Budget for the new {purchase} is about {amount} euros, ideally from {brand}",
           ("how much can they spend on a {purchase}", "{brand} {purchase}",
            "shopping budget for a new {purchase}")),
    Family(Kind.PROCEDURAL,
           "Takes {supplement} at {hour} every day and keeps it in the {room}",
           ("what supplements does the user take", "when do they take {supplement}",
            "where is the {supplement} kept")),
    Family(Kind.SEMANTIC,
           "Started {instrument} lessons at an {school} after hearing {person} play",
           ("which instrument is the user learning", "{instrument} lessons",
            "why did they start music")),
    Family(Kind.SEMANTIC,
           "Drives {car} and parks it at the station before the train to {city}",
           ("what car does the user drive", "how do they commute to {city}",
            "parking at the station")),
    Family(Kind.SEMANTIC,
           "Supports {team} and watches every match with their {relation}",
           ("which team does the user support", "who do they watch {team} with",
            "football or basketball fan")),
]  # fmt: skip

TAILS = [
    "This came up again in the last session.",
    "They said it twice, so it is probably stable.",
    "Mention it only when it is relevant to the request.",
    "Their manager confirmed it during the quarterly review.",
    "They asked us to remember this for future trips.",
    "It was a bit of a running joke in the chat.",
    "Double-check before relying on it.",
    "They sounded quite sure about it.",
    "It may change after the summer.",
    "Nobody else in the household does this.",
    "This replaces what they said earlier in the year.",
    "They brought it up while planning the week.",
    "It matters to them more than it seems.",
    "Their {relation} reminded them about it.",
    "It changed after the move to {city} last spring.",
    "{person} had recommended it a while ago.",
    "They want a reminder every {day}.",
    "It started around {month} last year.",
    "They mentioned it while talking about {topic}.",
    "It is linked to the {project} work.",
]
_SLOT = re.compile(r"\{(\w+?)\}")


def _base(slot: str) -> str:
    return slot.rstrip("0123456789")


def fill(template: str, slots: dict[str, str], rng: random.Random) -> str:
    """Fill the template's {slots}, drawing the missing ones (a trailing digit = distinct)."""
    for slot in _SLOT.findall(template):
        if slot in slots:
            continue
        base = _base(slot)
        if base == "date":
            day = rng.randint(1, 28)
            slots[slot] = f"{day}{_ordinal(day)}"
            continue
        taken = {v for k, v in slots.items() if _base(k) == base}
        choices = [w for w in WORDS[base] if w not in taken] or WORDS[base]
        slots[slot] = rng.choice(choices)
    return template.format(**slots)


def _ordinal(n: int) -> str:
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


@dataclass(frozen=True)
class Core:
    family: int
    slots: tuple[tuple[str, str], ...]
    text: str


def make_cores(count: int, rng: random.Random) -> list[Core]:
    """`count` distinct sentence cores over all families."""
    cores: dict[str, Core] = {}
    attempts = 0
    while len(cores) < count and attempts < count * 50:
        attempts += 1
        family = rng.randrange(len(FAMILIES))
        slots: dict[str, str] = {}
        text = fill(FAMILIES[family].content, slots, rng)
        if text not in cores:
            cores[text] = Core(family, tuple(sorted(slots.items())), text)
    return list(cores.values())


def make_tails(count: int, rng: random.Random) -> list[str]:
    """The stock follow-up phrases first, then filled-in templated ones up to `count`."""
    fixed = [t for t in TAILS if "{" not in t]
    templated = [t for t in TAILS if "{" in t]
    filled: set[str] = set()
    attempts = 0
    while len(fixed) + len(filled) < count and attempts < count * 50:
        attempts += 1
        filled.add(fill(rng.choice(templated), {}, rng))
    return fixed + sorted(filled)


def words(text: str) -> int:
    return len(text.split())


def make_query(core: Core, rng: random.Random) -> str:
    """A paraphrase of the core: one of its family's questions, on the same slot words."""
    template = rng.choice(FAMILIES[core.family].queries)
    return template.format(**dict(core.slots))


# --- Load-time embeddings: real model on a pool, composed per memory --------------------------


class PoolEmbedder:
    """Answers `embed_documents` from precomputed vectors (one per distinct content)."""

    def __init__(self, name: str, dimensions: int, vectors: dict[str, np.ndarray]) -> None:
        self.name = name
        self.dimensions = dimensions
        self.vectors = vectors

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.vectors[text] for text in texts])

    def embed_query(self, text: str) -> np.ndarray:
        raise RuntimeError("the load embedder embeds no queries")


@dataclass
class Planned:
    item: NewMemory
    core: Core
    parts: tuple[int, ...]  # tail indexes


@dataclass
class Dataset:
    items: list[Planned]
    subjects: list[str]  # layout A
    big: str  # layout B
    cores: list[Core]
    tails: list[str]


def plan(memories: int, subjects: int, big: int, pool: int, seed: int) -> Dataset:
    rng = random.Random(seed)
    cores = make_cores(pool, rng)
    tails = make_tails(max(40, pool // 20), rng)
    fixed = sum(1 for t in TAILS if "{" not in t)  # make_tails puts them first
    subject_ids = [f"bench-user-{i:04d}" for i in range(subjects)]
    big_id = "bench-user-big"
    counts = {
        s: memories // subjects + (1 if i < memories % subjects else 0)
        for i, s in enumerate(subject_ids)
    }
    if big:
        counts[big_id] = big
    start = datetime(2024, 1, 1, tzinfo=UTC)
    speakers = ["user", "assistant"]
    units: list[list[Planned]] = []
    for subject, count in counts.items():
        # Each subject talks mostly about a subset of the cores (its life), as people do.
        own = rng.sample(range(len(cores)), k=min(len(cores), max(80, count // 2)))
        left = count
        session_no = 0
        while left > 0:
            # ~30% of the memories are turns of conversations (6-16 turns each).
            in_session = rng.random() < 0.04 and left >= 4
            size = min(left, rng.randint(6, 16)) if in_session else 1
            session = f"chat-{session_no}" if in_session else ""
            session_no += in_session
            unit = []
            for position in range(size):
                core = cores[rng.choice(own) if rng.random() < 0.85 else rng.randrange(len(cores))]
                parts: list[int] = []
                budget = 30 - words(core.text)
                for _ in range(rng.choice((0, 1, 1, 2, 2))):
                    # Half the follow-ups are stock phrases, half name a person, place, ...
                    tail = rng.randrange(fixed) if rng.random() < 0.5 else rng.randrange(len(tails))
                    if words(tails[tail]) <= budget and tail not in parts:
                        parts.append(tail)
                        budget -= words(tails[tail])
                content = ". ".join([core.text, *[tails[t] for t in parts]])
                content = content if content.endswith(".") else content + "."
                content = content.replace("..", ".")
                kind = FAMILIES[core.family].kind
                occurred = start + timedelta(minutes=rng.randrange(0, 700 * 24 * 60))
                unit.append(
                    Planned(
                        NewMemory(
                            content=content,
                            subject_external_id=subject,
                            kind=kind,
                            importance=round(rng.uniform(0.2, 0.9), 2),
                            occurred_at=occurred if kind == Kind.EPISODIC or session else None,
                            session_key=session,
                            position=position if session else None,
                            metadata={"speaker": speakers[position % 2]} if session else {},
                            tags=["bench"],
                        ),
                        core,
                        tuple(parts),
                    )
                )
            units.append(unit)
            left -= size
    rng.shuffle(units)  # writes arrive interleaved over subjects
    items = [planned for unit in units for planned in unit]
    return Dataset(items, subject_ids, big_id if big else "", cores, tails)


def compose_vectors(
    data: Dataset, model: Any, log: Callable[[str], None], seed: int, noise: float = 0.015
) -> dict[str, np.ndarray]:
    """content -> vector: word-weighted mean of the model's core and tail vectors, + noise."""
    started = time.perf_counter()
    core_vectors = model.embed_documents([c.text for c in data.cores])
    tail_vectors = model.embed_documents(data.tails)
    seconds = time.perf_counter() - started
    log(
        f"  embedded the pool with {model.name}: {len(data.cores)} cores + {len(data.tails)} "
        f"clauses in {seconds:.1f}s"
    )
    core_index = {c.text: i for i, c in enumerate(data.cores)}
    rng = np.random.default_rng(seed)
    vectors: dict[str, np.ndarray] = {}
    for planned in data.items:
        content = planned.item.content
        if content in vectors:
            continue
        total = words(planned.core.text) * core_vectors[core_index[planned.core.text]]
        for tail in planned.parts:
            total = total + words(data.tails[tail]) * tail_vectors[tail]
        total = normalise(total)
        vectors[content] = normalise(total + rng.normal(0.0, noise, total.shape))
    # How close is that to the model's embedding of the full sentence?
    sample = random.Random(seed).sample(sorted(vectors), k=min(200, len(vectors)))
    truth = model.embed_documents(sample)
    fidelity = np.einsum("ij,ij->i", truth, np.stack([vectors[s] for s in sample]))
    log(
        f"  composed {len(vectors)} distinct vectors; cosine to the model's own embedding of "
        f"the full text: mean {fidelity.mean():.3f}, p5 {np.percentile(fidelity, 5):.3f}"
    )
    return vectors


# --- Indexes --------------------------------------------------------------------------------


def index_definitions() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes"
            " WHERE tablename = %s AND indexname = ANY(%s)",
            [TABLE, list(BULK_INDEXES)],
        )
        return dict(cursor.fetchall())


def drop_indexes(names: list[str]) -> None:
    with connection.cursor() as cursor:
        for name in names:
            cursor.execute(f'DROP INDEX IF EXISTS "{name}"')


def build_indexes(definitions: dict[str, str], log: Callable[[str], None]) -> float:
    """Create the missing ones of `definitions` (as they were); returns the seconds spent."""
    present = set(index_definitions())
    total = 0.0
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '1GB'")
        cursor.execute("SET max_parallel_maintenance_workers = 1")
        try:
            for name, definition in definitions.items():
                if name in present:
                    continue
                started = time.perf_counter()
                cursor.execute(definition)
                seconds = time.perf_counter() - started
                total += seconds
                log(f"  built {name} in {seconds:.1f}s")
        finally:
            cursor.execute("RESET maintenance_work_mem")
            cursor.execute("RESET max_parallel_maintenance_workers")
    return total


def restore_from_model(log: Callable[[str], None]) -> None:
    """Create any index of the model's Meta that is missing (after a hard kill)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE tablename = %s", [TABLE])
        present = {row[0] for row in cursor.fetchall()}
    missing = [index for index in Memory._meta.indexes if index.name not in present]
    with connection.schema_editor() as editor:
        for index in missing:
            editor.add_index(Memory, index)
            log(f"created {index.name}")
    if not missing:
        log("all indexes of the memory table exist")


def relation_sizes() -> str:
    """Sizes of the memory table, its TOAST and the bulk indexes, and shared_buffers."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_size_pretty(pg_relation_size(c.oid)),"
            " pg_size_pretty(pg_relation_size(c.reltoastrelid)),"
            " current_setting('shared_buffers') FROM pg_class c WHERE c.relname = %s",
            [TABLE],
        )
        heap, toast, buffers = cursor.fetchone()
        cursor.execute(
            "SELECT relname, pg_size_pretty(pg_relation_size(oid)) FROM pg_class"
            " WHERE relname = ANY(%s) ORDER BY relname",
            [list(BULK_INDEXES)],
        )
        indexes = ", ".join(f"{name} {size}" for name, size in cursor.fetchall())
    return f"table {heap} (TOAST {toast}), {indexes}; shared_buffers {buffers}"


def vacuum_analyze() -> float:
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(f'VACUUM (ANALYZE) "{TABLE}"')
    return time.perf_counter() - started


# --- Per-statement database time -------------------------------------------------------------


def classify(sql: str) -> str:
    s = sql.lower()
    if s.startswith("set "):
        return "set"
    if "memories_recalllog" in s:
        return "db:log insert"
    if "memories_datakey" in s:
        return "db:data key"
    if 'from "memories_subject"' in s:
        return "db:subject"
    if "<=>" in s and (" union " in s or "in (select" in s):
        return "db:candidates"  # the vector candidates and the keyword ones, by id, in one
    order = s.rsplit("order by", 1)[-1] if "order by" in s else ""
    if '"context_embedding" <=>' in order:
        return "db:vec context"
    if '"embedding" <=>' in order:
        return "db:vec embedding"
    if "&&" in s:
        return "db:keyword"
    if ("count(" in s and "avg(" in s) or "unnest(m.token_index" in s:
        return "db:stats"  # the population's size, length and common terms
    if '"memories_memory"."id" in' in s:
        return "db:fetch rows"
    return "db:other"


class StatementTimer:
    """Execute wrapper: database time per statement kind, and rows of the keyword query."""

    def __init__(self) -> None:
        self.times: dict[str, float] = defaultdict(float)
        self.rows: dict[str, int] = defaultdict(int)
        self.counts: dict[str, int] = defaultdict(int)
        self.captured: list[tuple[str, Any]] = []
        self.capture = False

    def reset(self) -> None:
        self.times = defaultdict(float)
        self.rows = defaultdict(int)
        self.counts = defaultdict(int)
        self.captured = []

    def __call__(self, execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            kind = classify(sql)
            self.times[kind] += (time.perf_counter() - started) * 1000
            self.counts[kind] += 1
            rowcount = getattr(context.get("cursor"), "rowcount", -1)
            self.rows[kind] += max(rowcount if isinstance(rowcount, int) else -1, 0)
            if self.capture:
                self.captured.append((sql, params))


# --- Measurement -----------------------------------------------------------------------------


@dataclass
class Sample:
    wall: float
    stages: dict[str, float]
    db: dict[str, float]
    candidates_seen: int
    exact: float
    exact_embed: float
    overlap60: float  # share of the exact top-10 among the 60 vector candidates
    overlap10: float  # share of the exact top-10 among the first 10 vector candidates
    target_hit: bool  # the memory the query paraphrases is in the recall's top 10
    searches: int = 1  # candidate statements run: 2 when the HNSW walk fell back to exact
    other_cores: float = 0.0  # CPU of other processes during the sample (recall + baseline)


@dataclass
class Layout:
    name: str
    label: str
    samples: list[Sample] = field(default_factory=list)


def exact_top(matrix: np.ndarray, query: np.ndarray, k: int) -> np.ndarray:
    scores = matrix @ query
    if len(scores) <= k:
        return np.argsort(-scores)
    top = np.argpartition(-scores, k)[:k]
    return top[np.argsort(-scores[top])]


def vector_candidates(namespace: Namespace, subject: Subject, query_vector: np.ndarray) -> list:
    """The 60 nearest of the subject's (and shared) active memories by `embedding`, asked
    the way the recall asks its HNSW index (settings.HNSW_SEARCH_OPTIONS)."""
    sql = (
        "SELECT id FROM memories_memory WHERE namespace_id = %s"
        " AND (subject_id = %s OR subject_id IS NULL) AND status = 'active'"
        " AND valid_to IS NULL AND (expires_at IS NULL OR expires_at > now())"
        " AND embedding IS NOT NULL ORDER BY embedding <=> %s::vector LIMIT %s"
    )
    vector = vector_literal(query_vector)
    with connection.cursor() as cursor:  # the connection's HNSW settings, as recall's
        cursor.execute(sql, [namespace.pk, subject.pk, vector, VECTOR_CANDIDATES])
        return [row[0] for row in cursor.fetchall()]


def machine_busy() -> float | None:
    """CPU seconds the whole machine has spent busy since boot."""
    try:
        with open("/proc/stat") as stat:
            values = [int(v) for v in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    return (sum(values) - values[3] - values[4]) / os.sysconf("SC_CLK_TCK")


def wait_for_quiet(limit: float, log: Callable[[str], None], window: float = 3.0) -> None:
    """Before timing, wait (up to `limit` s) until other processes use < 0.3 cores."""
    deadline = time.perf_counter() + limit
    told = False
    while time.perf_counter() < deadline:
        before = machine_busy()
        time.sleep(window)
        after = machine_busy()
        if before is None or after is None:
            return
        busy = (after - before) / window
        if busy < 0.3:
            if told:
                log(f"  quiet now ({busy:.2f} cores busy)")
            return
        if not told:
            log(f"  other processes use {busy:.1f} cores; waiting up to {limit:.0f}s for quiet")
            told = True
    log("  still busy: timing anyway (see the CPU line under the table)")


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
NOISY_CORES = 0.25  # other processes above this during a sample make it "noisy"


def process_ticks() -> dict[int, tuple[str, int]] | None:
    """pid -> (command name, user+system CPU ticks) of every process (Linux /proc)."""
    ticks: dict[int, tuple[str, int]] = {}
    try:
        entries = [entry.name for entry in os.scandir("/proc") if entry.name.isdigit()]
    except OSError:
        return None
    for pid in entries:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                data = stat.read()
            fields = data[data.rindex(")") + 2 :].split()
            name = data[data.index("(") + 1 : data.rindex(")")]
            # utime, stime, and the reaped children's (the postmaster's include the
            # parallel workers it started for our queries).
            total = sum(int(fields[k]) for k in (11, 12, 13, 14))
        except (OSError, ValueError, IndexError):
            continue
        ticks[int(pid)] = (name, total)
    return ticks


class CpuMeter:
    """Where the CPU went between two snapshots: this process, PostgreSQL (any of its
    processes, so ours and other sessions'), and everything else (noise for a latency
    benchmark: other benchmarks, test runs, builds)."""

    def __init__(self) -> None:
        self.own = os.getpid()
        self.start = self.snapshot()

    def snapshot(self) -> tuple[float, dict[int, tuple[str, int]] | None]:
        return time.perf_counter(), process_ticks()

    def split(self, since: tuple[float, Any], until: tuple[float, Any]) -> dict[str, float]:
        """Cores used on average over the interval, by "own", "postgres" and "other"."""
        (t0, before), (t1, after) = since, until
        if before is None or after is None or t1 <= t0:
            return {}
        used = {"own": 0.0, "postgres": 0.0, "other": 0.0}
        for pid, (name, ticks) in after.items():
            delta = ticks - before.get(pid, (name, 0))[1]
            bucket = "own" if pid == self.own else "postgres" if name == "postgres" else "other"
            used[bucket] += max(delta, 0) / _TICK
        return {bucket: seconds / (t1 - t0) for bucket, seconds in used.items()}

    def summary(self) -> str:
        split = self.split(self.start, self.snapshot())
        if not split:
            return "CPU accounting unavailable"
        return (
            f"CPU during timing (cores of {os.cpu_count()}): this process {split['own']:.2f}, "
            f"PostgreSQL {split['postgres']:.2f}, other processes {split['other']:.2f}; "
            f"load average {os.getloadavg()[0]:.2f}"
        )


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if values else float("nan")


# The statements that find candidates, whichever shape recall.py gives them.
CANDIDATE_KINDS = (
    "db:candidates",
    "db:vec embedding",
    "db:vec context",
    "db:keyword",
    "db:stats",
)
_VECTOR = re.compile(r"'\[[-+0-9.e,]+\]'::vector")


def explain_recall(
    namespace: Namespace, subject_external_id: str, query: str, timer: StatementTimer
) -> str:
    """EXPLAIN (ANALYZE, BUFFERS) of the candidate statements of one real recall."""
    timer.reset()
    timer.capture = True
    try:
        with connection.execute_wrapper(timer):
            recall_memories(
                RecallRequest(
                    actor=ACTOR,
                    namespace=namespace,
                    subject_external_id=subject_external_id,
                    query=query,
                    k=K,
                    log=False,
                )
            )
    finally:
        timer.capture = False
    lines = []
    sets = [(sql, params) for sql, params in timer.captured if sql.lower().startswith("set ")]
    for sql, params in timer.captured:
        kind = classify(sql)
        if kind not in CANDIDATE_KINDS:
            continue
        with transaction.atomic(), connection.cursor() as cursor:
            for set_sql, set_params in sets:
                cursor.execute(set_sql, set_params)
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS, SETTINGS) " + sql, params)
            plan_lines = [_VECTOR.sub("'[...]'::vector", row[0]) for row in cursor.fetchall()]
        lines.append(f"--- {kind}")
        lines.extend(plan_lines)
    return "\n".join(lines)


@dataclass
class Loaded:
    """The memories as loaded, row by row as planned: their ids, owners (subject ids) and
    vectors; and the load's and the index build's seconds."""

    ids: list[Any]
    owners: list[Any]
    matrix: np.ndarray
    load_seconds: float
    index_seconds: float = 0.0

    @classmethod
    def read(cls, path: Path) -> Loaded:
        """A kept run's, saved by `save`."""
        order = np.load(path)
        return cls(
            ids=[uuid.UUID(x) for x in order["ids"]],
            owners=[uuid.UUID(x) if x else None for x in order["owners"]],
            matrix=order["matrix"],
            load_seconds=float(order["load"]),
            index_seconds=float(order["build"]),
        )

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(
            path,
            ids=np.array([str(x) for x in self.ids]),
            owners=np.array([str(x) if x else "" for x in self.owners]),
            matrix=self.matrix,
            load=self.load_seconds,
            build=self.index_seconds,
        )


def plan_logged(args: argparse.Namespace, log: Callable[[str], None]) -> Dataset:
    """The planned memories, their count, turns and lengths said."""
    started = time.perf_counter()
    data = plan(args.memories, args.subjects, args.big, args.pool, args.seed)
    lengths = [words(p.item.content) for p in data.items]
    sessions = sum(1 for p in data.items if p.item.session_key)
    log(
        f"planned {len(data.items)} memories ({args.memories} over {args.subjects} subjects + "
        f"{args.big} for one subject), {sessions} of them conversation turns; words per memory "
        f"{min(lengths)}-{max(lengths)} (mean {statistics_mean(lengths):.1f}); "
        f"{time.perf_counter() - started:.1f}s"
    )
    return data


def store(
    namespace: Namespace,
    data: Dataset,
    saved: dict[str, str],
    real: Any,
    vectors: Any,
    log: Callable[[str], None],
) -> Loaded:
    """The planned memories stored in batches with the bulk indexes dropped, each embedded
    from `vectors` (the query embedder is `real` again after)."""
    drop_indexes(list(saved))
    log(f"dropped {', '.join(saved)} for the load")
    set_provider(PoolEmbedder(real.name, real.dimensions, vectors))
    keys = KeyCache()
    ids: list[Any] = []
    owners: list[Any] = []
    matrix = np.zeros((len(data.items), real.dimensions), dtype=np.float32)
    started = time.perf_counter()
    for start in range(0, len(data.items), BATCH):
        batch = data.items[start : start + BATCH]
        created = memories_create_bulk(
            actor=ACTOR, namespace=namespace, items=[p.item for p in batch], keys=keys
        )
        for offset, memory in enumerate(created):
            ids.append(memory.id)
            owners.append(memory.subject_id)
            matrix[start + offset] = memory.embedding
        done = start + len(batch)
        if done % 20_000 < BATCH or done == len(data.items):
            rate = done / (time.perf_counter() - started)
            log(f"  loaded {done:>7} memories, {rate:,.0f}/s")
    load_seconds = time.perf_counter() - started
    set_provider(real)
    return Loaded(ids, owners, matrix, load_seconds)


def build_after_load(
    loaded: Loaded, count: int, saved: dict[str, str], log: Callable[[str], None]
) -> None:
    """The bulk indexes rebuilt, VACUUM ANALYZE; the load of `count` memories said."""
    loaded.index_seconds = build_indexes(saved, log)
    vacuum_seconds = vacuum_analyze()
    log(
        f"load {loaded.load_seconds:.1f}s ({count / loaded.load_seconds:,.0f} memories/s), "
        f"index build {loaded.index_seconds:.1f}s, VACUUM ANALYZE {vacuum_seconds:.1f}s"
    )
    log(f"  {relation_sizes()}")


def refresh_subject_indexes(args: argparse.Namespace, log: Callable[[str], None]) -> None:
    """The large subjects' own HNSW indexes, as the periodic task (or the command) makes them;
    with --no-subject-indexes, none."""
    if args.no_subject_indexes:
        dropped = drop_subject_indexes()
        log(f"no subject indexes (dropped {len(dropped)})")
    else:
        made = subject_indexes.refresh()
        log(
            f"subject indexes: {len(made.created)} created, {len(made.kept)} kept"
            f" in {made.seconds:.1f}s (MEMORYHUB_SUBJECT_INDEX_MIN"
            f" {settings.MEMORYHUB_SUBJECT_INDEX_MIN})"
        )


class Draw:
    """Recall queries: a subject (layout B's: the big one), one of its planned memories, and
    a query paraphrasing it."""

    def __init__(self, data: Dataset, seed: int) -> None:
        self.data = data
        self.by_subject: dict[str, list[int]] = defaultdict(list)
        for row, planned in enumerate(data.items):
            self.by_subject[planned.item.subject_external_id].append(row)
        self.rng = random.Random(seed + 1)

    def __call__(self, layout: str) -> tuple[str, str, int]:
        rng = self.rng
        subject = self.data.big if layout.startswith("B") else rng.choice(self.data.subjects)
        row = rng.choice(self.by_subject[subject])
        return subject, make_query(self.data.items[row].core, rng), row


def make_layouts(args: argparse.Namespace, data: Dataset) -> dict[str, Layout]:
    per_subject = args.memories // args.subjects
    layouts = {"A": Layout("A", f"A: 1 of {args.subjects} subjects (~{per_subject} each)")}
    if data.big:
        layouts["B"] = Layout("B", f"B: the subject with {args.big}")
    if args.row_security:
        for name in list(layouts):
            layouts[f"{name}+wall"] = Layout(f"{name}+wall", f"{name} behind the RLS wall")
    return layouts


def warm_up(
    args: argparse.Namespace,
    layouts: dict[str, Layout],
    draw: Draw,
    namespace: Namespace,
    real: Any,
    log: Callable[[str], None],
) -> None:
    """--torch-threads set, --quiet-wait waited; then the model, the connection, every
    layout's pages and plans warmed up by --warmup untimed recalls."""
    if args.torch_threads > 0:
        import torch

        torch.set_num_threads(args.torch_threads)
        log(f"torch threads set to {torch.get_num_threads()} for the timed queries")
    if args.quiet_wait > 0:
        wait_for_quiet(args.quiet_wait, log)
    for _ in range(args.warmup):
        for name in layouts:
            subject, query, _ = draw(name)
            recall_memories(
                RecallRequest(
                    actor=ACTOR, namespace=namespace, subject_external_id=subject, query=query, k=K
                )
            )
            real.embed_query(query)


def timed_sample(
    name: str,
    draw: Draw,
    namespace: Namespace,
    subjects: dict[str, Subject],
    rows_of: dict[Any, np.ndarray],
    loaded: Loaded,
    real: Any,
    timer: StatementTimer,
    meter: CpuMeter,
) -> Sample:
    """One recall of layout `name`, timed with its statements; then the baseline (embed
    again, brute force over the subject's vectors in numpy) and its overlap with the HNSW
    candidates."""
    subject_external_id, query, target_row = draw(name)
    subject = subjects[subject_external_id]
    timer.reset()
    before = meter.snapshot()
    started = time.perf_counter()
    walled = namespace.pk if name.endswith("+wall") else None
    with namespace_wall(walled) if walled else nullcontext():
        outcome = recall_memories(
            RecallRequest(
                actor=ACTOR,
                namespace=namespace,
                subject_external_id=subject_external_id,
                query=query,
                k=K,
            )
        )
    wall = (time.perf_counter() - started) * 1000
    db = {kind: ms for kind, ms in timer.times.items() if kind.startswith("db:")}
    candidates_seen = sum(timer.rows.get(k, 0) for k in CANDIDATE_KINDS if k != "db:stats")
    # Baseline: embed again, brute force over the subject's vectors in numpy.
    rows = rows_of[subject.pk]
    subject_matrix = loaded.matrix[rows]  # a slice of the vectors loaded at the start
    started = time.perf_counter()
    query_vector = real.embed_query(query)
    embedded = time.perf_counter()
    top = exact_top(subject_matrix, query_vector, K)
    done = time.perf_counter()
    exact = (done - started) * 1000
    exact_ids = {loaded.ids[rows[i]] for i in top}
    other = meter.split(before, meter.snapshot()).get("other", 0.0)
    found = vector_candidates(namespace, subject, query_vector)
    return Sample(
        wall=wall,
        stages=dict(outcome.timings_ms),
        db=db,
        candidates_seen=candidates_seen,
        exact=exact,
        exact_embed=(embedded - started) * 1000,
        overlap60=len(exact_ids & set(found)) / len(exact_ids),
        overlap10=len(exact_ids & set(found[:K])) / len(exact_ids),
        target_hit=loaded.ids[target_row] in {h.memory.id for h in outcome.hits},
        other_cores=other,
        searches=timer.counts.get("db:candidates", 0),
    )


def measure(
    args: argparse.Namespace,
    namespace: Namespace,
    data: Dataset,
    loaded: Loaded,
    real: Any,
    timer: StatementTimer,
    log: Callable[[str], None],
) -> tuple[dict[str, Layout], Draw, str]:
    """--queries timed recalls per layout, after the warm-up: (the layouts with their
    samples, the query drawer, the CPU summary)."""
    subjects = {s.external_id: s for s in Subject.objects.filter(namespace=namespace)}
    grouped: dict[Any, list[int]] = defaultdict(list)
    for row, owner in enumerate(loaded.owners):
        grouped[owner].append(row)
    rows_of = {owner: np.asarray(rows) for owner, rows in grouped.items()}
    draw = Draw(data, args.seed)
    layouts = make_layouts(args, data)
    warm_up(args, layouts, draw, namespace, real, log)
    log(f"timing {args.queries} recalls per layout; load average {os.getloadavg()[0]:.2f}")
    meter = CpuMeter()
    with connection.execute_wrapper(timer):
        for _ in range(args.queries):
            for name, layout in layouts.items():
                layout.samples.append(
                    timed_sample(
                        name, draw, namespace, subjects, rows_of, loaded, real, timer, meter
                    )
                )
    return layouts, draw, meter.summary()


def run(args: argparse.Namespace, log: Callable[[str], None]) -> None:
    timer = StatementTimer()
    slug = f"bench-recall-{secrets.token_hex(4)}"
    saved = index_definitions()
    missing = [name for name in BULK_INDEXES if name not in saved]
    if missing:
        raise SystemExit(f"indexes missing before the run: {missing}; try --restore-indexes")
    real = get_provider()
    log(f"query embedder: {real.name}; cores: {os.cpu_count()}; torch threads: {_torch_threads()}")

    data = plan_logged(args, log)
    keep = args.keep or bool(args.reuse)
    saved_order = Path(settings.BASE_DIR) / "var" / "bench" / f"recall-{args.reuse or slug}.npz"
    if args.reuse:
        namespace = Namespace.objects.get(slug=args.reuse)
        loaded = Loaded.read(saved_order)
        log(f"reusing namespace {args.reuse} ({len(loaded.ids)} memories)")
    else:
        vectors = compose_vectors(data, real, log, args.seed)
        namespace = namespace_create(actor=ACTOR, slug=slug, name="Recall benchmark (temporary)")
        log(f"namespace {slug}")
    try:
        if not args.reuse:
            loaded = store(namespace, data, saved, real, vectors, log)
            del vectors
            build_after_load(loaded, len(data.items), saved, log)
            if keep:
                loaded.save(saved_order)
                log(f"kept namespace {slug}: --reuse {slug} times against it")
        refresh_subject_indexes(args, log)
        layouts, draw, cpu = measure(args, namespace, data, loaded, real, timer, log)
        report(layouts, args, len(data.items), loaded.load_seconds, loaded.index_seconds)
        print(cpu)
        if args.explain:
            for name in layouts:
                subject_external_id, query, _ = draw(name)
                print(
                    f"\nEXPLAIN (ANALYZE, BUFFERS) of layout {name}'s candidate statements, "
                    f"query {query!r}:"
                )
                print(explain_recall(namespace, subject_external_id, query, timer))
    finally:
        set_provider(real)
        if not keep or args.drop:
            cleanup(namespace, saved, log)
            saved_order.unlink(missing_ok=True)


def drop_subject_indexes() -> list[str]:
    names = list(subject_indexes.existing_indexes())
    with connection.cursor() as cursor:
        for name in names:
            cursor.execute(f'DROP INDEX "{name}"')
    return names


def cleanup(namespace: Namespace, saved: dict[str, str], log: Callable[[str], None]) -> None:
    """Delete the namespace; the bulk indexes are dropped for the delete (no dead entries for
    vacuum to repair) and rebuilt, as they were, whatever happens."""
    started = time.perf_counter()
    try:
        drop_indexes(list(saved))
        counts = namespace_delete(actor=ACTOR, namespace=namespace)
        log(
            f"deleted namespace {namespace.slug} ({counts['memories']} memories, "
            f"{counts['subjects']} subjects) in {time.perf_counter() - started:.1f}s"
        )
    finally:
        build_indexes(saved, log)
        vacuum_analyze()
        subject_indexes.refresh()  # drops the deleted subjects' own indexes
        left = [name for name in saved if name not in index_definitions()]
        log("indexes restored" if not left else f"INDEXES MISSING: {left} (--restore-indexes)")


RowPrinter = Callable[..., None]


def _row_printer(layouts: dict[str, Layout]) -> RowPrinter:
    """row(label, pick, quiet_only=False): a table line, p50 / p95 of `pick` per layout (over
    the quiet samples only if asked); "-" where no sample has a value."""

    def row(label: str, pick: Callable[[Sample], float | None], quiet_only: bool = False) -> None:
        cells = []
        for layout in layouts.values():
            samples = [s for s in layout.samples if not quiet_only or s.other_cores < NOISY_CORES]
            values = [v for v in (pick(s) for s in samples) if v is not None]
            cells.append(
                f"{percentile(values, 50):>8.2f} / {percentile(values, 95):>7.2f}"
                if values
                else "-"
            )
        print(f"{label:<34}" + "".join(f"{c:>38}" for c in cells))

    return row


def report_stages(layouts: dict[str, Layout], row: RowPrinter) -> None:
    """Recall's wall time, its stages and their statements; the exact scan beside."""
    row("recall wall (perf_counter)", lambda s: s.wall)
    row("  wall minus timings_ms[embed]", lambda s: s.wall - s.stages.get("embed", 0.0))
    present = {k for layout in layouts.values() for s in layout.samples for k in s.db}
    # Statements by the stage of recall_memories that runs them; "python" is the rest.
    # The keyword stage runs while the query is embedded on another thread.
    by_stage = {
        "keyword": ["db:subject", "db:data key", "db:stats", "db:keyword"],
        "embed": [],
        "candidates": ["set", "db:candidates", "db:vec embedding", "db:vec context"],
        "score": [],
        "fetch": ["db:fetch rows", "db:log insert"],
    }
    row("  timings_ms[total]", lambda s: s.stages.get("total"))
    for stage, kinds in by_stage.items():
        row(f"  timings_ms[{stage}]", lambda s, stage=stage: s.stages.get(stage))
        kinds = [k for k in kinds if k in present]
        for kind in kinds:
            row(f"    {kind}", lambda s, kind=kind: s.db.get(kind, 0.0))
        if kinds:
            row(
                "    python (stage minus its SQL)",
                lambda s, stage=stage, kinds=kinds: (
                    s.stages.get(stage, 0.0) - sum(s.db.get(k, 0.0) for k in kinds)
                ),
            )
    for kind in sorted(present - {k for kinds in by_stage.values() for k in kinds}):
        row(f"    {kind}", lambda s, kind=kind: s.db.get(kind, 0.0))
    row("  candidate rows fetched", lambda s: float(s.candidates_seen))
    print(
        f"{'  recalls that fell back to exact':<34}"
        + "".join(
            f"{sum(s.searches > 1 for s in layout.samples):>38}" for layout in layouts.values()
        )
    )
    row("exact scan (embed + numpy top-10)", lambda s: s.exact)
    row("  of which query embedding", lambda s: s.exact_embed)
    row("  of which numpy scan", lambda s: s.exact - s.exact_embed)


def report_against_exact(layouts: dict[str, Layout]) -> None:
    """Recall against the exact scan: time ratios, overlaps, the paraphrased memory found;
    the goal."""
    print(f"{'':<34}" + "".join(f"{layout.label:>38}" for layout in layouts.values()))
    cells = []
    for layout in layouts.values():
        walls = [s.wall for s in layout.samples]
        exacts = [s.exact for s in layout.samples]
        cells.append(
            f"x{percentile(walls, 50) / percentile(exacts, 50):.2f} / "
            f"x{percentile(walls, 95) / percentile(exacts, 95):.2f}"
        )
    print(f"{'recall / exact (p50 / p95)':<34}" + "".join(f"{c:>38}" for c in cells))
    for label, pick in (
        ("exact top-10 in 60 vector cands", lambda s: s.overlap60),
        ("exact top-10 in first 10 cands", lambda s: s.overlap10),
        ("paraphrased memory in top 10", lambda s: float(s.target_hit)),
    ):
        cells = [f"{np.mean([pick(s) for s in layout.samples]):.1%}" for layout in layouts.values()]
        print(f"{label:<34}" + "".join(f"{c:>38}" for c in cells))
    cells = []
    for layout in layouts.values():
        p95 = percentile([s.wall for s in layout.samples], 95)
        verdict = "met" if p95 <= GOAL_P95_MS else "NOT met"
        cells.append(f"p95 {p95:.1f} ms: {verdict}")
    print(f"{f'goal p95 <= {GOAL_P95_MS:.0f} ms':<34}" + "".join(f"{c:>38}" for c in cells))


def report_quiet(layouts: dict[str, Layout], row: RowPrinter) -> None:
    """The same figures over the samples during which other processes left the CPU alone."""
    cells = []
    for layout in layouts.values():
        quiet = sum(1 for s in layout.samples if s.other_cores < NOISY_CORES)
        cells.append(f"{quiet} of {len(layout.samples)}")
    print(
        f"{f'quiet samples (other < {NOISY_CORES} cores)':<34}" + "".join(f"{c:>38}" for c in cells)
    )
    row("  recall wall", lambda s: s.wall, quiet_only=True)
    row("  wall minus timings_ms[embed]", lambda s: s.wall - s.stages.get("embed", 0.0), True)
    for stage in ("keyword", "embed", "candidates", "score", "fetch"):
        row(f"  timings_ms[{stage}]", lambda s, stage=stage: s.stages.get(stage), True)
    row("  exact scan (embed + numpy)", lambda s: s.exact, quiet_only=True)
    cells = []
    for layout in layouts.values():
        walls = [s.wall for s in layout.samples if s.other_cores < NOISY_CORES]
        p95 = percentile(walls, 95)
        verdict = "met" if p95 <= GOAL_P95_MS else "NOT met"
        cells.append(f"p95 {p95:.1f} ms: {verdict}" if walls else "-")
    print(f"{'  goal on quiet samples':<34}" + "".join(f"{c:>38}" for c in cells))


def report(
    layouts: dict[str, Layout], args: argparse.Namespace, total: int, load: float, build: float
) -> None:
    print()
    print(
        f"Recall latency, k={K}, {args.queries} queries per layout, {total} memories in the "
        f"namespace; ms (p50 / p95)"
    )
    header = f"{'':<34}" + "".join(f"{layout.label:>38}" for layout in layouts.values())
    print(header)
    row = _row_printer(layouts)
    report_stages(layouts, row)
    print()
    report_against_exact(layouts)
    print(f"(load {load:.0f}s, index build {build:.0f}s)")

    # The same figures over the samples during which other processes left the CPU alone.
    print()
    report_quiet(layouts, row)


def statistics_mean(values: list[int]) -> float:
    return sum(values) / len(values) if values else 0.0


def _torch_threads() -> str:
    try:
        import torch

        return str(torch.get_num_threads())
    except ImportError:
        return "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000, help="layout A, in total")
    parser.add_argument("--subjects", type=int, default=1_000, help="layout A subjects")
    parser.add_argument("--big", type=int, default=10_000, help="memories of layout B's subject")
    parser.add_argument("--queries", type=int, default=200, help="timed recalls per layout")
    parser.add_argument("--warmup", type=int, default=20, help="untimed recalls per layout")
    parser.add_argument("--pool", type=int, default=6_000, help="distinct sentence cores")
    parser.add_argument("--seed", type=int, default=20_241_201)
    parser.add_argument("--explain", action="store_true", help="print the candidate plans")
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=0,
        help="torch.set_num_threads(N) before timing (default: leave the app's setting)",
    )
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=0,
        help="seconds to wait, before timing, for other processes to leave the CPU idle",
    )
    parser.add_argument(
        "--restore-indexes", action="store_true", help="only recreate missing indexes, then exit"
    )
    parser.add_argument("--keep", action="store_true", help="keep the loaded namespace")
    parser.add_argument("--reuse", metavar="SLUG", help="time against a kept namespace")
    parser.add_argument("--drop", action="store_true", help="with --reuse: delete it at the end")
    parser.add_argument(
        "--row-security",
        action="store_true",
        help="also time each layout behind the row-level security wall, as the API runs",
    )
    parser.add_argument(
        "--no-subject-indexes",
        action="store_true",
        help="time without the large subjects' own HNSW indexes (dropped first)",
    )
    args = parser.parse_args()
    settings.DEBUG = False  # no query log
    log = print
    if args.restore_indexes:
        restore_from_model(log)
        return
    if min(args.memories, args.subjects, args.queries, args.pool) < 1 or args.big < 0:
        parser.error("sizes must be positive")
    if args.memories < args.subjects:
        parser.error("--memories must be at least --subjects")
    with terminate_as_exit():
        run(args, lambda message: print(message, flush=True))


if __name__ == "__main__":
    main()
