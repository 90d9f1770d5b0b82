"""One settings module for every environment, driven by environment variables.

A fresh checkout runs with nothing configured: SQLite in var/, no Redis, DEBUG on.
Production flips by env vars (see deploy/env.example): DEBUG=0, SECRET_KEY, DATABASE_URL,
REDIS_URL, ALLOWED_HOSTS.
"""

import os
import warnings
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("INFERBOARD_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    return [item.strip() for item in value.split(",") if item.strip()] if value else default


def database_from_url(url: str) -> dict:
    """sqlite:///abs/path.sqlite3 or postgres://user:password@host:port/name?sslmode=..."""
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        # sqlite:///relative.db and sqlite:////absolute/path.db, as dj-database-url reads them.
        path = unquote(parts.path)[1:]
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": path or ":memory:"}
    if parts.scheme in {"postgres", "postgresql"}:
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": unquote(parts.path.lstrip("/")) or "postgres",
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(parts.port or ""),
            "OPTIONS": dict(parse_qsl(parts.query)),
            "CONN_MAX_AGE": int(os.environ.get("DB_CONN_MAX_AGE", "60")),
        }
    raise ImproperlyConfigured(f"DATABASE_URL: unsupported scheme {parts.scheme!r}")


DEBUG = env_bool("DEBUG", True)

_DEV_SECRET_KEY = "dev-only-insecure-key-never-use-in-production"
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = _DEV_SECRET_KEY

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
]

MIDDLEWARE = [
    "apps.api.middleware.BodySizeLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Serves static files compressed (gzip/brotli) and, once hashed by collectstatic, cached
    # for a year; before the session and CSRF layers so a static file touches neither.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

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
        },
    },
]

DATABASES = {
    "default": database_from_url(
        os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'inferboard.sqlite3'}"
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", "")
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", REDIS_URL or "redis://127.0.0.1:6379/0")

# Jobs: workers submit results to this URL; endpoints must be inside the allowlist so that a
# hosted inferboard cannot be used to reach arbitrary internal addresses.
INFERBOARD_PUBLIC_URL = os.environ.get("INFERBOARD_PUBLIC_URL", "http://127.0.0.1:8000")
ENDPOINT_ALLOWLIST = env_list("ENDPOINT_ALLOWLIST", ["127.0.0.0/8", "::1/128", "localhost"])
# Encrypts endpoint credentials at rest; derived from SECRET_KEY when not set.
ENDPOINT_CREDENTIALS_KEY = os.environ.get("ENDPOINT_CREDENTIALS_KEY", "")
JOB_HEARTBEAT_TIMEOUT_S = int(os.environ.get("JOB_HEARTBEAT_TIMEOUT_S", "120"))

if REDIS_URL:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Result documents with per-request records are large; past this an upload gets 413.
API_MAX_BODY_BYTES = int(os.environ.get("API_MAX_BODY_BYTES", str(64 * 1024 * 1024)))
DATA_UPLOAD_MAX_MEMORY_SIZE = API_MAX_BODY_BYTES

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

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}
