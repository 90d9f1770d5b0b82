"""One settings module for every environment, driven by environment variables.

A fresh checkout runs with nothing configured: SQLite in var/, no Redis, DEBUG on.
Production flips by env vars (see deploy/env.example): DEBUG=0, SECRET_KEY, DATABASE_URL,
REDIS_URL, ALLOWED_HOSTS.
"""

import warnings
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

# Every setting read from the environment goes through these typed readers (workers/env.py):
# a value that is not what its setting takes stops the start with an error naming it.
from workers.env import (
    env_bool,
    env_float,
    env_int,
    env_int_list,
    env_list,
    env_optional_int,
    env_str,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("INFERBOARD_VAR_DIR") or BASE_DIR / "var")


def database_from_url(url: str) -> dict[str, Any]:
    """sqlite:///abs/path.sqlite3 or postgres://user:password@host:port/name?sslmode=..."""
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        # sqlite:///relative.db and sqlite:////absolute/path.db, as dj-database-url reads them.
        path = unquote(parts.path)[1:]
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": path or ":memory:"}
    if parts.scheme in {"postgres", "postgresql"}:
        options: dict[str, Any] = dict(parse_qsl(parts.query))
        # A database that does not answer fails a request in seconds (a 503 with Retry-After,
        # apps/api/middleware.py), not after libpq's default of waiting forever.
        options.setdefault("connect_timeout", str(env_int("DB_CONNECT_TIMEOUT_S", 3, minimum=1)))
        pool_size = env_int("DB_POOL_SIZE", 0, minimum=0)
        if pool_size > 0:
            # Each request borrows an open connection instead of opening one (a PostgreSQL
            # backend started per request): the ASGI web process sets this (apps/serving.py).
            # A request waits at most DB_POOL_TIMEOUT_S for one: the database is down, or
            # every connection is busy for that long; either way a 503 now beats a 500 later.
            timeout = env_float("DB_POOL_TIMEOUT_S", 3.0, minimum=0)
            options["pool"] = {"min_size": 1, "max_size": pool_size, "timeout": timeout}
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": unquote(parts.path.lstrip("/")) or "postgres",
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(parts.port or ""),
            "OPTIONS": options,
            # A pooled connection goes back to the pool when the request ends.
            "CONN_MAX_AGE": 0 if pool_size else env_int("DB_CONN_MAX_AGE", 60, minimum=0),
        }
    raise ImproperlyConfigured(f"DATABASE_URL: unsupported scheme {parts.scheme!r}")


DEBUG = env_bool("DEBUG", True)

_DEV_SECRET_KEY = "dev-only-insecure-key-never-use-in-production"
# Words the shipped templates (deploy/env.example, worker.env.example) put where a secret goes.
_PLACEHOLDER_MARKERS = ("change-me", "changeme", "replace-me", "placeholder", "example")


def production_secret_problem(name: str, value: str) -> str | None:
    """Why `value` cannot be the production secret `name`, or None when it can.

    Production refuses to start rather than run with a guessable secret: a missing one, a
    template's placeholder, or one that Django's own `check --deploy` (W009) calls weak.
    """
    from django.core.checks.security import base as security

    if not value:
        return f"{name} must be set when DEBUG is off"
    lowered = value.lower()
    if value == _DEV_SECRET_KEY or any(marker in lowered for marker in _PLACEHOLDER_MARKERS):
        return f"{name} is the placeholder from the template; generate a real one"
    if name == "SECRET_KEY" and (
        len(value) < security.SECRET_KEY_MIN_LENGTH
        or len(set(value)) < security.SECRET_KEY_MIN_UNIQUE_CHARACTERS
        or value.startswith(security.SECRET_KEY_INSECURE_PREFIX)
    ):
        return f"{name} is too weak: at least {security.SECRET_KEY_MIN_LENGTH} random characters"
    return None


SECRET_KEY = env_str("SECRET_KEY")
if not DEBUG and (problem := production_secret_problem("SECRET_KEY", SECRET_KEY)):
    raise ImproperlyConfigured(
        problem + ' (python -c "import secrets; print(secrets.token_urlsafe(50))")'
    )
SECRET_KEY = SECRET_KEY or _DEV_SECRET_KEY

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "ninja",
    "apps.accounts",
    "apps.catalog",
    "apps.runs",
    "apps.accuracy",
    "apps.costs",
    "apps.imports",
    "apps.jobs",
    "apps.leaderboard",
    "apps.regressions",
    "apps.claims",
    "apps.trust",
    "apps.agents",
    "apps.economics",
    # Sign-in: email + password, email verification, password reset (apps.accounts owns it).
    "allauth",
    "allauth.account",
]

