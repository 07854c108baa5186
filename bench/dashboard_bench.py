"""Server time of the admin dashboard's governance pages at scale, next to the API's recall.

    .venv/bin/python bench/dashboard_bench.py [--memories 100000] [--subjects 1000]
                                              [--requests 100] [--warmup 5] [--seed N]
                                              [--pool 6000] [--api-k 20] [--quiet-wait 300]
                                              [--explain] [--restore-indexes]
                                              [--keep | --reuse SLUG [--drop]]

Goals (2 cores, 100k memories in one namespace over 1,000 subjects): the explorer's list, a
filtered list and a memory's detail page p95 <= 150 ms each; the overview (every namespace,
and the namespace's own) p95 <= 200 ms; the explorer's search (the
recall engine, with a subject filter) p95 <= 1.3 x the p95 of the API's recall for the same
subject, query and k (the explorer shows `views.SEARCH_HITS` hits; `--api-k` changes the
API's), measured in the same loop.

Load. A temporary namespace gets `--memories` generated memories over `--subjects` subjects,
planned as recall_bench plans them (short sentences from templates, ~30% of them conversation
turns, interleaved over subjects; vectors composed from a pool the real model embedded once)
and stored through `services.memories_create_bulk` in batches of 1,000 with the HNSW and
keyword GIN indexes dropped, rebuilt afterwards, then VACUUM ANALYZE (times printed). So that
the filters choose realistic subsets, the memories also vary as governance sees them: turns
are episodic with a session source, ~4% of memories are archived and ~2% pending review, ~1%
tagged `pii:email` (and some `pii:phone`, `important`), a third of the non-turns have a
confidence between 0.3 and 0.95, and a few percent are chunks of documents. An owner member
of the namespace (a new user) makes the page requests; an API key (memories:read/write,
context, subjects:admin) makes the recalls.

Timing. Server time is the wall time around `django.test.Client.get/post` (force_login): URL
resolution, middleware, the view, decryption, the templates and the audit event each page
writes; for the baseline, around `rest_framework.test.APIClient.post` of
`/api/v1/namespaces/<slug>/recall` (authentication, throttling, the row-security wall,
recall, serialization, the recall log). Every iteration of one loop makes one request of
each kind, in a shuffled order (the machine's state is shared): the explorer's first page; a
deeper page, by the `after` cursor of the previous deeper page's "Next" link; a filtered
list, rotating over subject + kind=semantic, status=archived, pii=pii:email and
confidence_below=0.5; the detail page of a random memory; the explorer's search as the
browser's htmx form sends it (POST `q` with the filter form, header HX-Request: the results
fragment is the answer) with a random subject as filter, and the API recall of the same
subject, query and k (the two alternate which goes first: both share the subject's cached
population statistics); and, as extra lines with no goal, the search of the whole namespace
(no subject filter) and the search as a browser without JavaScript posts it (the whole
page). Queries are paraphrases of one of the subject's memories (recall_bench's
`make_query`). Each kind is warmed up first (untimed). Any response but 200 stops the run.
Printed per kind: p50, p95 and max of the server time, the median database time and number
of SQL statements, the goal; then the same over the "quiet" iterations (other processes
under 0.25 cores), the most expensive SQL statements of each kind, and with `--explain` the
plan (EXPLAIN ANALYZE, BUFFERS) of the slowest statement of each page kind.

The namespace, the user and the API key are deleted at the end, also on failure (audit
events stay: append-only), and the indexes exist again when the script ends
(`--restore-indexes` recreates missing ones after a hard kill). `--keep` leaves the loaded
namespace in place (its plan is saved under var/bench/); `--reuse SLUG` times against it
without loading again; `--reuse SLUG --drop` deletes it at the end.
"""

from __future__ import annotations

