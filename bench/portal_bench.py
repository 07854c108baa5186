"""Server time of the privacy portal's pages for one person with many memories.

    .venv/bin/python bench/portal_bench.py [--memories 5000] [--others 50] [--others-memories 200]
                                           [--recalls 2000] [--reads 200] [--requests 100]
                                           [--warmup 5] [--seed N] [--pool 1500]
                                           [--quiet-wait 300] [--explain] [--restore-indexes]

Goal (2 cores): the portal's first page for a subject with 5,000 memories answers in
p95 <= 150 ms (server time). The first page is the overview (`/portal/<subject>/`, where a
link with the default flow lands); the memories page grouped by kind (where a link with
`flow=memories` lands) is held to the same 150 ms. The other pages are timed with no goal:
one kind page by page, the history, a memory's detail, the search, the access history.

Load. A temporary namespace gets one person with `--memories` memories, as they would have
after nine months of an assistant: ~70% conversation turns (episodic, sessions `s<N>` of
6-24 turns with session key, position and a session source), ~25% facts (semantic; 40% of
them in slots whose older values are superseded: `valid_to` and `superseded_by` set,
`supersedes` in the successor's metadata, as consolidation leaves them; most learned in a
conversation, the rest saved by the app; a third with a confidence under 1) and ~5%
procedural; 1% of all archived. Beside them, `--others` subjects with `--others-memories`
each, in the same mix, so that the subject filter matters. Contents are recall_bench's
template sentences (a person talks mostly about a subset of the topics), vectors composed
from a pool the real model embedded once; every memory is stored through
`services.memories_create_bulk` in batches of 1,000, in the order of its planned date, with
the HNSW and keyword GIN indexes dropped; then the dates are set over the nine months
(created_at, valid_to, the versions'), the indexes are rebuilt, VACUUM ANALYZE (times
printed). The sessions get their Session rows; the recall log gets `--recalls` rows of the
person (5-10 of their memories each, facts and instructions five times as often as turns,
only memories current at the time), and 40 of each other subject, by the namespace's app
key; the audit log gets `--reads` dashboard reads
(`governance.services.content_read_record`): three in four of one of the person's memories,
the rest of an explorer page of several subjects' memories.

Opening, as an app does: an API key with `subjects:portal` (and `memories:read`, `context`:
the app's key, which the recall log names) POSTs
`/api/v1/namespaces/<slug>/subjects/<external_id>/portal-sessions`; the link's URL is opened
with `django.test.Client` (303 to the overview, cookie `memoryhub_portal`), and every timed
request goes through that client, in that portal session. The portal's rate limits
(MEMORYHUB_PORTAL_SESSION_RATE 120/m and MEMORYHUB_PORTAL_ADDRESS_RATE 300/m by default)
would stop a benchmark's requests: both are raised to 100000/m for this process (the check
itself still runs, and is timed).

Timing. Server time is the wall time around `django.test.Client.get/post`: URL resolution,
middleware, the rate-limit checks, the session lookup, the namespace's row-level security
wall, the view, decryption and the templates. Every iteration makes one request of each kind
in a shuffled order: the overview; the memories page grouped by kind; the first page of
`?kind=episodic`; a next page of it, by the `after` cursor of the previous one's "Older" link
(pages 2, 3, ... to the last, then 2 again); the history (`?kind=history`); a memory's detail
page, rotating over a conversation turn, a current fact, a superseded fact (with its
successor) and an instruction; the search as the browser's htmx form posts it (`q`, header
HX-Request: the results fragment), alternately a paraphrase of one of the person's memories
(recall_bench's `make_query`) and a word or two of one (the real query embedder runs); and
the access history (`/activity/`). Each kind is warmed up first (untimed). Any response but
200 stops the run. Printed per kind: p50, p95 and max of the server time, the median database
time and number of SQL statements, the goal; the same over the "quiet" iterations (other
processes under 0.25 cores); the most expensive SQL statements of each kind; with `--explain`
the plan (EXPLAIN ANALYZE, BUFFERS, behind the same row-security wall) of each kind's
costliest statement.

The namespace (with its subjects, sessions, recall log and portal links and sessions) and
the API key are deleted at the end, also on failure (audit events stay: append-only), and
the indexes exist again when the script ends (`--restore-indexes` recreates missing ones
after a hard kill). Uses the project's database (the embedded PostgreSQL without
DATABASE_URL), never the test database: migrate it first (`manage.py migrate`).
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import os
import random
import re
import secrets
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Count, Q  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from apps.accounts.models import ApiKey  # noqa: E402
from apps.accounts.services import api_key_create  # noqa: E402
from apps.audit.actors import Actor  # noqa: E402
from apps.audit.models import ActorType  # noqa: E402
from apps.governance.services import content_read_record  # noqa: E402
from apps.memories.embeddings import EmbeddingProvider, get_provider, set_provider  # noqa: E402
from apps.memories.models import Kind, Memory, MemoryVersion, Status, Subject  # noqa: E402
from apps.memories.row_encryption import KeyCache  # noqa: E402
from apps.memories.services import NewMemory, memories_create_bulk  # noqa: E402
from apps.namespaces.models import Namespace  # noqa: E402
from apps.namespaces.services import namespace_create  # noqa: E402
from apps.pipeline.models import Session  # noqa: E402
from apps.recall import subject_indexes  # noqa: E402
from apps.recall.models import RecallLog  # noqa: E402
from bench import recall_bench  # noqa: E402
from bench.dashboard_bench import Sample, Statements, _figures, _short, checked  # noqa: E402
from bench.machine import terminate_as_exit  # noqa: E402
from bench.recall_bench import (  # noqa: E402
    _SLOT,
    _VECTOR,
    BATCH,
    FAMILIES,
    NOISY_CORES,
    Core,
    CpuMeter,
    Dataset,
    Planned,
    PoolEmbedder,
    _base,
    build_indexes,
    cleanup,
    compose_vectors,
    drop_indexes,
    index_definitions,
    make_cores,
    make_query,
    make_tails,
    percentile,
    relation_sizes,
    restore_from_model,
    vacuum_analyze,
    wait_for_quiet,
    words,
)
from bench.summary_bench import cpu_name  # noqa: E402
from memoryhub.row_security import namespace_wall  # noqa: E402

GOAL_MS = 150.0
RATE = "100000/m"  # the portal's limits, raised for the benchmark's requests
ACTOR = Actor.system("portal-bench")
# recall_bench's cleanup audits the namespace's deletion under its module's actor: this one.
recall_bench.ACTOR = ACTOR
ADMIN = Actor(type=ActorType.USER, id="0", name="portal-bench-admin")
API_PERMISSIONS = ["subjects:portal", "memories:read", "context"]
PERSON = "portal-person"
MONTHS = 270  # days the person's memories span
COOKIE = "memoryhub_portal"

OVERVIEW = "first page: overview"
GROUPED = "memories, grouped by kind"
KIND_FIRST = "kind=episodic, first page"
KIND_NEXT = "kind=episodic, next page (cursor)"
HISTORY = "history (kind=history)"
DETAIL = "memory detail"
SEARCH = "search (htmx POST q)"
ACTIVITY = "access history (activity)"
KINDS = [OVERVIEW, GROUPED, KIND_FIRST, KIND_NEXT, HISTORY, DETAIL, SEARCH, ACTIVITY]
GOALS = {OVERVIEW: GOAL_MS, GROUPED: GOAL_MS}
# What the browser's htmx search sends: the header that makes the view answer with the
# results fragment only, and the fragment it replaces.
HTMX = {"HX-Request": "true", "HX-Target": "results"}
DETAIL_NOTES = ("conversation turn", "current fact", "superseded fact", "instruction")
Served = Any
_NEXT = re.compile(r"[?&;]after=([A-Za-z0-9_-]+)")
_FOUND = re.compile(r"(\d+) memor(?:y|ies) found")
_UUIDS = re.compile(r"'\{[0-9a-f-]{36}(?:,[0-9a-f-]{36}){3,}\}'")  # long id lists in plans


# --- Plan ------------------------------------------------------------------------------------


@dataclass
class Row:
    planned: Planned
    at: datetime  # created_at
    until: datetime | None = None  # valid_to: superseded then
    successor: uuid.UUID | None = None  # superseded_by
    note: str = ""  # what the detail page shows (DETAIL_NOTES), for the person's


@dataclass
class Plan:
    rows: list[Row] = field(default_factory=list)
    sessions: dict[str, dict[str, datetime]] = field(default_factory=dict)  # subject: key: at
    queries: list[str] = field(default_factory=list)  # the person's searches


class Writer:
    """Contents from recall_bench's cores and follow-up clauses, and ids, from one seed."""

    def __init__(self, pool: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.cores = make_cores(pool, self.rng)
        self.tails = make_tails(max(40, pool // 20), self.rng)
        self.fixed = sum(1 for t in recall_bench.TAILS if "{" not in t)
        self.by_kind: dict[str, list[int]] = defaultdict(list)
        for index, core in enumerate(self.cores):
            self.by_kind[FAMILIES[core.family].kind].append(index)

    def uuid(self) -> uuid.UUID:
        return uuid.UUID(int=self.rng.getrandbits(128), version=4)

    def text(self, core: Core) -> tuple[str, tuple[int, ...]]:
        """The core with 0-2 follow-up clauses, as recall_bench.plan writes them."""
        parts: list[int] = []
        budget = 30 - words(core.text)
        for _ in range(self.rng.choice((0, 1, 1, 2, 2))):
            tail = (
                self.rng.randrange(self.fixed)
                if self.rng.random() < 0.5
                else self.rng.randrange(len(self.tails))
            )
            if words(self.tails[tail]) <= budget and tail not in parts:
                parts.append(tail)
                budget -= words(self.tails[tail])
        content = ". ".join([core.text, *[self.tails[t] for t in parts]])
        content = content if content.endswith(".") else content + "."
        return content.replace("..", "."), tuple(parts)


class SubjectPlanner:
    """One subject's memories being planned: the cores it speaks of most, its sessions, and
    dates over the last MONTHS days."""

    def __init__(self, writer: Writer, external_id: str, count: int, now: datetime) -> None:
        self.writer = writer
        self.rng = writer.rng
        self.external_id = external_id
        self.start = now - timedelta(days=MONTHS)
        self.span = (now - self.start).total_seconds() - 3600
        cores = len(writer.cores)
        self.own = self.rng.sample(range(cores), k=min(cores, max(60, count // 8)))
        self.own_by_kind: dict[str, list[int]] = defaultdict(list)
        for index in self.own:
            self.own_by_kind[FAMILIES[writer.cores[index].family].kind].append(index)
        self.sessions: dict[str, datetime] = {}
        self.keys: list[str] = []

    def moment(self) -> datetime:
        return self.start + timedelta(seconds=self.rng.uniform(0, self.span))

    def pick(self, kind: str | None) -> Core:
        writer, rng = self.writer, self.rng
        mine = self.own if kind is None else self.own_by_kind[kind]
        every = range(len(writer.cores)) if kind is None else writer.by_kind[kind]
        source = mine if mine and rng.random() < 0.85 else every
        return writer.cores[rng.choice(list(source))]

    def row(self, core: Core, kind: str, at: datetime, **fields: Any) -> Row:
        """A memory written at `at`."""
        content, parts = self.writer.text(core)
        item = NewMemory(
            id=self.writer.uuid(),
            content=content,
            subject_external_id=self.external_id,
            kind=kind,
            importance=round(self.rng.uniform(0.2, 0.9), 2),
            valid_from=at,
            tags=["bench"],
            **fields,
        )
        return Row(Planned(item, core, parts), at)

    def learned(self) -> tuple[datetime, dict[str, Any]]:
        """When a fact was written, and its source: most from a conversation, after it."""
        rng = self.rng
        if self.keys and rng.random() < 0.7:
            key = rng.choice(self.keys)
            return self.sessions[key] + timedelta(minutes=rng.randint(5, 40)), {
                "session": key,
                "extractor": "offline",
            }
        return self.moment(), {}

    def conversations(self, turns: int) -> list[Row]:
        """`turns` conversation turns in sessions of 6 to 24 (or a few more, for the last)."""
        rng = self.rng
        rows: list[Row] = []
        while turns > 0:
            size = min(turns, rng.randint(6, 24))
            if turns - size < 6:
                size = turns
            key = f"s{len(self.sessions) + 1}"
            began = self.moment()
            self.sessions[key] = began
            at = began
            for position in range(size):
                at += timedelta(seconds=rng.randint(20, 180))
                rows.append(
                    self.row(
                        self.pick(None),
                        Kind.EPISODIC,
                        at,
                        occurred_at=at,
                        session_key=key,
                        position=position,
                        source={"session": key},
                        metadata={"speaker": ("user", "assistant")[position % 2]},
                    )
                )
                rows[-1].note = DETAIL_NOTES[0]
            turns -= size
        self.keys = list(self.sessions)
        return rows

    def slot_chains(self, slotted: int) -> list[Row]:
        """`slotted` facts in chains of 1 to 4 values of one slot, each superseding the last."""
        writer, rng = self.writer, self.rng
        rows: list[Row] = []
        chain_no = 0
        while slotted > 0:
            length = min(slotted, rng.choice((1, 2, 2, 3, 4)))
            slotted -= length
            chain_no += 1
            first = self.pick(Kind.SEMANTIC)
            family = [
                i for i in writer.by_kind[Kind.SEMANTIC] if writer.cores[i].family == first.family
            ]
            slot = f"{_base(_SLOT.findall(FAMILIES[first.family].content)[0])}:{chain_no}"
            values = [first] + [writer.cores[rng.choice(family)] for _ in range(length - 1)]
            dated = sorted((self.learned() for _ in values), key=lambda pair: pair[0])
            chain = [
                self.row(
                    core,
                    Kind.SEMANTIC,
                    at,
                    source=source,
                    metadata={"slot": slot, "group": slot},
                    confidence=round(rng.uniform(0.6, 0.95), 2) if rng.random() < 0.33 else 1.0,
                )
                for core, (at, source) in zip(values, dated, strict=True)
            ]
            for older, newer in itertools.pairwise(chain):
                older.until = newer.at
                older.successor = newer.planned.item.id
                newer.planned.item.metadata["supersedes"] = [str(older.planned.item.id)]
            for each in chain:
                each.note = DETAIL_NOTES[2] if each.until else DETAIL_NOTES[1]
            rows += chain
        return rows

    def facts(self, count: int) -> list[Row]:
        """`count` facts of no slot, a third of them less than sure."""
        rows: list[Row] = []
        for _ in range(count):
            at, source = self.learned()
            confidence = round(self.rng.uniform(0.6, 0.95), 2) if self.rng.random() < 0.33 else 1.0
            rows.append(
                self.row(
                    self.pick(Kind.SEMANTIC),
                    Kind.SEMANTIC,
                    at,
                    source=source,
                    confidence=confidence,
                )
            )
            rows[-1].note = DETAIL_NOTES[1]
        return rows

    def instructions(self, count: int) -> list[Row]:
        rows: list[Row] = []
        for _ in range(count):
            at, source = self.learned()
            rows.append(self.row(self.pick(Kind.PROCEDURAL), Kind.PROCEDURAL, at, source=source))
            rows[-1].note = DETAIL_NOTES[3]
        return rows


def plan_subject(
    writer: Writer, external_id: str, count: int, now: datetime, plan: Plan
) -> list[Row]:
    """One subject's memories over the last MONTHS days: turns, facts (some superseded in
    their slot), instructions; 1% archived."""
    planner = SubjectPlanner(writer, external_id, count, now)
    turns = round(count * 0.70)
    instructions = round(count * 0.05)
    facts = count - turns - instructions
    slotted = round(facts * 0.4)
    rows = planner.conversations(turns)
    rows += planner.slot_chains(slotted)
    rows += planner.facts(facts - slotted)
    rows += planner.instructions(instructions)
    for each in rows:
        if writer.rng.random() < 0.01:
            each.planned.item.status = Status.ARCHIVED
            each.note = "archived"
    plan.sessions[external_id] = planner.sessions
    return rows


def make_plan(args: argparse.Namespace, now: datetime) -> tuple[Plan, Dataset]:
    writer = Writer(args.pool, args.seed)
    plan = Plan()
    person = plan_subject(writer, PERSON, args.memories, now, plan)
    plan.rows += person
    for number in range(args.others):
        plan.rows += plan_subject(
            writer, f"bench-other-{number:03d}", args.others_memories, now, plan
        )
    plan.rows.sort(key=lambda r: r.at)  # writes arrive over time, interleaved over subjects
    rng = random.Random(args.seed + 1)
    for _ in range(200):
        core = rng.choice(person).planned.core
        if rng.random() < 0.5:
            plan.queries.append(make_query(core, rng))
        else:  # a word or two of it, as a person types a topic
            plan.queries.append(rng.choice([value for _, value in core.slots]))
    data = Dataset([r.planned for r in plan.rows], [PERSON], "", writer.cores, writer.tails)
    return plan, data


# --- Load ------------------------------------------------------------------------------------


def load(
    namespace: Namespace,
    plan: Plan,
    data: Dataset,
    saved: dict[str, str],
    args: argparse.Namespace,
    log: Callable[[str], None],
) -> tuple[float, float]:
    """Store the planned memories with the bulk indexes dropped, date them, rebuild the
    indexes, VACUUM ANALYZE. Returns the load's and the index build's seconds."""
    real = get_provider()
    vectors = compose_vectors(data, real, log, args.seed)
    drop_indexes(list(saved))
    log(f"dropped {', '.join(saved)} for the load")
    set_provider(cast(EmbeddingProvider, PoolEmbedder(real.name, real.dimensions, vectors)))
    keys = KeyCache()
    started = time.perf_counter()
    try:
        for start in range(0, len(plan.rows), BATCH):
            batch = plan.rows[start : start + BATCH]
            memories_create_bulk(
                actor=ACTOR,
                namespace=namespace,
                items=[r.planned.item for r in batch],
                keys=keys,
            )
        rate = len(plan.rows) / (time.perf_counter() - started)
        log(f"  loaded {len(plan.rows)} memories, {rate:,.0f}/s")
    finally:
        set_provider(real)
    date(namespace, plan)
    load_seconds = time.perf_counter() - started
    index_seconds = build_indexes(saved, log)
    vacuum_seconds = vacuum_analyze()
    log(
        f"load {load_seconds:.1f}s ({len(plan.rows) / load_seconds:,.0f} memories/s), "
        f"index build {index_seconds:.1f}s, VACUUM ANALYZE {vacuum_seconds:.1f}s"
    )
    log(f"  {relation_sizes()}")
    return load_seconds, index_seconds


def date(namespace: Namespace, plan: Plan) -> None:
    """Each memory's planned date (created, updated, superseded) and its version's."""
    memories, versions = Memory._meta.db_table, MemoryVersion._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {memories} m SET created_at = t.at, updated_at = coalesce(t.until, t.at),"  # noqa: S608
            " valid_to = t.until, superseded_by_id = t.successor"
            " FROM unnest(%s::uuid[], %s::timestamptz[], %s::timestamptz[], %s::uuid[])"
            " AS t(id, at, until, successor)"
            " WHERE m.id = t.id",
            [
                [r.planned.item.id for r in plan.rows],
                [r.at for r in plan.rows],
                [r.until for r in plan.rows],
                [r.successor for r in plan.rows],
            ],
        )
        cursor.execute(
            f"UPDATE {versions} v SET created_at = m.created_at FROM {memories} m"  # noqa: S608
            " WHERE v.memory_id = m.id AND m.namespace_id = %s",
            [namespace.pk],
        )


def recall_logs(
    namespace: Namespace,
    by_subject: dict[str, list[Row]],
    subjects: dict[str, Any],
    app_key: ApiKey,
    args: argparse.Namespace,
    now: datetime,
    rng: random.Random,
) -> list[RecallLog]:
    """Per subject, the recall log's rows: which of its memories, known and current then,
    went into which answer (--recalls for the person, 40 for each other subject)."""
    logs: list[RecallLog] = []
    for external_id, rows in by_subject.items():
        count = args.recalls if external_id == PERSON else 40
        dates = [r.at for r in rows]
        # Facts and instructions go into answers five times as often as turns.
        weights = [1.0 if r.planned.item.kind == Kind.EPISODIC else 5.0 for r in rows]
        cumulative = [0.0]
        for w in weights:
            cumulative.append(cumulative[-1] + w)
        for _ in range(count):
            when = dates[0] + (now - dates[0]) * rng.random()
            known = bisect.bisect_right(dates, when)
            if known < 5:
                continue
            chosen: set[uuid.UUID] = set()
            wanted = rng.randint(5, 10)
            for _ in range(wanted * 20):
                if len(chosen) >= wanted:
                    break
                at = bisect.bisect_right(cumulative, rng.uniform(0, cumulative[known])) - 1
                r = rows[min(at, known - 1)]
                archived = r.planned.item.status == Status.ARCHIVED
                if (r.until is None or r.until > when) and not archived:
                    chosen.add(cast(uuid.UUID, r.planned.item.id))
            purpose = "recall" if rng.random() < 0.8 else "context"
            logs.append(
                RecallLog(
                    namespace=namespace,
                    subject_id=subjects[external_id],
                    purpose=purpose,
                    actor_type=ActorType.API_KEY,
                    actor_id=app_key.prefix,
                    memory_ids=sorted(chosen, key=str),
                    duration_ms=round(rng.uniform(8, 40), 1),
                    tokens=rng.randint(300, 2500) if purpose == "context" else None,
                    created_at=when,
                )
            )
    return logs


def dashboard_reads(
    namespace: Namespace,
    by_subject: dict[str, list[Row]],
    args: argparse.Namespace,
    rng: random.Random,
) -> None:
    """--reads content reads recorded: mostly one of the person's memories opened by an admin,
    else an explorer page showing a few of theirs among others'."""
    person = by_subject[PERSON]
    others = [r for external_id, rows in by_subject.items() if external_id != PERSON for r in rows]
    for number in range(args.reads):
        if number % 4 or not others:  # one of the person's memories, opened by an admin
            ids = [rng.choice(person).planned.item.id]
        else:  # an explorer page that showed a few of theirs among others'
            shown = rng.sample(person, min(3, len(person))) + rng.sample(
                others, min(12, len(others))
            )
            ids = [r.planned.item.id for r in shown]
        what = "memory" if len(ids) == 1 else "explorer"
        content_read_record(
            actor=ADMIN, namespace=namespace, what=what, memory_ids=cast(list[uuid.UUID], ids)
        )


def sessions_and_logs(
    namespace: Namespace,
    plan: Plan,
    app_key: ApiKey,
    args: argparse.Namespace,
    now: datetime,
    log: Callable[[str], None],
) -> None:
    """The sessions' rows; the recall log (which memories went into which answer); the
    dashboard's reads."""
    subjects = dict(Subject.objects.filter(namespace=namespace).values_list("external_id", "id"))
    Session.objects.bulk_create(
        [
            Session(
                namespace=namespace,
                subject_id=subjects[external_id],
                external_id=key,
                created_at=at,
                updated_at=at + timedelta(minutes=30),
            )
            for external_id, sessions in plan.sessions.items()
            for key, at in sessions.items()
        ],
        batch_size=2000,
    )
    rng = random.Random(args.seed + 3)
    by_subject: dict[str, list[Row]] = defaultdict(list)
    for r in plan.rows:  # in date order
        by_subject[r.planned.item.subject_external_id or ""].append(r)
    logs = recall_logs(namespace, by_subject, subjects, app_key, args, now, rng)
    RecallLog.objects.bulk_create(logs, batch_size=2000)
    dashboard_reads(namespace, by_subject, args, rng)
    mine = sum(1 for entry in logs if entry.subject_id == subjects[PERSON])
    log(
        f"  {sum(len(s) for s in plan.sessions.values())} sessions, {len(logs)} recall-log rows "
        f"({mine} of {PERSON}), {args.reads} dashboard reads"
    )


def describe(subject: Subject) -> str:
    """The person's memories as the portal counts them."""
    counts = Memory.objects.filter(namespace_id=subject.namespace_id, subject=subject).aggregate(
        total=Count("id"),
        current=Count("id", filter=Q(valid_to__isnull=True) & ~Q(status=Status.ARCHIVED)),
        episodic=Count("id", filter=Q(kind=Kind.EPISODIC)),
        semantic=Count("id", filter=Q(kind=Kind.SEMANTIC)),
        procedural=Count("id", filter=Q(kind=Kind.PROCEDURAL)),
        superseded=Count("id", filter=Q(valid_to__isnull=False)),
        archived=Count("id", filter=Q(status=Status.ARCHIVED)),
    )
    return ", ".join(f"{name} {value}" for name, value in counts.items())


# --- Measurement -----------------------------------------------------------------------------


class Portal:
    """The requests of each kind in one portal session, with the state they carry (the next
    page's cursor, the detail rotation, the searches)."""

    def __init__(
        self,
        client: Client,
        subject_id: str,
        details: dict[str, list[str]],
        queries: list[str],
        seed: int,
    ) -> None:
        self.client = client
        self.base = f"/portal/{subject_id}/"
        self.memories = f"{self.base}memories/"
        self.details = details
        self.queries = queries
        self.rng = random.Random(seed + 4)
        self.first_cursor = ""
        self.cursor = ""
        self.page = 2
        self.turn = 0
        self.searches = 0

    # Each returns (kind, note, request): the request is what is timed.

    def overview(self) -> tuple[str, str, Callable[[], Served]]:
        return OVERVIEW, "", lambda: self.client.get(self.base)

    def grouped(self) -> tuple[str, str, Callable[[], Served]]:
        return GROUPED, "", lambda: self.client.get(self.memories)

    def kind_first(self) -> tuple[str, str, Callable[[], Served]]:
        return KIND_FIRST, "", lambda: self.client.get(self.memories, {"kind": "episodic"})

    def kind_next(self) -> tuple[str, str, Callable[[], Served]]:
        if not self.cursor:  # back to page 2 (after the last, or at the start)
            self.cursor, self.page = self.first_cursor, 2
        query = {"kind": "episodic", "after": self.cursor}
        return KIND_NEXT, f"page {self.page}", lambda: self.client.get(self.memories, query)

    def follow(self, response: Served) -> None:
        """The next page's cursor, from its "Older" link."""
        found = _NEXT.search(response.content.decode())
        self.cursor = found.group(1) if found else ""
        self.page += 1

    def history(self) -> tuple[str, str, Callable[[], Served]]:
        return HISTORY, "", lambda: self.client.get(self.memories, {"kind": "history"})

    def detail(self) -> tuple[str, str, Callable[[], Served]]:
        note = DETAIL_NOTES[self.turn % len(DETAIL_NOTES)]
        self.turn += 1
        url = f"{self.memories}{self.rng.choice(self.details[note])}/"
        return DETAIL, note, lambda: self.client.get(url)

    def search(self) -> tuple[str, str, Callable[[], Served]]:
        query = self.queries[self.searches % len(self.queries)]
        self.searches += 1
        note = "words" if len(query.split()) <= 3 else "a question"
        return SEARCH, note, lambda: self.client.post(self.memories, {"q": query}, headers=HTMX)

    def activity(self) -> tuple[str, str, Callable[[], Served]]:
        return ACTIVITY, "", lambda: self.client.get(f"{self.base}activity/")

    def iteration(self) -> list[tuple[str, str, Callable[[], Served]]]:
        probes = [
            self.overview(),
            self.grouped(),
            self.kind_first(),
            self.kind_next(),
            self.history(),
            self.detail(),
            self.search(),
            self.activity(),
        ]
        self.rng.shuffle(probes)
        return probes


@dataclass
class Results:
    samples: dict[str, list[Sample]] = field(default_factory=lambda: defaultdict(list))
    hits: list[int] = field(default_factory=list)


def run_one(
    portal: Portal, probe: tuple[str, str, Callable[[], Served]], statements: Statements
) -> tuple[str, Sample, Served]:
    kind, note, request = probe
    statements.reset()
    started = time.perf_counter()
    response = request()
    ms = (time.perf_counter() - started) * 1000
    checked(response, f"{kind} {note}".strip())
    if kind == KIND_NEXT:
        portal.follow(response)
    return kind, Sample(ms, statements.ms, statements.count, note), response


def measure(
    portal: Portal, args: argparse.Namespace, statements: Statements, log: Callable[[str], None]
) -> tuple[Results, str]:
    # Warm up: the query model, the connection, every kind's templates, plans and caches.
    first = checked(portal.client.get(portal.memories, {"kind": "episodic"}), "kind page")
    found = _NEXT.search(first.content.decode())
    if not found:
        raise SystemExit("the episodic kind page has no Older link: too few memories?")
    portal.first_cursor = found.group(1)
    fragment = run_one(portal, portal.search(), statements)[2].content.decode()
    if "<html" in fragment or 'id="results"' not in fragment:
        raise SystemExit("the htmx search answered with more than the results fragment")
    for _ in range(args.warmup):
        for probe in portal.iteration():
            run_one(portal, probe, statements)
    portal.cursor = ""
    log(f"timing {args.requests} requests per kind; load average {os.getloadavg()[0]:.2f}")
    results = Results()
    meter = CpuMeter()
    with connection.execute_wrapper(statements):
        for number in range(args.requests):
            before = meter.snapshot()
            done: list[Sample] = []
            for probe in portal.iteration():
                kind, sample, response = run_one(portal, probe, statements)
                statements.keep(kind)
                results.samples[kind].append(sample)
                done.append(sample)
                if kind == SEARCH:
                    hits = _FOUND.search(response.content.decode())
                    results.hits.append(int(hits.group(1)) if hits else 0)
            other = meter.split(before, meter.snapshot()).get("other", 0.0)
            for sample in done:
                sample.other_cores = other
            if (number + 1) % max(1, args.requests // 5) == 0:
                log(f"  {number + 1} iterations")
    return results, meter.summary()


# --- Report ----------------------------------------------------------------------------------


def report(results: Results, quiet_only: bool = False) -> list[str]:
    """The table; returns the verdict lines."""
    cpu = f"{cpu_name()}, {os.cpu_count()} cores"

    def pick(kind: str) -> list[Sample]:
        return [s for s in results.samples[kind] if not quiet_only or s.other_cores < NOISY_CORES]

    print(
        f"{'kind':<40} {'n':>5} {'p50':>8} {'p95':>8} {'max':>8} {'db p50':>8} {'SQL':>5}"
        f"  {'goal':<22} verdict"
    )
    verdicts = []

    def row(label: str, samples: list[Sample], goal: float | None, indent: str = "") -> None:
        if not samples:
            print(f"{indent + label:<40} {0:>5}  -")
            return
        p95 = percentile([s.ms for s in samples], 95)
        verdict = ("PASS" if p95 <= goal else "FAIL") if goal is not None else ""
        target = f"p95 <= {goal:.0f} ms" if goal is not None else ""
        print(f"{indent + label:<40} {_figures(samples)}  {target:<22} {verdict}")
        if goal is not None:
            verdicts.append(f"{label}: p95 {p95:.1f} ms, goal <= {goal:.0f} ms: {verdict} [{cpu}]")

    for kind in KINDS:
        samples = pick(kind)
        row(kind, samples, GOALS.get(kind))
        if kind in (DETAIL, SEARCH):
            by_note: dict[str, list[Sample]] = defaultdict(list)
            for sample in samples:
                by_note[sample.note].append(sample)
            for note in sorted(by_note):
                row(note, by_note[note], None, "  ")
    return verdicts


def statement_profile(statements: Statements, top: int = 3) -> None:
    """Per kind, the statements that cost the most database time in all."""
    for kind in KINDS:
        seen = statements.by_kind.get(kind)
        if not seen:
            continue
        total = sum(entry[1] for entry in seen.values())
        print(f"{kind} (database {total:.0f} ms in all):")
        for sql, (runs, ms, _) in sorted(seen.items(), key=lambda item: -item[1][1])[:top]:
            print(f"  {ms / runs:>7.1f} ms x{runs:<4} {_short(sql)[:240]}")


def explain_slowest(statements: Statements, namespace: Namespace) -> None:
    """EXPLAIN (ANALYZE, BUFFERS) of each kind's costliest SELECT, as it last ran, behind the
    namespace's row-level security wall as the page ran it."""
    for kind in KINDS:
        seen = statements.by_kind.get(kind, {})
        selects = [
            (entry[1] / entry[0], sql, entry[2])
            for sql, entry in seen.items()
            if sql.lstrip().upper().startswith(("SELECT", "WITH"))
        ]
        if not selects:
            continue
        mean, sql, params = max(selects, key=lambda item: item[0])
        print(f"\n--- {kind}: costliest statement ({mean:.1f} ms on average)")
        print(_short(sql)[:800])
        with namespace_wall(namespace.pk), connection.cursor() as cursor:
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
            for (plan_line,) in cursor.fetchall():
                plan_line = _UUIDS.sub("'{...}'", _VECTOR.sub("'[...]'::vector", plan_line))
                print(plan_line[:400])


# --- Run -------------------------------------------------------------------------------------


def open_portal(
    slug: str, raw_key: str, log: Callable[[str], None]
) -> tuple[Client, str, list[str]]:
    """As an app sends its user: ask the API for a link, open it in a browser (the client).
    Returns the client (with the portal cookie), the subject's id, and the opening's times."""
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    started = time.perf_counter()
    answer = api.post(
        f"/api/v1/namespaces/{slug}/subjects/{PERSON}/portal-sessions", {}, format="json"
    )
    asked = (time.perf_counter() - started) * 1000
    if answer.status_code != 201:
        body = answer.content[:600].decode(errors="replace")
        raise SystemExit(f"portal-sessions: HTTP {answer.status_code}, expected 201\n{body}")
    link = urlsplit(answer.json()["url"])
    client = Client()
    started = time.perf_counter()
    entered = client.get(link.path)
    opened = (time.perf_counter() - started) * 1000
    target = entered.headers.get("Location", "")
    found = re.fullmatch(r"/portal/([0-9a-f-]{36})/", target)
    if entered.status_code != 303 or not found or COOKIE not in client.cookies:
        raise SystemExit(f"opening the link: HTTP {entered.status_code} to {target!r}")
    log(f"portal opened: link asked in {asked:.0f} ms, entered in {opened:.0f} ms (303 {target})")
    return client, found.group(1), [f"{asked:.0f}", f"{opened:.0f}"]


def logs_and_indexes(
    namespace: Namespace,
    plan: Plan,
    api_key: ApiKey,
    args: argparse.Namespace,
    now: datetime,
    log: Callable[[str], None],
) -> None:
    """The sessions, recall log and dashboard reads; then the subject indexes."""
    sessions_and_logs(namespace, plan, api_key, args, now, log)
    made = subject_indexes.refresh()
    log(
        f"subject indexes: {len(made.created)} created in {made.seconds:.1f}s "
        f"(MEMORYHUB_SUBJECT_INDEX_MIN {settings.MEMORYHUB_SUBJECT_INDEX_MIN})"
    )


def enter_portal(
    namespace: Namespace,
    plan: Plan,
    raw_key: str,
    args: argparse.Namespace,
    log: Callable[[str], None],
) -> tuple[Portal, Subject, list[str]]:
    """The person's portal opened by its link: (the portal's requests, the person, the link's
    and the entry's ms)."""
    subject = Subject.objects.get(namespace=namespace, external_id=PERSON)
    log(f"  {PERSON}: {describe(subject)}")
    client, subject_id, opening = open_portal(namespace.slug, raw_key, log)
    if subject_id != str(subject.pk):
        raise SystemExit(f"the link opened {subject_id}, not {subject.pk}")
    notes = {r.planned.item.id: r.note for r in plan.rows if r.note}
    details: dict[str, list[str]] = {note: [] for note in DETAIL_NOTES}
    for pk in Memory.objects.filter(namespace=namespace, subject=subject).values_list(
        "id", flat=True
    ):
        if notes.get(pk) in details:
            details[notes[pk]].append(str(pk))
    portal = Portal(client, subject_id, details, plan.queries, args.seed)
    return portal, subject, opening


def print_report(
    results: Results,
    cpu: str,
    statements: Statements,
    namespace: Namespace,
    subject: Subject,
    opening: list[str],
    loaded: tuple[float, float],
    args: argparse.Namespace,
) -> None:
    """The tables (all iterations, then the quiet ones), the costliest SQL and the goals."""
    print()
    print(
        f"Privacy portal server time (ms), {PERSON} with {args.memories} memories "
        f"({describe(subject)}), {args.others} other subjects x {args.others_memories}, "
        f"{args.recalls} recall-log rows of the person; {args.requests} requests per kind; "
        f"CPU: {cpu_name()} ({os.cpu_count()} cores)"
    )
    verdicts = report(results)
    print(cpu)
    pages = [int(s.note[5:]) for s in results.samples[KIND_NEXT]]
    empty = sum(1 for hits in results.hits if not hits)
    median_hits = percentile([float(hits) for hits in results.hits], 50)
    print(
        f"(next pages: 2 to {max(pages)}; searches: median {median_hits:.0f}"
        f" hits, {empty} of {len(results.hits)} empty; opening the portal: link "
        f"{opening[0]} ms, entry {opening[1]} ms)"
    )
    load_seconds, index_seconds = loaded
    print(f"(load {load_seconds:.0f}s, index build {index_seconds:.0f}s)")
    quiet = sum(1 for s in results.samples[OVERVIEW] if s.other_cores < NOISY_CORES)
    print(f"\nThe same over the quiet iterations ({quiet} of {args.requests}: other processes")
    print(f"under {NOISY_CORES} cores while they ran; CPU: {cpu_name()}):")
    if quiet:
        report(results, quiet_only=True)
    print("\nCostliest SQL statements by kind (mean database ms x runs):")
    statement_profile(statements)
    if args.explain:
        explain_slowest(statements, namespace)
    print("\nGoals:")
    for line in verdicts:
        print(f"  {line}")


def run(args: argparse.Namespace, log: Callable[[str], None]) -> None:
    saved = index_definitions()
    missing = [name for name in recall_bench.BULK_INDEXES if name not in saved]
    if missing:
        raise SystemExit(f"indexes missing before the run: {missing}; try --restore-indexes")
    log(f"CPU: {cpu_name()} ({os.cpu_count()} cores); query embedder: {get_provider().name}")
    log(
        f"portal rate limits raised for this process: MEMORYHUB_PORTAL_SESSION_RATE "
        f"{settings.MEMORYHUB_PORTAL_SESSION_RATE} and MEMORYHUB_PORTAL_ADDRESS_RATE "
        f"{settings.MEMORYHUB_PORTAL_ADDRESS_RATE} -> {RATE}"
    )
    settings.MEMORYHUB_PORTAL_SESSION_RATE = RATE
    settings.MEMORYHUB_PORTAL_ADDRESS_RATE = RATE
    now = timezone.now()
    started = time.perf_counter()
    plan, data = make_plan(args, now)
    log(
        f"planned {len(plan.rows)} memories: {args.memories} of {PERSON}, {args.others} other "
        f"subjects with {args.others_memories} each; {time.perf_counter() - started:.1f}s"
    )
    slug = f"bench-portal-{secrets.token_hex(4)}"
    api_key: ApiKey | None = None
    namespace: Namespace | None = None
    try:
        namespace = namespace_create(actor=ACTOR, slug=slug, name="Portal benchmark (temporary)")
        log(f"namespace {slug}")
        loaded = load(namespace, plan, data, saved, args, log)
        api_key, raw_key = api_key_create(
            actor=ACTOR, name="assistant app", namespaces=[namespace], permissions=API_PERMISSIONS
        )
        logs_and_indexes(namespace, plan, api_key, args, now, log)
        portal, subject, opening = enter_portal(namespace, plan, raw_key, args, log)
        if args.quiet_wait > 0:
            wait_for_quiet(args.quiet_wait, log)
        statements = Statements()
        results, cpu = measure(portal, args, statements, log)
        print_report(results, cpu, statements, namespace, subject, opening, loaded, args)
    finally:
        if api_key is not None:
            api_key.delete()
        if namespace is not None:
            cleanup(namespace, saved, log)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--memories", type=int, default=5_000, help="of the person")
    parser.add_argument("--others", type=int, default=50, help="other subjects")
    parser.add_argument("--others-memories", type=int, default=200, help="of each other subject")
    parser.add_argument("--recalls", type=int, default=2_000, help="recall-log rows of the person")
    parser.add_argument("--reads", type=int, default=200, help="dashboard reads in the audit log")
    parser.add_argument("--requests", type=int, default=100, help="timed requests per kind")
    parser.add_argument("--warmup", type=int, default=5, help="untimed iterations first")
    parser.add_argument("--pool", type=int, default=1_500, help="distinct sentence cores")
    parser.add_argument("--seed", type=int, default=20_241_201)
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=0,
        help="seconds to wait, before timing, for other processes to leave the CPU idle",
    )
    parser.add_argument("--explain", action="store_true", help="plans of the slowest statements")
    parser.add_argument(
        "--restore-indexes", action="store_true", help="only recreate missing indexes, then exit"
    )
    args = parser.parse_args()
    settings.DEBUG = False  # no query log; templates as in production
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]  # the test clients' host
    if args.restore_indexes:
        restore_from_model(print)
        return
    if min(args.memories, args.requests, args.pool) < 1 or args.warmup < 0:
        parser.error("sizes must be positive")
    if min(args.others, args.others_memories, args.recalls, args.reads) < 0:
        parser.error("counts cannot be negative")
    if args.memories < 200:
        parser.error("--memories: at least 200 (the kind pages need a next page)")
    with terminate_as_exit():
        run(args, lambda message: print(message, flush=True))


if __name__ == "__main__":
    main()
