import json

import pytest
from django.core.exceptions import ImproperlyConfigured

from memoryhub.env import env_bool, env_choice, env_float, env_int, env_list, env_url
from memoryhub.secrets_store import new_kek, parse_keyring
from tests.conftest import run_python


def test_it_reads_booleans() -> None:
    assert env_bool("X", False, environ={"X": "yes"}) is True
    assert env_bool("X", True, environ={"X": "0"}) is False
    assert env_bool("X", True, environ={}) is True


@pytest.mark.parametrize("value", ["maybe", "2", "tru"])
def test_it_rejects_non_booleans_naming_the_variable(value: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=rf"DEBUG={value!r} is not a boolean"):
        env_bool("DEBUG", False, environ={"DEBUG": value})


def test_it_rejects_non_integers_and_out_of_range() -> None:
    with pytest.raises(ImproperlyConfigured, match="PORT='eighty' is not an integer"):
        env_int("PORT", 1, environ={"PORT": "eighty"})
    with pytest.raises(ImproperlyConfigured, match="below the minimum of 0"):
        env_int("N", 1, minimum=0, environ={"N": "-3"})
    with pytest.raises(ImproperlyConfigured, match="above the maximum of 10"):
        env_int("N", 1, maximum=10, environ={"N": "11"})
    assert env_int("N", 1, environ={"N": " 7 "}) == 7


def test_it_rejects_non_finite_floats() -> None:
    with pytest.raises(ImproperlyConfigured, match="not a finite number"):
        env_float("F", 1.0, environ={"F": "nan"})
    with pytest.raises(ImproperlyConfigured, match="not a number"):
        env_float("F", 1.0, environ={"F": "x"})


def test_it_splits_lists_and_checks_choices() -> None:
    assert env_list("H", environ={"H": "a.example, ,b.example"}) == ["a.example", "b.example"]
    with pytest.raises(ImproperlyConfigured, match="LOG_LEVEL='LOUD' is not one of"):
        env_choice("LOG_LEVEL", "INFO", ("INFO", "DEBUG"), environ={"LOG_LEVEL": "LOUD"})


def test_it_rejects_urls_of_the_wrong_scheme_without_echoing_them() -> None:
    with pytest.raises(ImproperlyConfigured) as caught:
        env_url(
            "DATABASE_URL",
            schemes=("postgres",),
            environ={"DATABASE_URL": "mysql://u:hunter2@h/db"},
        )
    assert "must start with one of postgres://" in str(caught.value)
    assert "hunter2" not in str(caught.value)