import argparse
import json
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
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.db.models import Count, Q  # noqa: E402
from django.test import Client  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from apps.accounts.models import ApiKey  # noqa: E402
from apps.accounts.services import api_key_create  # noqa: E402
from apps.audit.actors import Actor  # noqa: E402
from apps.dashboard.memories.views.explorer import SEARCH_HITS  # noqa: E402
from apps.memories.embeddings import EmbeddingProvider, get_provider, set_provider  # noqa: E402
from apps.memories.models import Kind, Memory, Status  # noqa: E402
from apps.memories.row_encryption import KeyCache  # noqa: E402
from apps.memories.services import memories_create_bulk  # noqa: E402
from apps.namespaces.models import MembershipRole, Namespace  # noqa: E402
from apps.namespaces.services import membership_set, namespace_create  # noqa: E402
from apps.recall import subject_indexes  # noqa: E402
from bench import recall_bench  # noqa: E402
from bench.machine import terminate_as_exit  # noqa: E402
from bench.recall_bench import (  # noqa: E402
    _VECTOR,
    BATCH,
    NOISY_CORES,
    CpuMeter,
    Dataset,
    PoolEmbedder,
    build_indexes,
    cleanup,
    compose_vectors,
    drop_indexes,
    index_definitions,
    make_query,
    percentile,
    plan,
    relation_sizes,
    restore_from_model,
    vacuum_analyze,
    wait_for_quiet,
)
from bench.summary_bench import cpu_name  # noqa: E402

GOAL_MS = 150.0
OVERVIEW_GOAL_MS = 200.0  # Dashboard II: the overview's charts of the last 30 days
GOAL_RATIO = 1.3
ACTOR = Actor.system("dashboard-bench")
# recall_bench's cleanup audits the namespace's deletion under its module's actor: this one.
recall_bench.ACTOR = ACTOR
API_PERMISSIONS = ["memories:read", "memories:write", "context", "subjects:admin"]

# The timed kinds: (group, line). A group's goal applies to each of its lines and to all.
LIST_FIRST = "list: first page"
LIST_DEEP = "list: deeper page (after cursor)"
DETAIL = "detail"
OVERVIEW_ALL = "overview: every namespace (/)"
OVERVIEW_ONE = "overview: the namespace (/n/<slug>/)"
SEARCH = "search: explorer, subject filter"
SEARCH_ALL = "search: explorer, whole namespace"
SEARCH_PAGE = "search: explorer, full page (no JavaScript)"
# What the browser's htmx search sends: the filter form as it stands (hx-include), and the
# header that makes the view answer with the results fragment only.
HTMX = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "results"}
API_RECALL = "API recall (baseline)"
FILTERS = (
    ("filter: subject + kind=semantic", lambda subject: {"subject": subject, "kind": "semantic"}),
    ("filter: status=archived", lambda subject: {"status": "archived"}),
    ("filter: pii=pii:email", lambda subject: {"pii": "pii:email"}),
    ("filter: confidence_below=0.5", lambda subject: {"confidence_below": "0.5"}),
)
GROUPS: dict[str, list[str]] = {
    "list": [LIST_FIRST, LIST_DEEP],
    "filter": [name for name, _ in FILTERS],
    "detail": [DETAIL],
    "overview": [OVERVIEW_ALL, OVERVIEW_ONE],
}
GROUP_GOALS = {"overview": OVERVIEW_GOAL_MS}
# What the test clients answer (their stubs disagree: a WSGI response, a DRF "Request"): a
# response with status_code and content.
Served = Any
_NEXT = re.compile(r"[?&;]after=([A-Za-z0-9_-]+)")
_HITS = re.compile(r"<h2>(\d+) hits?\b")
_COLUMNS = re.compile(r"^SELECT (?:\"\w+\"\.\"\w+\"(?: AS \"\w+\")?, )+\"\w+\"\.\"\w+\" FROM ")


# --- Load ------------------------------------------------------------------------------------


