import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


def pytest_without_a_database(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )


def test_a_plain_pytest_without_database_url_refuses_to_run_the_postgresql_suite():
    result = pytest_without_a_database("tests/apps/jobs/test_cron.py")
    assert result.returncode == pytest.ExitCode.USAGE_ERROR
    assert "DATABASE_URL is not set" in result.stderr + result.stdout


def test_the_sqlite_smoke_pass_still_runs_without_database_url():
    # A file without smoke tests: the guard lets the run through, and pytest then finds
    # nothing selected (exit 5) rather than refusing (exit 4).
    result = pytest_without_a_database("-m", "sqlite_smoke", "tests/apps/jobs/test_cron.py")
    assert result.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, result.stdout
    assert "DATABASE_URL is not set" not in result.stdout + result.stderr
