"""The first request a fresh server answers against its tenth: a cross-language search and
a Chinese playground run, each in a server of its own, with and without the warm-up.

    .venv/bin/python bench/first_request_bench.py [--runs 10] [--only search|playground]
        [--no-prepare]

Prepares the development database as `make run` does (`migrate`, `ensure_admin`, `demo load
--if-enabled`; nothing once done) and adds a temporary superuser. Then, for each request
kind and each start (`manage.py runserver` as `make run` starts it, and the same with
`--no-warm-up`), starts a fresh server on a free loopback port, waits until it accepts
connections, logs in, and sends the request `--runs` times without opening its page first
(as the login's redirect could lead straight to a search), timing each:

- search: the memory explorer's search, posted as htmx posts it, an English question about
  the memories of the demo's Chinese-speaking subject (demo-user-3): both embedding models
  read it (the primary one for the English memories, the multilingual one for the Chinese);
- playground: the playground's assembly, posted as htmx posts it, in the Chinese interface,
  a Chinese question for that subject, the default model's tokenizer counting the prompt.

Printed: the CPU, the load average, each start's first and tenth (the last) request, their
ratio (the goal: the first within 2x the tenth once warmed up), the first against the median
of the later ones, and the time until the server accepted connections. Each server is
stopped and the superuser deleted at the end, also on failure.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django  # noqa: E402
import httpx  # noqa: E402

from bench.first_assemble import free_port, log_in, manage, wait_until_ready  # noqa: E402
from bench.machine import cpu, terminate_as_exit  # noqa: E402

GOAL_RATIO = 2.0
USERNAME = "bench-first-request"
SUBJECT = "demo-user-3"  # writes in Chinese (apps/demo/data/demo.json)
SEARCH_QUESTION = "Where does the user work now?"
PLAYGROUND_QUESTION = "我最近工作很忙，晚饭做什么快一点？"  # noqa: RUF001 (Chinese punctuation)
CHINESE = {"Accept-Language": "zh-hans"}


@dataclass
class Start:
    kind: str
    warm_up: bool
    ready: float
    times: list[float]

    @property
    def ratio(self) -> float:
        return self.times[0] / self.times[-1]

    @property
    def later_median(self) -> float:
        """The median of every request after the first (steadier than the tenth alone)."""
        return statistics.median(self.times[1:])


def timed(client: httpx.Client, path: str, form: dict[str, str], expected: str) -> float:
    # As htmx posts (base.html sends the CSRF token in a header), with no page opened first.
    headers = {"HX-Request": "true", "X-CSRFToken": client.cookies["csrftoken"]}
    started = time.perf_counter()
    answer = client.post(path, data=form, headers=headers)
    seconds = time.perf_counter() - started
    if answer.status_code != 200 or expected not in answer.text:
        raise SystemExit(f"{path} failed ({answer.status_code}): {answer.text[:500]}")
    return seconds


def search(client: httpx.Client, runs: int) -> list[float]:
    path = f"/n/demo/memories/?subject={SUBJECT}"
    form = {"q": SEARCH_QUESTION, "subject": SUBJECT}
    return [timed(client, path, form, 'class="bars"') for _ in range(runs)]


def playground(client: httpx.Client, runs: int) -> list[float]:
    from django.conf import settings

    client.headers.update(CHINESE)
    form = {
        "namespace": "demo",
        "subject": SUBJECT,
        "session": f"{SUBJECT}-s3",
        "query": PLAYGROUND_QUESTION,
        "model": settings.MEMORYHUB_DEFAULT_MODEL,
        "reserve_tokens": "1024",
        "strategy": "summary_buffer",
        "recall_k": "20",
        "window": "10",
        "buffer_tokens": "2000",
        "placement": "edges",
        "assemble": "",
    }
    return [timed(client, "/playground/", form, "组装的提示词") for _ in range(runs)]


KINDS: dict[str, Callable[[httpx.Client, int], list[float]]] = {
    "search": search,
    "playground": playground,
}


def one_start(kind: str, *, warm_up: bool, runs: int, password: str) -> Start:
    """A fresh runserver (its own process), `runs` requests of `kind`, the server stopped."""
    port = free_port()
    command = [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}"]
    if not warm_up:
        command.append("--no-warm-up")
    started = time.perf_counter()
    server = subprocess.Popen(  # noqa: S603
        command, cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL
    )
    try:
        wait_until_ready(server, port, timeout=300)
        ready = time.perf_counter() - started
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=300) as client:
            log_in(client, password, USERNAME)
            times = KINDS[kind](client, runs)
    finally:
        os.killpg(server.pid, signal.SIGINT)
        server.wait(timeout=30)
    return Start(kind, warm_up, ready, times)


def report(starts: list[Start]) -> None:
    print(f"CPU: {cpu()}")
    print("load average (1, 5, 15 min): " + ", ".join(f"{n:.2f}" for n in os.getloadavg()))
    for start in starts:
        how = "warmed up at start" if start.warm_up else "--no-warm-up"
        verdict = ""
        if start.warm_up:
            meets = "meets" if start.ratio <= GOAL_RATIO else "misses"
            verdict = f" ({meets} the goal of <= {GOAL_RATIO:.0f}x)"
        print(
            f"{start.kind}, {how}: first {start.times[0] * 1000:.0f} ms, "
            f"request {len(start.times)} {start.times[-1] * 1000:.0f} ms: "
            f"{start.ratio:.1f}x{verdict}; {start.times[0] / start.later_median:.1f}x the "
            f"median of the later ones; ready after {start.ready:.1f} s"
        )
        print("  every request (ms): " + ", ".join(f"{t * 1000:.0f}" for t in start.times))


def run(*, kinds: list[str], runs: int, prepare: bool) -> None:
    if prepare:
        manage("migrate", "--noinput", "-v", "0")
        manage("ensure_admin")
        manage("demo", "load", "--if-enabled")
    django.setup()
    from django.contrib.auth.models import User

    password = secrets.token_urlsafe(16)
    User.objects.filter(username=USERNAME).delete()
    User.objects.create_superuser(USERNAME, "", password)
    starts: list[Start] = []
    try:
        for kind in kinds:
            for warm_up in (False, True):
                starts.append(one_start(kind, warm_up=warm_up, runs=runs, password=password))
    finally:
        User.objects.filter(username=USERNAME).delete()
    report(starts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--only", choices=sorted(KINDS))
    parser.add_argument("--no-prepare", action="store_false", dest="prepare")
    options = parser.parse_args()
    with terminate_as_exit():
        run(
            kinds=[options.only] if options.only else list(KINDS),
            runs=max(options.runs, 2),
            prepare=options.prepare,
        )


if __name__ == "__main__":
    main()