def vary(data: Dataset, seed: int) -> None:
    """Spread the planned memories over what the governance filters choose by: turns are
    episodic with a session source; statuses, PII and other tags, confidences; a few
    documents (3-8 chunks) per subject among its other memories."""
    rng = random.Random(seed + 2)
    singles: dict[str, list[Any]] = defaultdict(list)
    for planned in data.items:
        item = planned.item
        if item.session_key:
            item.kind = Kind.EPISODIC
            item.source = {"session": item.session_key, "extractor": "turn"}
        else:
            singles[item.subject_external_id or ""].append(item)
            if rng.random() < 0.35:
                item.confidence = round(rng.uniform(0.3, 0.95), 2)
        roll = rng.random()
        item.status = (
            Status.ARCHIVED
            if roll < 0.04
            else Status.PENDING_REVIEW
            if roll < 0.06
            else Status.ACTIVE
        )
        tags = ["bench"]
        for tag, share in (("pii:email", 0.01), ("pii:phone", 0.005), ("important", 0.08)):
            if rng.random() < share:
                tags.append(tag)
        item.tags = tags
    for items in singles.values():
        for _ in range(rng.choice((0, 0, 1, 1, 2))):
            free = [item for item in items if "document" not in item.source]
            size = min(len(free), rng.randint(3, 8))
            if size < 2:
                break
            document = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            for index, item in enumerate(rng.sample(free, size)):
                item.source = {"document": document, "chunk": index, "chunks": size}
                item.metadata = {"document": document, "chunk": index}


def load(
    namespace: Namespace,
    data: Dataset,
    saved: dict[str, str],
    args: argparse.Namespace,
    log: Callable[[str], None],
) -> tuple[float, float]:
    """Store the planned memories with the bulk indexes dropped; rebuild them, VACUUM ANALYZE.
    Returns the load's and the index build's seconds."""
    real = get_provider()
    vectors = compose_vectors(data, real, log, args.seed)
    drop_indexes(list(saved))
    log(f"dropped {', '.join(saved)} for the load")
    set_provider(cast(EmbeddingProvider, PoolEmbedder(real.name, real.dimensions, vectors)))
    keys = KeyCache()
    started = time.perf_counter()
    try:
        for start in range(0, len(data.items), BATCH):
            batch = data.items[start : start + BATCH]
            memories_create_bulk(
                actor=ACTOR, namespace=namespace, items=[p.item for p in batch], keys=keys
            )
            done = start + len(batch)
            if done % 20_000 < BATCH or done == len(data.items):
                rate = done / (time.perf_counter() - started)
                log(f"  loaded {done:>7} memories, {rate:,.0f}/s")
    finally:
        set_provider(real)
    load_seconds = time.perf_counter() - started
    index_seconds = build_indexes(saved, log)
    vacuum_seconds = vacuum_analyze()
    log(
        f"load {load_seconds:.1f}s ({len(data.items) / load_seconds:,.0f} memories/s), "
        f"index build {index_seconds:.1f}s, VACUUM ANALYZE {vacuum_seconds:.1f}s"
    )
    log(f"  {relation_sizes()}")
    return load_seconds, index_seconds


def describe(namespace: Namespace) -> str:
    """How many memories each filter's subset holds."""
    counts = Memory.objects.filter(namespace=namespace).aggregate(
        total=Count("id"),
        semantic=Count("id", filter=Q(kind=Kind.SEMANTIC)),
        turns=Count("id", filter=~Q(session_key="")),
        documents=Count("id", filter=Q(source__has_key="document")),
        archived=Count("id", filter=Q(status=Status.ARCHIVED)),
        pending=Count("id", filter=Q(status=Status.PENDING_REVIEW)),
        email=Count("id", filter=Q(tags__contains=["pii:email"])),
        unsure=Count("id", filter=Q(confidence__lt=0.5)),
    )
    return ", ".join(f"{name} {value}" for name, value in counts.items())


# --- Measurement -----------------------------------------------------------------------------


