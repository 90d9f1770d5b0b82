import os
import subprocess
import sys
from pathlib import Path

import pytest

from apps.settings import database_from_url

ROOT = Path(__file__).parents[1]


def django_check(env: dict[str, str]) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG"}}
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
    )


def test_it_refuses_to_start_without_a_secret_key_when_debug_is_off():
    result = django_check({"DEBUG": "0"})
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr


def test_it_starts_with_a_secret_key_when_debug_is_off():
    assert django_check({"DEBUG": "0", "SECRET_KEY": "x" * 60}).returncode == 0


def test_database_urls_are_parsed():
    pg = database_from_url("postgres://u:p%40ss@db.example:6543/inferboard?sslmode=require")
    assert (pg["NAME"], pg["USER"], pg["PASSWORD"], pg["HOST"], pg["PORT"]) == (
        "inferboard",
        "u",
        "p@ss",
        "db.example",
        "6543",
    )
    assert pg["OPTIONS"] == {"sslmode": "require"}
    assert database_from_url("sqlite:////tmp/x.sqlite3")["NAME"] == "/tmp/x.sqlite3"
    with pytest.raises(Exception, match="unsupported scheme"):
        database_from_url("mysql://localhost/x")
