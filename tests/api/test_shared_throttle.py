"""The API key throttle on a shared Redis cache (CACHE_URL=redis://…): the count of a key is
kept in Redis, so separate clients of one key, and separate web processes, share it.

Each test's cache has a key prefix of its own, so it starts empty without flushing the test
Redis database, which the Celery tests share; its keys are deleted afterwards."""

from __future__ import annotations

import json
import pickle
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import redis
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from rest_framework.test import APIClient

from apps.accounts.selectors import api_key_prefix_of
from tests.conftest import Tenant, api_client, run_python

pytestmark = [pytest.mark.redis, pytest.mark.django_db]


@dataclass
class SharedCache:
    url: str
    prefix: str
    raw: redis.Redis  # a client of its own, as another process would have

    def throttle_key(self, tenant: Tenant) -> str:
        """The Redis key of the tenant's API key count (Django's `prefix:version:key`)."""
        return f"{self.prefix}:1:throttle:api_key:{api_key_prefix_of(tenant.raw_key)}"


@pytest.fixture
def shared_cache(settings, redis_url: str) -> Iterator[SharedCache]:
    prefix = f"test-throttle-{uuid.uuid4().hex[:12]}"
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": redis_url,
            "KEY_PREFIX": prefix,
        }
    }
    settings.MEMORYHUB_API_RATE = "3/min"
    assert isinstance(caches["default"], RedisCache)
    raw = redis.Redis.from_url(redis_url)
    yield SharedCache(url=redis_url, prefix=prefix, raw=raw)
    for key in raw.scan_iter(match=f"{prefix}:*"):
        raw.delete(key)
    raw.close()


def status(client: APIClient, tenant: Tenant) -> int:
    return client.get(tenant.url("memories")).status_code


def test_two_clients_of_one_key_share_one_count(acme: Tenant, shared_cache: SharedCache) -> None:
    first, second = api_client(acme.raw_key), api_client(acme.raw_key)
    assert [status(first, acme), status(second, acme), status(first, acme)] == [200, 200, 200]
    assert status(second, acme) == 429
    assert status(first, acme) == 429


def test_the_count_is_kept_in_redis(acme: Tenant, shared_cache: SharedCache) -> None:
    for _ in range(2):
        assert status(acme.client, acme) == 200
    stored = shared_cache.raw.get(shared_cache.throttle_key(acme))
    assert stored is not None, "no throttle count in Redis"
    assert len(pickle.loads(stored)) == 2  # noqa: S301 (our own test value)
    assert 0 < shared_cache.raw.ttl(shared_cache.throttle_key(acme)) <= 60


def test_clearing_the_count_in_redis_lifts_the_throttle_here(
    acme: Tenant, shared_cache: SharedCache
) -> None:
    for _ in range(3):
        status(acme.client, acme)
    assert status(acme.client, acme) == 429
    shared_cache.raw.delete(shared_cache.throttle_key(acme))  # nothing is counted in-process
    assert status(acme.client, acme) == 200


def in_another_process(shared_cache: SharedCache, statement: str) -> str:
    """Run `statement` in a fresh interpreter with `cache`, a Django Redis cache of its own
    on the same Redis and prefix (another web process, as far as the count goes)."""
    result = run_python(
        "import json, time\n"
        "from django.core.cache.backends.redis import RedisCache\n"
        f"cache = RedisCache({shared_cache.url!r}, {{'KEY_PREFIX': {shared_cache.prefix!r}}})\n"
        f"{statement}\n"
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_another_process_sees_the_same_count(acme: Tenant, shared_cache: SharedCache) -> None:
    for _ in range(3):
        assert status(acme.client, acme) == 200
    key = f"throttle:api_key:{api_key_prefix_of(acme.raw_key)}"
    seen = in_another_process(shared_cache, f"print(json.dumps(len(cache.get({key!r}) or [])))")
    assert json.loads(seen) == 3


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_a_count_made_by_another_process_throttles_this_one(
    acme: Tenant, shared_cache: SharedCache
) -> None:
    key = f"throttle:api_key:{api_key_prefix_of(acme.raw_key)}"
    # Three requests just now, as the other process's throttle records them.
    in_another_process(shared_cache, f"cache.set({key!r}, [time.time()] * 3, 60)")
    assert status(acme.client, acme) == 429