class Statements:
    """Execute wrapper: each statement's database time during a request, and per kind the
    total time of each distinct SQL text (with the parameters it last ran with)."""

    def __init__(self) -> None:
        self.ms = 0.0
        self.count = 0
        self.current: list[tuple[str, Any, float]] = []
        self.by_kind: dict[str, dict[str, list[Any]]] = defaultdict(dict)

    def reset(self) -> None:
        self.ms, self.count, self.current = 0.0, 0, []

    def keep(self, kind: str) -> None:
        seen = self.by_kind[kind]
        for sql, params, ms in self.current:
            entry = seen.setdefault(sql, [0, 0.0, params])
            entry[0] += 1
            entry[1] += ms
            entry[2] = params

    def __call__(
        self,
        execute: Callable[..., Any],
        sql: str,
        params: Any,
        many: bool,
        context: dict[str, Any],
    ) -> Any:
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            ms = (time.perf_counter() - started) * 1000
            self.ms += ms
            self.count += 1
            self.current.append((sql, params, ms))


@dataclass
class Sample:
    ms: float
    db_ms: float
    statements: int
    note: str = ""
    other_cores: float = 0.0


@dataclass
class Results:
    samples: dict[str, list[Sample]] = field(default_factory=lambda: defaultdict(list))
    empty_searches: dict[str, int] = field(default_factory=lambda: defaultdict(int))


def checked(response: Served, what: str) -> Served:
    if response.status_code != 200:
        body = response.content[:600].decode(errors="replace")
        raise SystemExit(f"{what}: HTTP {response.status_code}, expected 200\n{body}")
    return response


class Pages:
    """The requests of each kind, against one namespace, with the state they carry (the
    deeper page's cursor, the filter rotation)."""

    def __init__(
        self,
        slug: str,
        user: User,
        raw_key: str,
        subjects: list[str],
        queries: dict[str, list[str]],
        memory_ids: list[tuple[str, str]],
        api_k: int,
        seed: int,
    ) -> None:
        self.slug = slug
        self.base = f"/n/{slug}/memories/"
        self.client = Client()
        self.client.force_login(user)
        self.api = APIClient()
        self.api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
        self.subjects = subjects
        self.queries = queries
        self.memory_ids = memory_ids
        self.api_k = api_k
        self.rng = random.Random(seed + 3)
        self.deep_cursor = ""
        self.deep_page = 1
        self.first_cursor = ""
        self.turn = 0
        self.overviews = 0

    def draw(self) -> tuple[str, str]:
        subject = self.rng.choice(self.subjects)
        return subject, self.rng.choice(self.queries[subject])

    # Each returns (line, note, request): the request is what is timed.

    def list_first(self) -> tuple[str, str, Callable[[], Served]]:
        return LIST_FIRST, "", lambda: self.client.get(self.base)

    def list_deep(self) -> tuple[str, str, Callable[[], Served]]:
        if not self.deep_cursor:  # back to page 2 (after the end, or at the start)
            self.deep_cursor, self.deep_page = self.first_cursor, 2
        cursor, page = self.deep_cursor, self.deep_page
        return LIST_DEEP, f"page {page}", lambda: self.client.get(self.base, {"after": cursor})

    def follow(self, response: Served) -> None:
        """The deeper page's next cursor, from its "Next" link."""
        found = _NEXT.search(response.content.decode())
        self.deep_cursor = found.group(1) if found else ""
        self.deep_page += 1

    def filtered(self) -> tuple[str, str, Callable[[], Served]]:
        name, make = FILTERS[self.turn % len(FILTERS)]
        self.turn += 1
        query = make(self.rng.choice(self.subjects))
        return name, "", lambda: self.client.get(self.base, query)

    def overview(self) -> tuple[str, str, Callable[[], Served]]:
        self.overviews += 1
        if self.overviews % 2:
            return OVERVIEW_ALL, "", lambda: self.client.get("/")
        return OVERVIEW_ONE, "", lambda: self.client.get(f"/n/{self.slug}/")

    def detail(self) -> tuple[str, str, Callable[[], Served]]:
        memory_id, provenance = self.rng.choice(self.memory_ids)
        return DETAIL, provenance, lambda: self.client.get(f"{self.base}{memory_id}/")

    def search(self, subject: str, query: str) -> tuple[str, str, Callable[[], Served]]:
        body = {"q": query, "subject": subject}
        return SEARCH, "", lambda: self.client.post(self.base, body, **HTMX)

    def search_page(self) -> tuple[str, str, Callable[[], Served]]:
        subject, query = self.draw()
        url = f"{self.base}?subject={subject}"
        return SEARCH_PAGE, "", lambda: self.client.post(url, {"q": query})

    def search_all(self) -> tuple[str, str, Callable[[], Served]]:
        _, query = self.draw()
        return SEARCH_ALL, "", lambda: self.client.post(self.base, {"q": query}, **HTMX)

    def recall(self, subject: str, query: str) -> tuple[str, str, Callable[[], Served]]:
        url = f"/api/v1/namespaces/{self.slug}/recall"
        body = {"subject": subject, "query": query, "k": self.api_k}
        return API_RECALL, "", lambda: self.api.post(url, body, format="json")

    def iteration(self, number: int) -> list[tuple[str, str, Callable[[], Served]]]:
        """One request of each kind, shuffled; the subject search and its API baseline
        next to each other, alternating which goes first."""
        subject, query = self.draw()
        pair = [self.search(subject, query), self.recall(subject, query)]
        if number % 2:
            pair.reverse()
        others = [self.list_first(), self.list_deep(), self.filtered(), self.detail()]
        others.append(self.overview())
        others += [self.search_all(), self.search_page()]
        self.rng.shuffle(others)
        at = self.rng.randrange(len(others) + 1)
        return others[:at] + pair + others[at:]