MIDDLEWARE = [
    "apps.api.middleware.BodySizeLimitMiddleware",
    # A view failing for a part that is down (the database) answers 503 with Retry-After.
    "apps.api.middleware.ServiceUnavailableMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Serves static files compressed (gzip/brotli) and, once hashed by collectstatic, cached
    # for a year; before the session and CSRF layers so a static file touches neither.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Cache-Control, ETag and Last-Modified for every response (public, or private and
    # unstored); outside the session and CSRF layers, so it sees the cookies they set.
    "apps.http_cache.HttpCacheMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    # Under DEBUG too, a run or page that does not exist answers the site's 404 page.
    "apps.api.middleware.SiteNotFoundMiddleware",
    # A refusal is the styled 403 page, logged without a traceback.
    "apps.api.middleware.SiteForbiddenMiddleware",
]

# Pages load scripts only from here (no inline scripts or handlers); Plotly and htmx set inline
# styles (the API docs page serves Swagger UI from static files too). Images may be blob: URLs
# because a chart's PNG download is drawn from a blob of its own SVG (Plotly.toImage).
SECURE_CSP = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'", "'unsafe-inline'"],
    "img-src": ["'self'", "data:", "blob:"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "frame-ancestors": ["'none'"],
    "form-action": ["'self'"],
}

ROOT_URLCONF = "apps.urls"
WSGI_APPLICATION = "apps.wsgi.application"
ASGI_APPLICATION = "apps.asgi.application"

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
            ],
            # The site frame's tags: site-level, below every app (apps/frame.py).
            "libraries": {"frame": "apps.frame"},
        },
    },
]