def test_it_parses_a_keyring_and_rejects_bad_entries() -> None:
    first, second = new_kek(), new_kek().replace("1:", "2:", 1)
    ring = parse_keyring(f"{first},{second}")
    assert sorted(ring) == [1, 2]
    assert all(len(key) == 32 for key in ring.values())
    for bad, message in [
        ("", "no key given"),
        ("abc", "must look like"),
        ("1:not base64!", "not valid base64"),
        ("1:AAAA", "must decode to 32 bytes"),
        (f"{first},{first}", "appears twice"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_keyring(bad)


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_settings_refuse_to_start_without_secrets_when_debug_is_off() -> None:
    result = run_python("import django; django.setup()", env={"DEBUG": "0"})
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_settings_refuse_a_malformed_debug_flag() -> None:
    result = run_python("import django; django.setup()", env={"DEBUG": "sometimes"})
    assert result.returncode != 0
    assert "DEBUG='sometimes' is not a boolean" in result.stderr


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_settings_refuse_a_metrics_token_too_short_to_be_secret() -> None:
    result = run_python("import django; django.setup()", env={"MEMORYHUB_METRICS_TOKEN": "short"})
    assert result.returncode != 0
    assert "MEMORYHUB_METRICS_TOKEN: at least 16 characters." in result.stderr


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_settings_refuse_a_malformed_kek() -> None:
    result = run_python(
        "import django; django.setup()",
        env={"DEBUG": "0", "SECRET_KEY": "x" * 60, "MEMORYHUB_KEK": "1:AAAA"},
    )
    assert result.returncode != 0
    assert "MEMORYHUB_KEK: entry 1 (version 1) must decode to 32 bytes" in result.stderr


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_quickstart_generates_secrets_once_with_private_permissions(project_scratch_dir) -> None:
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "print(settings.SECRET_KEY); print(settings.MEMORYHUB_KEK)"
    )
    env = {"DEBUG": "1", "MEMORYHUB_DATA_DIR": str(project_scratch_dir)}
    first = run_python(code, env=env)
    second = run_python(code, env=env)
    assert first.returncode == 0, first.stderr
    assert "generated a new secret" in first.stderr
    assert "generated a new secret" not in second.stderr
    assert first.stdout == second.stdout
    for name in ("secret_key", "kek"):
        assert (project_scratch_dir / name).stat().st_mode & 0o777 == 0o600


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_check_deploy_passes_with_production_settings() -> None:
    env = {
        "DEBUG": "0",
        "SECRET_KEY": "k3y-" + "a1B2c3D4e5" * 6,
        "MEMORYHUB_KEK": new_kek(),
        "ALLOWED_HOSTS": "memory.example.com",
        "DATABASE_URL": "postgres://memoryhub:pw@db.example.com:5432/memoryhub",
    }
    result = run_python(
        "import sys; from memoryhub.cli import main; "
        "main(['manage.py', 'check', '--deploy', '--fail-level', 'WARNING'])",
        env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


@pytest.mark.processes  # starts processes of its own: `make test-all`
@pytest.mark.parametrize(("configured", "expected"), [(None, 0.0002), ("0.001", 0.001)])
def test_settings_set_the_interpreters_thread_switch_interval(
    configured: str | None, expected: float
) -> None:
    env = {"MEMORYHUB_GIL_SWITCH_INTERVAL": configured} if configured else {}
    result = run_python(
        "import sys, django; django.setup(); print(sys.getswitchinterval())", env=env
    )
    assert result.returncode == 0, result.stderr
    assert float(result.stdout.split()[-1]) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("query", "operators"),
    [("", ""), ("?options=-c%20hnsw.ef_search%3D200", " -c hnsw.ef_search=200")],
)
@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_connections_carry_the_hnsw_search_options_and_the_operators_win(
    query: str, operators: str
) -> None:
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "print(settings.DATABASES['default']['OPTIONS']['options'])"
    )
    result = run_python(code, env={"DEBUG": "1", "DATABASE_URL": f"postgres://u@db/x{query}"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "-c hnsw.iterative_scan=relaxed_order -c hnsw.ef_search=100"
        " -c hnsw.scan_mem_multiplier=8" + operators
    )


REPLICA_OF = (
    "import json, django; django.setup(); from django.conf import settings; "
    "replica = settings.DATABASES.get('replica'); print(json.dumps(replica and ["
    "replica['HOST'], replica['TEST']['MIRROR'], replica['OPTIONS']])); "
    "print(json.dumps(settings.DATABASE_ROUTERS))"
)


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_a_replica_url_adds_the_replica_and_its_router() -> None:
    primary = {"DEBUG": "1", "DATABASE_URL": "postgres://u@db/x"}
    alone = run_python(REPLICA_OF, env=primary)
    paired = run_python(
        REPLICA_OF, env={**primary, "DATABASE_REPLICA_URL": "postgres://u@db-replica/x"}
    )
    assert alone.returncode == 0, alone.stderr
    assert alone.stdout.split("\n")[:2] == ["null", "[]"]
    assert paired.returncode == 0, paired.stderr
    replica, routers = (json.loads(line) for line in paired.stdout.split("\n")[:2])
    # A test run reads the primary's test database through it: no test database of its own.
    assert replica[:2] == ["db-replica", "default"]
    assert replica[2]["connect_timeout"] == 2
    assert replica[2]["options"].startswith("-c hnsw.iterative_scan=relaxed_order")
    assert routers == ["memoryhub.db_router.PrimaryReplicaRouter"]


@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_settings_refuse_a_replica_url_of_the_wrong_scheme() -> None:
    result = run_python(
        "import django; django.setup()",
        env={"DEBUG": "1", "DATABASE_REPLICA_URL": "mysql://u@db-replica/x"},
    )
    assert result.returncode != 0
    assert "DATABASE_REPLICA_URL must start with one of postgres://" in result.stderr


CACHE_OF = (
    "from django.conf import settings; c = settings.CACHES['default']; "
    "print(c['BACKEND'].rsplit('.', 1)[1], c.get('LOCATION', ''))"
)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "LocMemCache "),
        ({"CELERY_BROKER_URL": "redis://127.0.0.1:6379/3"}, "RedisCache redis://127.0.0.1:6379/3"),
        ({"CELERY_BROKER_URL": "amqp://guest@127.0.0.1//"}, "LocMemCache "),
        (
            {"CELERY_BROKER_URL": "redis://127.0.0.1:6379/3", "CACHE_URL": "redis://c:6379/1"},
            "RedisCache redis://c:6379/1",
        ),
    ],
)
@pytest.mark.processes  # starts processes of its own: `make test-all`
def test_throttle_counts_are_shared_through_redis_whenever_a_broker_is(
    env: dict[str, str], expected: str
) -> None:
    result = run_python(CACHE_OF, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == expected.strip()
