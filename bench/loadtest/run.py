"""`make loadtest`: MemoryHub's production stack on loopback, driven by locust; prints figures.

    .venv/bin/python bench/loadtest/run.py [--single 60] [--steps 2,4,8,16] [--step 40]
                                           [--duration 60] [--half 90] [--max-requests 200000]
                                           [--warmup 30] [--drain 120] [--namespaces 20]
                                           [--memories 5000] [--subjects 50] [--reseed]
                                           [--worker-concurrency 1] [--writers N]

Goals, reported as figures (not pass/fail of the harness): 0 errors at the saturating rate;
recall p95 at half the saturating rate <= 3x recall's single-client p95.

The stack. The embedded PostgreSQL of the project (memoryhub/embedded_db.py, `var/postgres`),
with a database of its own, `memoryhub_loadtest`, migrated by `manage.py migrate`; then
`gunicorn memoryhub.wsgi -w 2`, `celery -A memoryhub worker` and `celery -A memoryhub beat`
as subprocesses bound to 127.0.0.1, in the production configuration: DEBUG off, secrets
generated once for this database into `var/loadtest/secrets.json` (0600; kept, since the
seeded memories are encrypted under that MEMORYHUB_KEK), ALLOWED_HOSTS 127.0.0.1, the Redis
broker (and so the shared cache and throttle counts) at redis://127.0.0.1:6379/9, flushed at
the start. Only what plain HTTP on loopback needs is changed from production's defaults, by
the documented variables: SECURE_SSL_REDIRECT, SESSION_COOKIE_SECURE and CSRF_COOKIE_SECURE
off (no TLS proxy in front), and the per-key limits MEMORYHUB_API_RATE and
MEMORYHUB_API_WORK_RATE raised so the load measures the server, not the throttle (both said
in the output). Static files are not requested (production serves them from a proxy).
Logs of every process go to `var/loadtest/logs/`; the processes are stopped at the end, also
on failure and on Ctrl-C (bench/loadtest/stack.py starts, watches and stops them).

The data (bench/loadtest/seed.py): 20 namespaces with 5,000 generated memories each over 50
subjects each, loaded as bench/recall_bench.py loads them; kept between runs (`--reseed`
drops the database and loads again). Each run makes new API keys and a new admin password
(`var/loadtest/credentials.json`, 0600), which the locustfile reads.

The load (bench/loadtest/locustfile.py, its docstring has the task mix), in phases, each a
headless locust run bounded by time (`--run-time`) and by requests (`--max-requests`):
  warm-up   2 users for --warmup seconds, not reported, repeated (3 rounds at most) until
            every web worker and the Celery worker has loaded the embedding model;
  single    1 user, no wait: recall's single-client p95;
  ramp      users in --steps, no wait, --step seconds each: the saturating step is the one
            with the fewest users reaching 95% of the highest total rate seen;
  saturate  the saturating step's users again for --duration: its errors (goal 1) and its
            rate, the saturating rate;
  half      the same users paced by `constant_throughput` to half that rate in total, for
            --half seconds: recall p95 against the single client's (goal 2).
With `--writers N` the phases are one instead: N apps (round robin over the namespaces) that
only write memories, for --duration, after the warm-up: writes per second and their p95.
Every phase also samples the audit chain heads' lock waits (bench/loadtest/lockwaits.py).
After each phase the Celery queue is left to drain (up to --drain seconds) so the next phase
starts quiet; the jobs' states are counted. Per phase and endpoint: requests/s, p50/p95/p99
(ms, locust's rounding: 10 ms steps above 100 ms), errors and error rate, and the CPU each
part of the stack used; at the end, the exceptions the server logged, by class (never
their messages). Exit status 0 whatever the goals; non-zero when the harness fails.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import redis
from lockwaits import HeadWaits, HeadWaitSampler  # bench/loadtest/lockwaits.py
from psycopg import sql
from stack import (  # bench/loadtest/stack.py, next to this script
    LOGS,
    OUT,
    ROOT,
    CpuMeter,
    HarnessError,
    Stack,
    free_port,
    logged_exceptions,
    run_step,
    wait_for_health,
)

sys.path.insert(0, str(ROOT))

from bench.machine import cpu, terminate_as_exit
from memoryhub import embedded_db
from memoryhub.secrets_store import new_kek, new_secret_key

BIN = Path(sys.executable).parent
DATABASE = "memoryhub_loadtest"
BROKER = "redis://127.0.0.1:6379/9"
QUEUE = "memoryhub"  # CELERY_TASK_DEFAULT_QUEUE
LOCUSTFILE = Path(__file__).resolve().parent / "locustfile.py"
# Per key; the defaults (1200/min, 20000/hour) would throttle one app's share of the load.
RAISED_LIMITS = {"MEMORYHUB_API_RATE": "1000000/min", "MEMORYHUB_API_WORK_RATE": "100000000/hour"}
# Plain HTTP on loopback: no TLS in front, so no redirect to https and cookies a plain
# http client sends back. Everything else stays as production has it.
LOOPBACK_HTTP = {
    "SECURE_SSL_REDIRECT": "0",
    "SESSION_COOKIE_SECURE": "0",
    "CSRF_COOKIE_SECURE": "0",
}
ENDPOINT_ORDER = [
    "recall",
    "context",
    "memories",
    "messages",
    "page: overview",
    "page: memories",
    "page: audit",
    "page: login form",
    "page: login",
]


def log(message: str = "") -> None:
    print(message, flush=True)


# --- The machine ---------------------------------------------------------------------------


def private_json(path: Path, create: Any) -> dict[str, str]:
    if path.exists():
        return json.loads(path.read_text())
    value = create()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(value, handle)
    return value


def prepare_database(
    server: embedded_db.EmbeddedServer, reseed: bool, sizes: dict[str, int]
) -> dict[str, str]:
    """The load test's database (dropped first on --reseed, or when the seed's sizes
    change) and its secrets."""
    secrets_file = OUT / "secrets.json"
    sizes_file = OUT / "seed-sizes.json"
    with psycopg.connect(**server.connection_kwargs("postgres"), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE]).fetchone()
        if exists and not reseed and not secrets_file.exists():
            log(f"{secrets_file} is gone: the seeded memories cannot be decrypted, reseeding")
            reseed = True
        changed = sizes_file.exists() and json.loads(sizes_file.read_text()) != sizes
        if exists and not reseed and changed:
            log(f"the seed in {DATABASE} has other sizes than asked: reseeding")
            reseed = True
        if exists and reseed:
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(DATABASE)))
            log(f"dropped database {DATABASE}")
            exists = None
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
            log(f"created database {DATABASE}")
    if reseed:
        secrets_file.unlink(missing_ok=True)
    sizes_file.write_text(json.dumps(sizes))
    return private_json(
        secrets_file, lambda: {"SECRET_KEY": new_secret_key(), "MEMORYHUB_KEK": new_kek()}
    )


def database_url(server: embedded_db.EmbeddedServer) -> str:
    host = urllib.parse.quote(str(server.socket_dir), safe="")
    return f"postgres://{server.user}@{host}:{server.port}/{DATABASE}"


def production_env(
    server: embedded_db.EmbeddedServer, secret_values: dict[str, str], port: int
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "CACHE_"))}
    env.update(secret_values)
    env.update(LOOPBACK_HTTP)
    env.update(RAISED_LIMITS)
    env.update(
        {
            "DEBUG": "0",
            "DATABASE_URL": database_url(server),
            "ALLOWED_HOSTS": "127.0.0.1",
            "CSRF_TRUSTED_ORIGINS": f"http://127.0.0.1:{port}",
            "CELERY_BROKER_URL": BROKER,
            "DJANGO_SETTINGS_MODULE": "memoryhub.settings",
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


def job_counts(server: embedded_db.EmbeddedServer) -> dict[str, int]:
    with psycopg.connect(**server.connection_kwargs(DATABASE)) as conn:
        rows = conn.execute("SELECT status, count(*) FROM memories_job GROUP BY status").fetchall()
    return {status: count for status, count in rows}


def postmaster_pid(server: embedded_db.EmbeddedServer) -> int:
    return int((server.pgdata / "postmaster.pid").read_text().split()[0])


# --- Locust phases -------------------------------------------------------------------------


@dataclass
class Row:
    name: str
    requests: int
    failures: int
    rate: float
    p50: float
    p95: float
    p99: float

    @property
    def error_rate(self) -> float:
        return self.failures / self.requests if self.requests else 0.0


@dataclass
class Phase:
    name: str
    users: int
    seconds: int
    throughput: float | None = None  # tasks/s per user; None: no wait
    rows: dict[str, Row] = field(default_factory=dict)
    failures: list[tuple[str, str, int]] = field(default_factory=list)
    cpu: str = ""
    jobs: str = ""
    failed_jobs: int = 0
    mix: str = "all"  # the locustfile's task mix: "all", or "writes" (memory writes only)
    head_waits: HeadWaits | None = None

    @property
    def total(self) -> Row:
        return self.rows["Aggregated"]


def _number(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        return float("nan")  # "N/A" when an endpoint got no request


def read_stats(prefix: Path) -> tuple[dict[str, Row], list[tuple[str, str, int]]]:
    stats = prefix.with_name(prefix.name + "_stats.csv")
    if not stats.exists():
        raise HarnessError(f"locust wrote no {stats}")
    rows = {}
    with open(stats, newline="") as handle:
        for record in csv.DictReader(handle):
            rows[record["Name"]] = Row(
                name=record["Name"],
                requests=int(record["Request Count"]),
                failures=int(record["Failure Count"]),
                rate=_number(record["Requests/s"]),
                p50=_number(record["50%"]),
                p95=_number(record["95%"]),
                p99=_number(record["99%"]),
            )
    if "Aggregated" not in rows:
        raise HarnessError(f"{stats} has no Aggregated row")
    failures = []
    with suppress(OSError), open(prefix.with_name(prefix.name + "_failures.csv")) as handle:
        for record in csv.DictReader(handle):
            failures.append((record["Name"], record["Error"], int(record["Occurrences"])))
    return rows, failures


def run_phase(phase: Phase, base: dict[str, Any]) -> Phase:
    prefix = OUT / "csv" / phase.name
    prefix.parent.mkdir(exist_ok=True)
    for old in prefix.parent.glob(f"{phase.name}_*.csv"):
        old.unlink()
    env = dict(base["env"])
    env.pop("LOADTEST_THROUGHPUT", None)
    env["LOADTEST_MIX"] = phase.mix
    if phase.throughput is not None:
        env["LOADTEST_THROUGHPUT"] = f"{phase.throughput:.6f}"
    command = [
        str(BIN / "locust"), "-f", str(LOCUSTFILE), "--headless", "--only-summary",
        "--host", base["host"], "-u", str(phase.users), "-r", str(phase.users),
        "--run-time", f"{phase.seconds}s", "--stop-timeout", "10", "--csv", str(prefix),
        "--exit-code-on-error", "0", "--loglevel", "WARNING",
    ]  # fmt: skip
    stack: Stack = base["stack"]
    stack.check_alive()
    meter: CpuMeter = base["meter"]
    jobs_before = job_counts(base["server"])
    meter.start()
    sampler = HeadWaitSampler(base["server"].connection_kwargs(DATABASE))
    sampler.start()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        run_step(command, env, f"locust-{phase.name}", timeout=phase.seconds + 120)
    finally:
        phase.head_waits = sampler.stop()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        locust_seconds = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
        phase.cpu = meter.stop(locust_seconds)
    stack.check_alive()
    phase.rows, phase.failures = read_stats(prefix)
    phase.jobs, phase.failed_jobs = drain(base, jobs_before)
    return phase


def drain(base: dict[str, Any], before: dict[str, int]) -> tuple[str, int]:
    """Wait (bounded) for the worker to finish the queued jobs; say how it went, and return
    how many jobs failed since `before` (the counts when the phase began)."""
    started = time.monotonic()
    broker = base["redis"]
    while time.monotonic() - started < base["drain"]:
        counts = job_counts(base["server"])
        if not counts.get("queued") and not counts.get("running") and not broker.llen(QUEUE):
            break
        time.sleep(2)
    counts = job_counts(base["server"])
    waited = time.monotonic() - started
    new = {status: counts.get(status, 0) - before.get(status, 0) for status in counts}
    shown = ", ".join(f"{status} {count}" for status, count in sorted(new.items()) if count)
    pending = counts.get("queued", 0) + counts.get("running", 0)
    tail = (
        f"queue drained {waited:.0f} s after the phase"
        if not pending
        else f"{pending} still pending {waited:.0f} s after the phase"
    )
    return f"ingestion jobs of the phase: {shown or 'none'}; {tail}", new.get("failed", 0)


def warm_up(base: dict[str, Any], seconds: int) -> None:
    """Load until each web worker and the Celery worker has loaded the embedding model (the
    first request of a process loads it and exports it to ONNX: seconds of CPU)."""
    for attempt in range(1, 4):
        run_phase(Phase("warmup", 2, seconds), base)
        web = (LOGS / "gunicorn.log").read_text(errors="replace")
        booted = web.count("Booting worker")
        loaded = web.count("Loaded embedding model")
        worker = (LOGS / "celery-worker.log").read_text(errors="replace")
        ready = loaded >= booted and "Loaded embedding model" in worker
        log(
            f"warm-up {attempt}: 2 users for {seconds} s (not reported); embedding model loaded "
            f"by {loaded} of {booted} web workers started so far"
            + (", and by the Celery worker" if "Loaded embedding model" in worker else "")
        )
        if ready:
            return
    log("  the stack did not warm up fully: the first phase includes model loading")


def print_phase(phase: Phase) -> None:
    pace = (
        "no wait"
        if phase.throughput is None
        else f"each paced to {phase.throughput:.2f} req/s "
        f"({phase.throughput * phase.users:.1f} in all)"
    )
    log(f"\n[{phase.name}] {phase.users} user(s), {pace}, {phase.seconds} s")
    log(
        f"  {'endpoint':<17}{'requests':>9}{'req/s':>8}{'p50 ms':>8}{'p95 ms':>8}"
        f"{'p99 ms':>8}{'errors':>8}{'error %':>9}"
    )
    names = [n for n in ENDPOINT_ORDER if n in phase.rows]
    names += sorted(n for n in phase.rows if n not in ENDPOINT_ORDER and n != "Aggregated")
    for name in [*names, "Aggregated"]:
        row = phase.rows[name]
        label = "all" if name == "Aggregated" else name
        log(
            f"  {label:<17}{row.requests:>9}{row.rate:>8.1f}{row.p50:>8.0f}{row.p95:>8.0f}"
            f"{row.p99:>8.0f}{row.failures:>8}{row.error_rate:>9.2%}"
        )
    for name, error, count in phase.failures[:8]:
        log(f"  failure: {name}: {error} x{count}")
    log(f"  {phase.cpu}")
    log(f"  {phase.jobs}")
    if phase.head_waits is not None:
        log(f"  {phase.head_waits}")


def saturating(ramp: list[Phase]) -> Phase:
    best = max(phase.total.rate for phase in ramp)
    return next(phase for phase in ramp if phase.total.rate >= 0.95 * best)


# --- Main ----------------------------------------------------------------------------------


def prepare(args: argparse.Namespace) -> tuple[embedded_db.EmbeddedServer, dict[str, str], int]:
    """The embedded PostgreSQL, its load-test database and the production environment (said
    in the output): (server, environment, the web server's port)."""
    OUT.mkdir(mode=0o700, parents=True, exist_ok=True)
    LOGS.mkdir(exist_ok=True)
    os.chmod(OUT, 0o700)

    server = embedded_db.ensure_server(ROOT / "var")
    sizes = {"namespaces": args.namespaces, "memories": args.memories, "subjects": args.subjects}
    secret_values = prepare_database(server, args.reseed, sizes)
    port = free_port()
    env = production_env(server, secret_values, port)
    log(
        f"database {DATABASE} on the embedded PostgreSQL ({server.pgdata}); broker and cache "
        f"{BROKER}; DEBUG=0, generated SECRET_KEY and MEMORYHUB_KEK (var/loadtest/secrets.json)"
    )
    log(
        "changed from production defaults for plain http on loopback: "
        + ", ".join(f"{k}={v}" for k, v in LOOPBACK_HTTP.items())
    )
    log(
        "per-key limits raised for the load test: "
        + ", ".join(f"{k}={v}" for k, v in RAISED_LIMITS.items())
    )
    return server, env, port


def migrate_and_seed(args: argparse.Namespace, env: dict[str, str]) -> None:
    step = time.monotonic()
    run_step([str(BIN / "python"), "manage.py", "migrate", "--noinput"], env, "migrate", 1800)
    log(f"migrated in {time.monotonic() - step:.0f} s")
    step = time.monotonic()
    seed = [
        str(BIN / "python"), str(Path(__file__).resolve().parent / "seed.py"), "--out", str(OUT),
        "--namespaces", str(args.namespaces), "--memories", str(args.memories),
        "--subjects", str(args.subjects),
    ]  # fmt: skip
    log("seeding (bench/loadtest/seed.py):")
    done = subprocess.run(seed, cwd=ROOT, env=env, check=False)  # noqa: S603
    if done.returncode != 0:
        raise HarnessError(f"seeding failed ({done.returncode})")
    log(f"seed ready in {time.monotonic() - step:.0f} s")


def start_stack(
    stack: Stack,
    args: argparse.Namespace,
    env: dict[str, str],
    port: int,
    server: embedded_db.EmbeddedServer,
    broker: redis.Redis,
) -> dict[str, Any]:
    """gunicorn, the Celery worker and beat started and healthy; returns what each phase needs."""
    gunicorn = [
        str(BIN / "gunicorn"), "memoryhub.wsgi:application", "--workers", "2",
        "--bind", f"127.0.0.1:{port}",
    ]  # fmt: skip
    stack.start("gunicorn", gunicorn, env)
    worker = [
        str(BIN / "celery"), "-A", "memoryhub", "worker", "--loglevel", "INFO",
        "--concurrency", str(args.worker_concurrency), "-n", "loadtest@%h",
    ]  # fmt: skip
    stack.start("celery-worker", worker, env)
    beat = [
        str(BIN / "celery"), "-A", "memoryhub", "beat", "--loglevel", "INFO",
        "--schedule", str(OUT / "celerybeat-schedule"),
    ]  # fmt: skip
    stack.start("celery-beat", beat, env)
    host = f"http://127.0.0.1:{port}"
    health = wait_for_health(f"{host}/readyz", stack)
    log(
        f"gunicorn (2 workers) at {host}, Celery worker (concurrency "
        f"{args.worker_concurrency}) and beat up; /readyz: {json.dumps(health)}"
    )
    meter = CpuMeter(
        {
            "web": stack.processes["gunicorn"].pid,
            "postgres": postmaster_pid(server),
            "worker": stack.processes["celery-worker"].pid,
            "beat": stack.processes["celery-beat"].pid,
        }
    )
    locust_env = {
        **os.environ,
        "LOADTEST_CREDENTIALS": str(OUT / "credentials.json"),
        "LOADTEST_WORKLOAD": str(OUT / "workload.json"),
        "LOADTEST_MAX_REQUESTS": str(args.max_requests),
    }
    return {
        "env": locust_env, "host": host, "stack": stack, "meter": meter,
        "server": server, "redis": broker, "drain": args.drain,
    }  # fmt: skip


def run_phases(
    args: argparse.Namespace, base: dict[str, Any]
) -> tuple[Phase, list[Phase], Phase, Phase, float]:
    """Warm-up, then the phases: (single, ramp steps, saturate, half, half's asked rate)."""
    warm_up(base, args.warmup)

    single = run_phase(Phase("single", 1, args.single), base)
    print_phase(single)
    ramp = []
    for users in args.steps:
        phase = run_phase(Phase(f"ramp-{users}", users, args.step), base)
        print_phase(phase)
        ramp.append(phase)
    knee = saturating(ramp)
    log(
        f"\nsaturating step: {knee.users} users ({knee.total.rate:.1f} req/s; the highest step "
        f"rate was {max(p.total.rate for p in ramp):.1f} req/s)"
    )
    saturated = run_phase(Phase("saturate", knee.users, args.duration), base)
    print_phase(saturated)
    target = saturated.total.rate / 2
    if not target:
        raise HarnessError("no request succeeded at the saturating step")
    half = run_phase(Phase("half", knee.users, args.half, throughput=target / knee.users), base)
    print_phase(half)
    return single, ramp, saturated, half, target


def print_goals(
    single: Phase, ramp: list[Phase], saturated: Phase, half: Phase, target: float
) -> None:
    log("\nGoals (figures, not pass/fail):")
    sat = saturated.total
    log(
        f"  0 errors at the saturating rate ({saturated.users} users, {sat.rate:.1f} req/s): "
        f"{sat.failures} failed requests of {sat.requests} ({sat.error_rate:.2%}) and "
        f"{saturated.failed_jobs} failed ingestion jobs -- "
        + ("met" if sat.failures == 0 and saturated.failed_jobs == 0 else "NOT met")
    )
    others = [p for p in [single, *ramp, half] if p.total.failures or p.failed_jobs]
    if others:
        log(
            "  (errors in the other phases: "
            + "; ".join(
                f"{p.name} {p.total.failures} requests, {p.failed_jobs} jobs" for p in others
            )
            + ")"
        )
    single_p95 = single.rows["recall"].p95 if "recall" in single.rows else float("nan")
    half_p95 = half.rows["recall"].p95 if "recall" in half.rows else float("nan")
    ratio = half_p95 / single_p95 if single_p95 else float("nan")
    log(
        f"  recall p95 at half the saturating rate ({half.total.rate:.1f} req/s achieved of "
        f"{target:.1f} asked) / single-client recall p95: {half_p95:.0f} ms / {single_p95:.0f} ms "
        f"= {ratio:.2f} (goal <= 3) -- " + ("met" if ratio <= 3 else "NOT met")
    )


def run_writers(args: argparse.Namespace, base: dict[str, Any]) -> Phase:
    """`--writers N`: warm-up, then N apps writing memories only (round robin over the
    namespaces) for --duration: writes per second, their p95, and the chain-head lock waits."""
    warm_up(base, args.warmup)
    phase = run_phase(Phase("writes", args.writers, args.duration, mix="writes"), base)
    print_phase(phase)
    return phase


def run(args: argparse.Namespace) -> None:
    started = time.monotonic()
    log("MemoryHub load test (bench/loadtest): production stack on 127.0.0.1, driven by locust")
    log(f"CPU: {cpu()}")
    server, env, port = prepare(args)
    migrate_and_seed(args, env)

    broker = redis.Redis.from_url(BROKER)
    broker.flushdb()  # the load test's own db: no tasks or throttle counts left from a past run
    stack = Stack()
    try:
        base = start_stack(stack, args, env, port, server, broker)
        if args.writers:
            run_writers(args, base)
        else:
            single, ramp, saturated, half, target = run_phases(args, base)
    finally:
        stack.stop()
        log("stopped gunicorn, the Celery worker and beat")

    if not args.writers:
        print_goals(single, ramp, saturated, half, target)
    exceptions = logged_exceptions()
    log(
        "\nexceptions in the server's logs (class, count): "
        + (", ".join(f"{name} x{count}" for name, count in exceptions.most_common()) or "none")
    )
    log(f"\nwhole run {time.monotonic() - started:.0f} s; CSVs in {OUT / 'csv'}, logs in {LOGS}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--single", type=int, default=60, help="seconds of the single client")
    parser.add_argument(
        "--steps",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[2, 4, 8, 16],
        help="users of the ramp's steps (comma-separated)",
    )
    parser.add_argument("--step", type=int, default=40, help="seconds of each ramp step")
    parser.add_argument("--duration", type=int, default=60, help="seconds at the saturating step")
    parser.add_argument("--half", type=int, default=90, help="seconds at half the saturating rate")
    parser.add_argument(
        "--max-requests", type=int, default=200_000, help="a phase stops after this many requests"
    )
    parser.add_argument("--warmup", type=int, default=30, help="seconds of each warm-up round")
    parser.add_argument("--drain", type=int, default=120, help="seconds to wait for the queue")
    parser.add_argument("--namespaces", type=int, default=20)
    parser.add_argument(
        "--writers",
        type=int,
        default=0,
        help="only this many apps writing memories for --duration (0: the whole mix, phased)",
    )
    parser.add_argument("--memories", type=int, default=5000, help="per namespace")
    parser.add_argument("--subjects", type=int, default=50, help="per namespace")
    parser.add_argument("--worker-concurrency", type=int, default=1, choices=(1, 2))
    parser.add_argument("--reseed", action="store_true", help="drop the database, load again")
    args = parser.parse_args()
    if min(args.single, args.step, args.duration, args.half, min(args.steps)) < 1:
        parser.error("durations and users must be positive")
    try:
        with terminate_as_exit():
            run(args)
    except HarnessError as error:
        log(f"\nload test harness failed: {error}")
        sys.exit(2)


if __name__ == "__main__":
    main()