DATABASES = {
    "default": database_from_url(
        env_str("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'inferboard.sqlite3'}"
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# SQLite (the demo's database) cannot declare "NULLs are not distinct": Django warns (W047) at
# every start, three times. PostgreSQL, where production and the test suite run, enforces them;
# the warning says nothing a demo visitor can act on.
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    SILENCED_SYSTEM_CHECKS = ["models.W047"]

REDIS_URL = env_str("REDIS_URL")
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", REDIS_URL or "redis://127.0.0.1:6379/0")

# Jobs: workers submit results to this URL; endpoints must be inside the allowlist so that a
# hosted inferboard cannot be used to reach arbitrary internal addresses.
INFERBOARD_PUBLIC_URL = env_str("INFERBOARD_PUBLIC_URL", "http://127.0.0.1:8000")
ENDPOINT_ALLOWLIST = env_list("ENDPOINT_ALLOWLIST", ["127.0.0.0/8", "::1/128", "localhost"])
# Fernet key(s) that encrypt endpoint credentials at rest: their own secret in production,
# so rotating SECRET_KEY never makes stored endpoint keys unreadable. Only a DEBUG (local)
# setup falls back to a key derived from the dev SECRET_KEY (apps/jobs/crypto.py).
ENDPOINT_CREDENTIALS_KEY = env_str("ENDPOINT_CREDENTIALS_KEY")
if not DEBUG and (
    problem := production_secret_problem("ENDPOINT_CREDENTIALS_KEY", ENDPOINT_CREDENTIALS_KEY)
):
    raise ImproperlyConfigured(
        problem + " (python -c 'from cryptography.fernet import Fernet; "
        "print(Fernet.generate_key().decode())')"
    )
# Loopback is the default only with DEBUG on (a local setup): in production the operator names
# the networks, so a tenant cannot point a first-party worker at the host's own services.
if not DEBUG and not env_list("ENDPOINT_ALLOWLIST", []):
    raise ImproperlyConfigured(
        "ENDPOINT_ALLOWLIST must be set when DEBUG is off: the networks and host names "
        "endpoints may point to (e.g. 10.40.0.0/16,*.gpu.example.com); loopback is not a "
        "production default"
    )
# Pages' validators (apps/http_cache.py): INFERBOARD_RELEASE (a commit, say, set on deploy)
# gives new code new ETags at once; without it a deploy reaches revalidating caches within
# HTTP_CACHE_REFRESH_S, the longest a cached page may go unrefreshed.
INFERBOARD_RELEASE = env_str("INFERBOARD_RELEASE")
HTTP_CACHE_REFRESH_S = env_int("HTTP_CACHE_REFRESH_S", 600, minimum=1)
# Retry-After on a 503: the database or the broker is down.
UNAVAILABLE_RETRY_AFTER_S = env_int("UNAVAILABLE_RETRY_AFTER_S", 15, minimum=0)
# Long polls an agent's token may hold open at once (POST /api/v1/agent/claim); past it, 429.
AGENT_MAX_POLLS_PER_TOKEN = env_int("AGENT_MAX_POLLS_PER_TOKEN", 4, minimum=1)
JOB_HEARTBEAT_TIMEOUT_S = env_int("JOB_HEARTBEAT_TIMEOUT_S", 120, minimum=1)
# How often a worker reports a running job; 0: a quarter of the timeout above, at least 1 s.
JOB_HEARTBEAT_INTERVAL_S = env_float("JOB_HEARTBEAT_INTERVAL_S", 0.0, minimum=0)

# The InferenceX sync (apps.imports.services.inferencex_sync): off unless a source is set. A URL
# is InferenceX's API base (e.g. https://inferencex.com/api/v1); a path is a folder holding its
# responses as benchmarks.json, benchmarks-history.json and evaluations.json.
INFERENCEX_API_URL = env_str("INFERENCEX_API_URL")
INFERENCEX_SYNC_EVERY_S = env_int("INFERENCEX_SYNC_EVERY_S", 6 * 3600, minimum=1)
INFERENCEX_MODELS = env_list("INFERENCEX_MODELS", ["DeepSeek-R1-0528"])
# Change points and alerts (apps.regressions): detection runs in the scheduler's loop when
# runs were stored since the last pass, or this often; a failed alert is retried after
# BACKOFF, 2×BACKOFF, 4×BACKOFF ... seconds, ATTEMPTS tries in all.
REGRESSION_DETECT_EVERY_S = env_int("REGRESSION_DETECT_EVERY_S", 3600, minimum=1)
REGRESSION_ALERT_BACKOFF_S = env_int("REGRESSION_ALERT_BACKOFF_S", 60, minimum=0)
REGRESSION_ALERT_ATTEMPTS = env_int("REGRESSION_ALERT_ATTEMPTS", 6, minimum=1)
REGRESSION_ALERT_TIMEOUT_S = env_float("REGRESSION_ALERT_TIMEOUT_S", 10.0, minimum=0)
# The delivery log's rows are deleted this many days after their try (the scheduler's tick
# prunes them); 0 keeps them forever. The log is for seeing why a recent alert failed.
REGRESSION_DELIVERY_RETAIN_DAYS = env_int("REGRESSION_DELIVERY_RETAIN_DAYS", 90, minimum=0)
# The operator's registry of first-party pool names (e.g. b200,mi355x or pool.b200): reserved
# for `addpool` even before it runs, so no organization can claim one first and have its
# agents' jobs later read as the service's own fleet.
FIRST_PARTY_POOLS = env_list("FIRST_PARTY_POOLS", [])
# Reserves first-party names by pattern as well: with e.g. "fleet-", no organization may claim
# any pool.fleet-* name, registered or not. Empty (the default): only the names above and
# pools `addpool` made are reserved, since a default prefix would not cover names such as
# pool.h200 that an operator already uses.
FIRST_PARTY_POOL_PREFIX = env_str("FIRST_PARTY_POOL_PREFIX").strip().lower()
# Whether an organization's admin may point a webhook at a loopback or private address.
REGRESSION_WEBHOOK_PRIVATE_HOSTS = env_bool("REGRESSION_WEBHOOK_PRIVATE_HOSTS", False)
# Links in alerts point here (empty: paths only).
SITE_URL = env_str("SITE_URL")
# What one organization may keep of what its members add from pages, so a member (or a stolen
# session) cannot fill the database: saved cost pages, price profiles and alert subscriptions.
# Past a budget the page answers 4xx and says which budget; replacing one (saving under its
# name) is always possible, and saved pages and subscriptions can be removed.
ORG_MAX_SAVED_PAGES = env_int("ORG_MAX_SAVED_PAGES", 100, minimum=0)
ORG_MAX_PRICE_PROFILES = env_int("ORG_MAX_PRICE_PROFILES", 50, minimum=0)
ORG_MAX_SUBSCRIPTIONS = env_int("ORG_MAX_SUBSCRIPTIONS", 25, minimum=0)
# Bounds on what one job (or schedule) may ask a worker for; past them the API answers 422
# naming the option. Per load level: requests, seconds, arrivals/s, warm-up requests.
JOB_MAX_LEVELS = env_int("JOB_MAX_LEVELS", 32, minimum=1)
JOB_MAX_CONCURRENCY = env_int("JOB_MAX_CONCURRENCY", 1024, minimum=1)
JOB_MAX_REQUESTS = env_int("JOB_MAX_REQUESTS", 100000, minimum=1)
JOB_MAX_DURATION_S = env_float("JOB_MAX_DURATION_S", 3600.0, minimum=0)
JOB_MAX_RATE = env_float("JOB_MAX_RATE", 10000.0, minimum=0)
JOB_MAX_WARMUP = env_int("JOB_MAX_WARMUP", 10000, minimum=1)
JOB_MAX_ACCURACY_ITEMS = env_int("JOB_MAX_ACCURACY_ITEMS", 100000, minimum=1)
JOB_MAX_MEMBERS = env_int("JOB_MAX_MEMBERS", 16, minimum=1)
# Distinct shared prefixes a load job may spread its prefix-cache hits over, and client
# processes it may share each level between on the worker's host.
JOB_MAX_PREFIX_GROUPS = env_int("JOB_MAX_PREFIX_GROUPS", 1024, minimum=1)
JOB_MAX_PROCESSES = env_int("JOB_MAX_PROCESSES", 16, minimum=1)
# A fanned-out job's members start this long after it is queued: time for each worker to take
# its message and calibrate prompts. A member that comes later starts at once (its skew says so).
JOB_MEMBERS_START_LEAD_S = env_float("JOB_MEMBERS_START_LEAD_S", 10.0, minimum=0)
SCHEDULE_MIN_INTERVAL_MINUTES = env_int("SCHEDULE_MIN_INTERVAL_MINUTES", 5, minimum=1)
# Loopback services that are never endpoints, even inside the allowlist (SSH, SMTP,
# PostgreSQL, Redis, memcached, MySQL, MongoDB).
_DENIED_PORTS = [22, 25, 3306, 5432, 6379, 11211, 27017]
ENDPOINT_DENIED_PORTS = env_int_list("ENDPOINT_DENIED_PORTS", _DENIED_PORTS)

# The cache degrades instead of failing while Redis is unreachable (apps/cache.py): reads miss,
# counters fall back to process memory, and Redis is tried again after CACHE_RETRY_S.
CACHE_TIMEOUT_S = env_float("CACHE_TIMEOUT_S", 1.0, minimum=0)
CACHE_RETRY_S = env_float("CACHE_RETRY_S", 5.0, minimum=0)
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "apps.cache.FailSoftRedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {"TIMEOUT_S": CACHE_TIMEOUT_S, "RETRY_S": CACHE_RETRY_S},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Retention of request records (apps/runs/archive.py, `manage.py records_archive`): records of
# public runs older than this many days move to one zstd Parquet file per run, which the run
# page and the exports read instead. Unset: records stay in the database forever.
RECORDS_RETAIN_DAYS = env_optional_int("INFERBOARD_RECORDS_RETAIN_DAYS", minimum=1)
# Where the files go: this folder, or, when INFERBOARD_ARCHIVE_S3_BUCKET is set
# ("bucket" or "bucket/prefix"), S3-compatible storage at INFERBOARD_ARCHIVE_S3_ENDPOINT
# (MinIO, Ceph, R2 ...; unset: AWS) with the usual AWS_* credentials in the environment.
RECORDS_ARCHIVE_DIR = Path(env_str("INFERBOARD_ARCHIVE_DIR") or VAR_DIR / "archive")
RECORDS_ARCHIVE_S3_BUCKET = env_str("INFERBOARD_ARCHIVE_S3_BUCKET").strip("/ ")
RECORDS_ARCHIVE_S3_ENDPOINT = env_str("INFERBOARD_ARCHIVE_S3_ENDPOINT")
RECORDS_ARCHIVE_S3_REGION = env_str("INFERBOARD_ARCHIVE_S3_REGION")
if RECORDS_ARCHIVE_S3_ENDPOINT and not RECORDS_ARCHIVE_S3_BUCKET:
    raise ImproperlyConfigured(
        "INFERBOARD_ARCHIVE_S3_ENDPOINT is set without INFERBOARD_ARCHIVE_S3_BUCKET"
    )

# The public dumps (apps/trust/dumps.py) are written here.
INFERBOARD_DUMP_DIR = Path(env_str("INFERBOARD_DUMP_DIR") or BASE_DIR / "var" / "dumps")

# Result documents with per-request records are large; past this an upload gets 413.
API_MAX_BODY_BYTES = env_int("API_MAX_BODY_BYTES", 64 * 1024 * 1024, minimum=1)
DATA_UPLOAD_MAX_MEMORY_SIZE = API_MAX_BODY_BYTES

# Accounts (django-allauth): people sign in by email; an address must be verified first.
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_EMAIL_VERIFICATION = env_str("ACCOUNT_EMAIL_VERIFICATION", "mandatory")
ACCOUNT_CONFIRM_EMAIL_ON_GET = True
ACCOUNT_LOGOUT_ON_GET = False
# An invitation link works for this many days, for the address it was sent to.
INVITATION_MAX_AGE_DAYS = env_float("INVITATION_MAX_AGE_DAYS", 7.0, minimum=0)
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/org/"
# Mail: printed to the console locally; SMTP when EMAIL_HOST is set (production).
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "inferboard <noreply@localhost>")
if env_str("EMAIL_HOST"):
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_HOST = env_str("EMAIL_HOST")
    EMAIL_PORT = env_int("EMAIL_PORT", 587, minimum=1)
    EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
    EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
    EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
else:
    EMAIL_BACKEND = env_str("EMAIL_BACKEND", "apps.accounts.mail.ConsoleEmailBackend")

# Optional, off unless configured (needs `pip install 'inferboard[sso]'`): TOTP second factor
# (ACCOUNT_MFA=1) and one OpenID Connect provider for company single sign-on (OIDC_*).
if env_bool("ACCOUNT_MFA", False):
    INSTALLED_APPS += ["allauth.mfa"]
    MFA_SUPPORTED_TYPES = ["totp", "recovery_codes"]
if env_str("OIDC_SERVER_URL"):
    INSTALLED_APPS += ["allauth.socialaccount", "allauth.socialaccount.providers.openid_connect"]
    SOCIALACCOUNT_PROVIDERS = {
        "openid_connect": {
            "APPS": [
                {
                    "provider_id": env_str("OIDC_PROVIDER_ID", "sso"),
                    "name": env_str("OIDC_NAME", "Company SSO"),
                    "client_id": env_str("OIDC_CLIENT_ID"),
                    "secret": env_str("OIDC_CLIENT_SECRET"),
                    "settings": {"server_url": env_str("OIDC_SERVER_URL")},
                }
            ]
        }
    }

# Every API write is limited (apps/accounts/ratelimit.py), "count/seconds" in a sliding
# window: writes per token and per organization, worker reports (job events, agent claims)
# apart, and anonymous writes per client address. Past a limit the API answers 429 with
# Retry-After. Counters live in the cache (Redis in production; process memory while it is down).
RATE_LIMIT_TOKEN_WRITES = env_str("RATE_LIMIT_TOKEN_WRITES", "120/60")
RATE_LIMIT_ORG_WRITES = env_str("RATE_LIMIT_ORG_WRITES", "600/60")
RATE_LIMIT_TOKEN_REPORTS = env_str("RATE_LIMIT_TOKEN_REPORTS", "600/60")
RATE_LIMIT_ORG_REPORTS = env_str("RATE_LIMIT_ORG_REPORTS", "3000/60")
RATE_LIMIT_ANON_WRITES = env_str("RATE_LIMIT_ANON_WRITES", "60/60")
# Run bundles (a zip of every record of a run) per client address, signed in or not.
RATE_LIMIT_BUNDLES = env_str("RATE_LIMIT_BUNDLES", "10/60")
# Proxies in front of the web process that append to X-Forwarded-For (Caddy or nginx in
# deploy/: 1). Client addresses for sign-in and anonymous limits are read past them.
ALLAUTH_TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0, minimum=0)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
# plotly.js is vendored as Plotly's partial "basic" bundle (static/vendor/plotly-basic/: its
# version and licence are in the README there), loaded only by pages that draw charts.
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "static"
# Without collectstatic (development, tests) WhiteNoise has no STATIC_ROOT to index and says
# so on every start; staticfiles' finders serve those files instead.
warnings.filterwarnings("ignore", message="No directory at: ")
if not DEBUG:
    # collectstatic (deploy/ runs it) writes content-hashed, pre-compressed copies, which
    # WhiteNoise serves with a year's cache lifetime. DEBUG keeps plain names: no collect step.
    STORAGES = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }
# The run command (scripts/run: the demo on runserver, DEBUG) serves static files through
# WhiteNoise too, gzipped as they go out and cached for an hour: Plotly alone is 1.16 MB
# uncompressed. Production's collectstatic would compress them ahead, but on a fresh clone it
# takes over a minute (1,155 files with the admin's and the API docs'), before the first page.
STATIC_GZIP = env_bool("STATIC_GZIP", False)
if DEBUG and STATIC_GZIP:
    INSTALLED_APPS.insert(
        INSTALLED_APPS.index("django.contrib.staticfiles"), "whitenoise.runserver_nostatic"
    )
    MIDDLEWARE.insert(
        MIDDLEWARE.index("whitenoise.middleware.WhiteNoiseMiddleware"),
        "apps.http_cache.StaticGzipMiddleware",
    )
    WHITENOISE_MAX_AGE = 3600

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
