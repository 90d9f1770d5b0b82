"""deploy/ says true things: its documented values pass Django's deploy checks with no
warning, its placeholders refuse to start, and the compose file holds together.

No container engine runs here (and no base image can be pulled), so the compose file is
checked with a YAML parser against what the services need, not by `docker compose config`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import yaml

from tests.install.conftest import env_file, production_env
from workers.testing.processes import REPO_ROOT

COMPOSE = REPO_ROOT / "deploy" / "compose.yaml"


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    # Only what deploy/env.example sets, on top of a bare process environment.
    keep = {"PATH", "HOME", "LANG", "TMPDIR"}
    base = {k: v for k, v in os.environ.items() if k in keep}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO_ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_documented_production_values_pass_check_deploy_with_no_warning():
    result = manage(production_env(), "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stderr + result.stdout
    assert "System check identified no issues" in result.stdout


def test_the_env_template_as_shipped_refuses_to_start():
    result = manage(env_file(), "check")
    assert result.returncode != 0
    assert "SECRET_KEY is the placeholder" in result.stderr


def test_the_env_template_with_only_secret_key_filled_still_refuses_to_start():
    values = env_file() | {"SECRET_KEY": production_env()["SECRET_KEY"]}
    result = manage(values, "check")
    assert result.returncode != 0
    assert "ENDPOINT_CREDENTIALS_KEY is the placeholder" in result.stderr


def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_the_compose_file_parses_and_every_service_has_what_it_runs():
    services = compose()["services"]
    assert set(services) >= {"postgres", "redis", "web", "scheduler", "proxy"}
    for name, service in services.items():
        assert "image" in service or "build" in service, name
        for dependency in service.get("depends_on", {}):
            assert dependency in services, f"{name} depends on unknown {dependency}"
    for volume in [v for s in services.values() for v in s.get("volumes", [])]:
        source = volume.split(":")[0]
        assert source.startswith(".") or source in compose()["volumes"], volume
        if source.startswith("."):
            assert (COMPOSE.parent / source).exists(), volume


def test_compose_workers_get_no_database_or_server_secrets():
    services = compose()["services"]
    workers = {n: s for n, s in services.items() if n.startswith("worker-")}
    assert workers
    for name, service in workers.items():
        environment = service.get("environment", {})
        assert "env_file" not in service, name
        assert not {"DATABASE_URL", "SECRET_KEY", "ENDPOINT_CREDENTIALS_KEY"} & set(environment)
        assert {"CELERY_BROKER_URL", "INFERBOARD_SERVER_URL", "INFERBOARD_TOKEN"} <= set(
            environment
        )
        command = service["command"]
        assert command[:5] == ["celery", "-A", "workers.celery", "worker", "-Q"], name


def test_every_variable_compose_reads_is_in_the_env_template():
    variables = set(re.findall(r"\$\{(\w+)", COMPOSE.read_text()))
    assert variables <= set(env_file()), variables - set(env_file())


def test_the_page_cache_is_a_bounded_redis_that_can_never_evict_a_queued_job():
    services = compose()["services"]
    server_env = services["web"]["environment"]
    cache_host = server_env["REDIS_URL"].split("//")[1].split(":")[0]
    broker_host = server_env["CELERY_BROKER_URL"].split("//")[1].split(":")[0]
    # maxmemory and its policy are per instance: the cache must not share the broker's.
    assert cache_host != broker_host and cache_host in services
    cache = services[cache_host]["command"]
    assert cache[cache.index("--maxmemory") + 1]
    # Only keys with a TTL (pages) are evicted; the runs version, which has none, stays.
    assert cache[cache.index("--maxmemory-policy") + 1] == "volatile-lru"
    broker = services[broker_host]["command"]
    assert broker[broker.index("--maxmemory-policy") + 1] == "noeviction"
