"""The simulated apps of `make loadtest`: one locust user class, run by bench/loadtest/run.py.

Each user is one of the 20 apps (round robin over the namespaces of credentials.json, so
users 1-20 are 20 different apps): it holds that namespace's API key, and logs in to the
dashboard as the load test's admin (the login form, with its CSRF token). The
task mix, by weight (one request per task, so `constant_throughput` paces requests):

| weight | request | locust name |
|---|---|---|
| 35 | `POST /api/v1/namespaces/<ns>/recall` (a paraphrase of a subject's memory, k=10) | `recall` |
| 15 | `POST .../context` (same kind of query, model gpt-4o-mini, budget 4,000 tokens) | `context` |
| 20 | `POST .../memories` (a new fact about a subject) | `memories` |
| 10 | `POST .../messages` (4 turns, user and assistant; extraction: the namespace's) | `messages` |
| 8 | `GET /n/<ns>/` (the namespace's overview) | `page: overview` |
| 8 | `GET /n/<ns>/memories/` (the memories explorer, first page) | `page: memories` |
| 4 | `GET /audit/?namespace=<ns>` (the audit log, filtered to the namespace) | `page: audit` |

The login itself (once per locust process, its session cookie shared by the users) is
reported as `page: login form` and `page: login`. A response other than
the expected status is a failure (throttling, 429, included). Environment (set by run.py):
LOADTEST_CREDENTIALS and LOADTEST_WORKLOAD (the seed's files), LOADTEST_MIX ("writes": the
memory writes alone, every other weight 0), LOADTEST_THROUGHPUT (tasks
per second per user; unset: no wait between tasks) and LOADTEST_MAX_REQUESTS (the run stops
after that many requests, a bound next to --run-time). Nothing here logs a key, a query or
a memory.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import uuid
from pathlib import Path
from typing import Any

import gevent  # type: ignore[import-untyped]  # no stubs installed
import gevent.lock  # type: ignore[import-untyped]
from locust import HttpUser, constant, constant_throughput, events, task

CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
ASSISTANT_TURNS = [
    "Thanks, I'll keep that in mind.",
    "Noted. Anything else I can help with?",
    "Here are a few suggestions you might like.",
    "Good to know, I'll remember it for next time.",
]


def _load(variable: str) -> Any:
    return json.loads(Path(os.environ[variable]).read_text())


CREDENTIALS = _load("LOADTEST_CREDENTIALS")
WORKLOAD = {app["namespace"]: app for app in _load("LOADTEST_WORKLOAD")["apps"]}
KEYS = [(entry["namespace"], entry["key"]) for entry in CREDENTIALS["keys"]]
_next_app = itertools.count()
_throughput = os.environ.get("LOADTEST_THROUGHPUT")
_max_requests = int(os.environ.get("LOADTEST_MAX_REQUESTS") or 0)
_writes_only = os.environ.get("LOADTEST_MIX") == "writes"
_requests_seen = itertools.count(1)
_login_lock = gevent.lock.Semaphore()
_dashboard_cookies: dict[str, str] | None = None


_environment: Any = None


@events.init.add_listener
def _keep_environment(environment: Any, **kwargs: Any) -> None:
    global _environment
    _environment = environment


@events.request.add_listener
def _stop_after_max_requests(**kwargs: Any) -> None:
    # The bound on requests: stop the run (from its own greenlet, not this request's).
    if _max_requests and next(_requests_seen) == _max_requests and _environment is not None:
        gevent.spawn(_environment.runner.quit)


class App(HttpUser):
    """One simulated app: its namespace's key, and the dashboard as the admin."""

    wait_time = constant_throughput(float(_throughput)) if _throughput else constant(0)

    def on_start(self) -> None:
        self.namespace, key = KEYS[next(_next_app) % len(KEYS)]
        self.api_headers = {"Authorization": f"Bearer {key}"}
        self.workload = WORKLOAD[self.namespace]
        self.rng = random.Random()
        # One login per locust process, its session shared by every user: a login costs a
        # password hash (about a second of CPU), which 16 users at once would spend together.
        global _dashboard_cookies
        with _login_lock:
            if _dashboard_cookies is None and self._login():
                _dashboard_cookies = {
                    name: value or "" for name, value in self.client.cookies.get_dict().items()
                }
        if _dashboard_cookies:
            self.client.cookies.update(_dashboard_cookies)

    def _login(self) -> bool:
        with self.client.get(
            "/accounts/login/", name="page: login form", catch_response=True
        ) as response:
            found = CSRF_INPUT.search(response.text or "")
            if response.status_code != 200 or not found:
                response.failure(f"login form: {response.status_code}")
                return False
            response.success()
        admin = CREDENTIALS["admin"]
        with self.client.post(
            "/accounts/login/",
            data={
                "username": admin["username"],
                "password": admin["password"],
                "csrfmiddlewaretoken": found.group(1),
            },
            allow_redirects=False,
            name="page: login",
            catch_response=True,
        ) as response:
            if response.status_code != 302:
                response.failure(f"login: {response.status_code}")
                return False
            response.success()
            return True

    def _api(
        self, path: str, body: dict[str, Any], name: str, expected: int, **headers: str
    ) -> None:
        with self.client.post(
            f"/api/v1/namespaces/{self.namespace}/{path}",
            json=body,
            headers={**self.api_headers, **headers},
            name=name,
            catch_response=True,
        ) as response:
            if response.status_code != expected:
                response.failure(f"{response.status_code}")
            else:
                response.success()

    def _page(self, path: str, name: str) -> None:
        with self.client.get(
            path, name=name, allow_redirects=False, catch_response=True
        ) as response:
            if response.status_code != 200:
                response.failure(f"{response.status_code}")
            else:
                response.success()

    @task(0 if _writes_only else 35)
    def recall(self) -> None:
        subject, query = self.rng.choice(self.workload["queries"])
        self._api("recall", {"subject": subject, "query": query, "k": 10}, "recall", 200)

    @task(0 if _writes_only else 15)
    def assemble_context(self) -> None:
        subject, query = self.rng.choice(self.workload["queries"])
        body = {
            "subject": subject,
            "query": query,
            "model": "gpt-4o-mini",
            "max_context_tokens": 4000,
            "reserve_tokens": 512,
        }
        self._api("context", body, "context", 200)

    @task(20)
    def write_memory(self) -> None:
        subject, content, kind = self.rng.choice(self.workload["writes"])
        body = {"subject": subject, "content": content, "kind": kind, "tags": ["loadtest"]}
        self._api("memories", body, "memories", 201)

    @task(0 if _writes_only else 10)
    def messages(self) -> None:
        turns = []
        for _ in range(2):
            turns.append({"role": "user", "content": self.rng.choice(self.workload["turns"])})
            turns.append({"role": "assistant", "content": self.rng.choice(ASSISTANT_TURNS)})
        body = {
            "subject": self.rng.choice(self.workload["subjects"]),
            "session": f"loadtest-{uuid.uuid4().hex[:12]}",
            "messages": turns,
        }
        # Queued for the Celery worker: 202 (201 would mean it ran in the web process).
        self._api("messages", body, "messages", 202, **{"Idempotency-Key": uuid.uuid4().hex})

    @task(0 if _writes_only else 8)
    def overview_page(self) -> None:
        self._page(f"/n/{self.namespace}/", "page: overview")

    @task(0 if _writes_only else 8)
    def memories_page(self) -> None:
        self._page(f"/n/{self.namespace}/memories/", "page: memories")

    @task(0 if _writes_only else 4)
    def audit_page(self) -> None:
        self._page(f"/audit/?namespace={self.namespace}", "page: audit")
