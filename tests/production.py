"""The documented production command (gunicorn + uvicorn, DEBUG off) started on the test
database, for the tests that need the real web process: its connection pool, its degraded
modes. Import the fixtures into a conftest or test module to use them."""

from __future__ import annotations

import secrets
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from django.db import connection

from tests.install.test_server_install import PRODUCTION_COMMAND
from workers.testing.processes import REPO_ROOT, free_port, stop, wait_until_healthy


def suite_database_url() -> str:
    db = connection.settings_dict
    return f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def production_secrets() -> dict[str, str]:
    return {
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ENDPOINT_CREDENTIALS_KEY": Fernet.generate_key().decode(),
        "ENDPOINT_ALLOWLIST": "127.0.0.0/8",
    }


@pytest.fixture(scope="session")
def static_root(tmp_path_factory) -> Path:
    """collectstatic's output (DEBUG off serves hashed names from its manifest), once."""
    var = tmp_path_factory.mktemp("var")
    env = {
        "PATH": str(Path(sys.executable).parent),
        "INFERBOARD_VAR_DIR": str(var),
        **production_secrets(),
    }
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
        env=env,
        cwd=REPO_ROOT,
        check=True,
        timeout=600,
    )
    return var


@pytest.fixture
def production_server(static_root) -> Iterator[Callable[..., str]]:
    """production_server(**env) starts the command on the test database and Redis and
    returns its URL; a variable given as None is left out: production_server(REDIS_URL=None)
    runs without Redis. Every server started is stopped after the test."""
    if connection.vendor != "postgresql":
        pytest.fail("the production command runs on PostgreSQL: run the suite with scripts/test")
    from django.conf import settings

    started: list[subprocess.Popen[bytes]] = []

    def start(**overrides: str | None) -> str:
        port = free_port()
        redis = settings.REDIS_URL or "redis://127.0.0.1:6379/15"
        env: dict[str, str | None] = {
            "PATH": str(Path(sys.executable).parent),
            "DATABASE_URL": suite_database_url(),
            "REDIS_URL": redis,
            "CELERY_BROKER_URL": redis,
            "DB_POOL_SIZE": "2",
            "WEB_CONCURRENCY": "1",
            "INFERBOARD_BIND": f"127.0.0.1:{port}",
            "INFERBOARD_VAR_DIR": str(static_root),
            **production_secrets(),
            "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_SSL_REDIRECT": "0",
            **overrides,
        }
        server = subprocess.Popen(
            [sys.executable, "-m", *PRODUCTION_COMMAND],
            env={name: value for name, value in env.items() if value is not None},
            cwd=REPO_ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        started.append(server)
        url = f"http://127.0.0.1:{port}"
        wait_until_healthy(url, server, 120, path="/healthz")
        return url

    yield start
    for server in started:
        stop(server)