def run_one(
    pages: Pages, probe: tuple[str, str, Callable[[], Served]], statements: Statements
) -> tuple[str, Sample, Served]:
    line, note, request = probe
    statements.reset()
    started = time.perf_counter()
    response = request()
    ms = (time.perf_counter() - started) * 1000
    checked(response, f"{line} {note}".strip())
    if line == LIST_DEEP:
        pages.follow(response)
    return line, Sample(ms, statements.ms, statements.count, note), response


def hits_of(line: str, response: Served) -> int | None:
    if line == API_RECALL:
        return len(json.loads(response.content)["results"])
    if line in (SEARCH, SEARCH_ALL, SEARCH_PAGE):
        found = _HITS.search(response.content.decode())
        return int(found.group(1)) if found else 0
    return None


def measure(
    pages: Pages, args: argparse.Namespace, statements: Statements, log: Callable[[str], None]
) -> tuple[Results, str]:
    # Warm up: the model, the connection, every kind's templates, plans and caches.
    first = checked(pages.client.get(pages.base), "explorer")
    found = _NEXT.search(first.content.decode())
    if not found:
        raise SystemExit("the explorer's first page has no Next link: too few memories?")
    pages.first_cursor = found.group(1)
    for number in range(args.warmup):
        for probe in pages.iteration(number):
            run_one(pages, probe, statements)
    pages.deep_cursor = ""
    log(f"timing {args.requests} requests per kind; load average {os.getloadavg()[0]:.2f}")
    results = Results()
    meter = CpuMeter()
    with connection.execute_wrapper(statements):
        for number in range(args.requests):
            before = meter.snapshot()
            done: list[Sample] = []
            for probe in pages.iteration(number):
                line, sample, response = run_one(pages, probe, statements)
                statements.keep(line)
                results.samples[line].append(sample)
                done.append(sample)
                if hits_of(line, response) == 0:
                    results.empty_searches[line] += 1
            other = meter.split(before, meter.snapshot()).get("other", 0.0)
            for sample in done:
                sample.other_cores = other
            if (number + 1) % max(1, args.requests // 5) == 0:
                log(f"  {number + 1} iterations")
    return results, meter.summary()


# --- Report ----------------------------------------------------------------------------------


def _figures(samples: list[Sample]) -> str:
    walls = [s.ms for s in samples]
    return (
        f"{len(walls):>5} {percentile(walls, 50):>8.1f} {percentile(walls, 95):>8.1f}"
        f" {max(walls):>8.1f} {percentile([s.db_ms for s in samples], 50):>8.1f}"
        f" {percentile([float(s.statements) for s in samples], 50):>5.0f}"
    )


def report(results: Results, args: argparse.Namespace, quiet_only: bool = False) -> list[str]:
    """The table; returns the verdict lines."""
    cpu = f"{cpu_name()}, {os.cpu_count()} cores"

    def pick(line: str) -> list[Sample]:
        return [s for s in results.samples[line] if not quiet_only or s.other_cores < NOISY_CORES]

    header = (
        f"{'kind':<40} {'n':>5} {'p50':>8} {'p95':>8} {'max':>8} {'db p50':>8} {'SQL':>5}"
        f"  {'goal':<22} verdict"
    )
    print(header)
    verdicts = []

    def row(label: str, samples: list[Sample], goal: float | None, indent: str = "") -> None:
        if not samples:
            print(f"{indent + label:<40} {0:>5}  -")
            return
        p95 = percentile([s.ms for s in samples], 95)
        verdict = ("PASS" if p95 <= goal else "FAIL") if goal is not None else ""
        target = f"p95 <= {goal:.0f} ms" if goal is not None else ""
        print(f"{indent + label:<40} {_figures(samples)}  {target:<22} {verdict}")
        if goal is not None and not indent:
            verdicts.append(f"{label}: p95 {p95:.1f} ms, goal <= {goal:.0f} ms: {verdict} [{cpu}]")

    for group, lines in GROUPS.items():
        everything = [s for line in lines for s in pick(line)]
        goal = GROUP_GOALS.get(group, GOAL_MS)
        if len(lines) > 1:
            row(f"{group} (all)", everything, goal)
            for line in lines:
                row(line, pick(line), goal, "  ")
        else:
            row(group, everything, goal)
            if group == "detail":
                by_note: dict[str, list[Sample]] = defaultdict(list)
                for sample in everything:
                    by_note[sample.note].append(sample)
                for note in sorted(by_note):
                    row(f"{DETAIL}: {note}", by_note[note], None, "  ")
    search, api = pick(SEARCH), pick(API_RECALL)
    row(SEARCH, search, None)
    row(f"{API_RECALL}, k={args.api_k}", api, None)
    row(SEARCH_ALL, pick(SEARCH_ALL), None)
    row(SEARCH_PAGE, pick(SEARCH_PAGE), None)
    if search and api:
        ratio = percentile([s.ms for s in search], 95) / percentile([s.ms for s in api], 95)
        verdict = "PASS" if ratio <= GOAL_RATIO else "FAIL"
        line = (
            f"search p95 / API recall p95 = {ratio:.2f} (goal <= {GOAL_RATIO}): {verdict} [{cpu}]"
        )
        print(line)
        verdicts.append(line)
    return verdicts


def _short(sql: str) -> str:
    """One line, without vectors and without an ORM statement's long column list."""
    text = _VECTOR.sub("'[...]'::vector", " ".join(sql.split()))
    return _COLUMNS.sub("SELECT … FROM ", text, count=1)


def statement_profile(statements: Statements, top: int = 3) -> None:
    """Per kind, the statements that cost the most database time in all, with their share."""
    for kind in (
        *[line for lines in GROUPS.values() for line in lines],
        SEARCH,
        SEARCH_ALL,
        SEARCH_PAGE,
    ):
        seen = statements.by_kind.get(kind)
        if not seen:
            continue
        total = sum(entry[1] for entry in seen.values())
        print(f"{kind} (database {total:.0f} ms in all):")
        ranked = sorted(seen.items(), key=lambda item: -item[1][1])[:top]
        for sql, (runs, ms, _) in ranked:
            print(f"  {ms / runs:>7.1f} ms x{runs:<4} {_short(sql)[:240]}")


def explain_slowest(statements: Statements) -> None:
    """EXPLAIN (ANALYZE, BUFFERS) of each page kind's costliest SELECT, as it last ran."""
    for kind in (
        *[line for lines in GROUPS.values() for line in lines],
        SEARCH,
        SEARCH_ALL,
        SEARCH_PAGE,
    ):
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
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
            for (plan_line,) in cursor.fetchall():
                print(_VECTOR.sub("'[...]'::vector", plan_line))


# --- Run -------------------------------------------------------------------------------------


def _saved_plan(slug: str) -> Path:
    return Path(settings.BASE_DIR) / "var" / "bench" / f"dashboard-{slug}.json"


def plan_run(args: argparse.Namespace, log: Callable[[str], None]) -> tuple[str, Dataset]:
    """The namespace's slug and the planned memories; with --reuse, the kept run's sizes."""
    if args.reuse:
        stored = json.loads(_saved_plan(args.reuse).read_text())
        for name in ("memories", "subjects", "seed", "pool"):
            setattr(args, name, stored[name])
        slug = args.reuse
    else:
        slug = f"bench-dashboard-{secrets.token_hex(4)}"
    started = time.perf_counter()
    data = plan(args.memories, args.subjects, 0, min(args.pool, args.memories), args.seed)
    vary(data, args.seed)
    log(
        f"planned {len(data.items)} memories over {args.subjects} subjects, "
        f"{sum(1 for p in data.items if p.item.session_key)} of them conversation turns; "
        f"{time.perf_counter() - started:.1f}s"
    )
    return slug, data


def load_new(
    namespace: Namespace,
    data: Dataset,
    saved: dict[str, str],
    args: argparse.Namespace,
    keep: bool,
    log: Callable[[str], None],
) -> tuple[float, float]:
    """Load a new namespace and build the subject indexes; with `keep`, save the plan for
    --reuse. Returns the load's and the index build's seconds."""
    load_seconds, index_seconds = load(namespace, data, saved, args, log)
    made = subject_indexes.refresh()
    log(f"subject indexes: {len(made.created)} created in {made.seconds:.1f}s")
    if keep:
        slug = namespace.slug
        plan_file = _saved_plan(slug)
        plan_file.parent.mkdir(parents=True, exist_ok=True)
        stored = {k: getattr(args, k) for k in ("memories", "subjects", "seed", "pool")}
        plan_file.write_text(json.dumps(stored))
        log(f"kept namespace {slug}: --reuse {slug} times against it")
    return load_seconds, index_seconds


def pages_for(
    namespace: Namespace, user: User, raw_key: str, data: Dataset, args: argparse.Namespace
) -> Pages:
    """The requests to time: up to 20 queries per subject and every memory's id and origin."""
    queries: dict[str, list[str]] = defaultdict(list)
    rng = random.Random(args.seed + 1)
    for planned in data.items:
        subject_queries = queries[planned.item.subject_external_id or ""]
        if len(subject_queries) < 20:
            subject_queries.append(make_query(planned.core, rng))
    memory_ids = [
        (
            str(pk),
            "document chunk"
            if "document" in source
            else "conversation turn"
            if session_key
            else "written directly",
        )
        for pk, source, session_key in Memory.objects.filter(namespace=namespace).values_list(
            "id", "source", "session_key"
        )
    ]
    return Pages(
        namespace.slug, user, raw_key, data.subjects, queries, memory_ids, args.api_k, args.seed
    )


def print_report(
    results: Results,
    cpu: str,
    statements: Statements,
    memories: int,
    args: argparse.Namespace,
    loaded: tuple[float, float] | None,
) -> None:
    """The tables (all iterations, then the quiet ones), the costliest SQL and the goals."""
    print()
    print(
        f"Dashboard server time (ms), {memories} memories in the namespace over "
        f"{args.subjects} subjects, {args.requests} requests per kind; CPU: {cpu_name()} "
        f"({os.cpu_count()} cores)"
    )
    verdicts = report(results, args)
    print(cpu)
    deepest = max((s.note for s in results.samples[LIST_DEEP]), key=lambda n: int(n[5:]))
    print(f"(deeper pages: 2 to {deepest[5:]}; empty searches: {dict(results.empty_searches)})")
    if loaded is not None:
        load_seconds, index_seconds = loaded
        print(f"(load {load_seconds:.0f}s, index build {index_seconds:.0f}s)")
    quiet = sum(1 for s in results.samples[LIST_FIRST] if s.other_cores < NOISY_CORES)
    print(f"\nThe same over the quiet iterations ({quiet} of {args.requests}: other processes")
    print(f"under {NOISY_CORES} cores while they ran):")
    if quiet:
        report(results, args, quiet_only=True)
    print("\nCostliest SQL statements by kind (mean database ms x runs):")
    statement_profile(statements)
    if args.explain:
        explain_slowest(statements)
    print("\nGoals:")
    for line in verdicts:
        print(f"  {line}")


def run(args: argparse.Namespace, log: Callable[[str], None]) -> None:
    saved = index_definitions()
    missing = [name for name in recall_bench.BULK_INDEXES if name not in saved]
    if missing:
        raise SystemExit(f"indexes missing before the run: {missing}; try --restore-indexes")
    log(f"CPU: {cpu_name()} ({os.cpu_count()} cores); query embedder: {get_provider().name}")
    slug, data = plan_run(args, log)
    keep = args.keep or bool(args.reuse)
    user = User.objects.create_user(f"dashboard-bench-{secrets.token_hex(4)}")
    api_key: ApiKey | None = None
    namespace: Namespace | None = None
    loaded: tuple[float, float] | None = None
    try:
        if args.reuse:
            namespace = Namespace.objects.get(slug=args.reuse)
            membership_set(actor=ACTOR, namespace=namespace, user=user, role=MembershipRole.OWNER)
            log(f"reusing namespace {slug}")
        else:
            namespace = namespace_create(
                actor=ACTOR, slug=slug, name="Dashboard benchmark (temporary)", owner=user
            )
            log(f"namespace {slug}")
            loaded = load_new(namespace, data, saved, args, keep, log)
        log(f"  memories: {describe(namespace)}")
        api_key, raw_key = api_key_create(
            actor=ACTOR, name="dashboard-bench", namespaces=[namespace], permissions=API_PERMISSIONS
        )
        pages = pages_for(namespace, user, raw_key, data, args)
        if args.quiet_wait > 0:
            wait_for_quiet(args.quiet_wait, log)
        statements = Statements()
        results, cpu = measure(pages, args, statements, log)
        print_report(results, cpu, statements, len(pages.memory_ids), args, loaded)
    finally:
        if api_key is not None:
            api_key.delete()
        user.delete()
        if namespace is not None and (not keep or args.drop):
            cleanup(namespace, saved, log)
            _saved_plan(slug).unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000, help="in the namespace")
    parser.add_argument("--subjects", type=int, default=1_000)
    parser.add_argument("--requests", type=int, default=100, help="timed requests per kind")
    parser.add_argument("--warmup", type=int, default=5, help="untimed iterations first")
    parser.add_argument("--pool", type=int, default=6_000, help="distinct sentence cores")
    parser.add_argument("--seed", type=int, default=20_241_201)
    parser.add_argument(
        "--api-k",
        type=int,
        default=SEARCH_HITS,
        help=f"k of the API recall (default: the explorer's hits, {SEARCH_HITS})",
    )
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
    parser.add_argument("--keep", action="store_true", help="keep the loaded namespace")
    parser.add_argument("--reuse", metavar="SLUG", help="time against a kept namespace")
    parser.add_argument("--drop", action="store_true", help="with --reuse: delete it at the end")
    args = parser.parse_args()
    settings.DEBUG = False  # no query log; templates as in production
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]  # the test clients' host
    if args.restore_indexes:
        restore_from_model(print)
        return
    if min(args.memories, args.subjects, args.requests, args.pool) < 1 or args.warmup < 0:
        parser.error("sizes must be positive")
    if args.memories < args.subjects:
        parser.error("--memories must be at least --subjects")
    with terminate_as_exit():
        run(args, lambda message: print(message, flush=True))


if __name__ == "__main__":
    main()
