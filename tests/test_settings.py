import os
import subprocess
import sys
from pathlib import Path

import pytest

from apps.settings import database_from_url

ROOT = Path(__file__).parents[1]


def django_check(env: dict[str, str]) -> subprocess.CompletedProcess:
    secrets = {"SECRET_KEY", "DEBUG", "ENDPOINT_CREDENTIALS_KEY", "ENDPOINT_ALLOWLIST"}
    clean = {k: v for k, v in os.environ.items() if k not in secrets}
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


REAL_SECRETS = {
    "SECRET_KEY": "kR3v9-Qz_p1LmN8sT4wXy7Bc2Df6Gh0Jk5Lz9Qw3Er8Ty1Ui4Op7As2Dg6Hj0Kl",
    "ENDPOINT_CREDENTIALS_KEY": "Zm9yLXRlc3RzLW9ubHktYS0zMi1ieXRlLWZlcm5ldGs=",
    "ENDPOINT_ALLOWLIST": "10.40.0.0/16",
}


def test_it_starts_with_real_secrets_when_debug_is_off():
    result = django_check({"DEBUG": "0", **REAL_SECRETS})
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("placeholder", ["change-me", "change-me-to-a-long-random-string"])
def test_it_refuses_to_start_with_the_templates_placeholder_secret_key(placeholder):
    result = django_check({"DEBUG": "0", **REAL_SECRETS, "SECRET_KEY": placeholder})
    assert result.returncode != 0
    assert "SECRET_KEY is the placeholder" in result.stderr


def test_it_refuses_a_secret_key_django_calls_weak():
    result = django_check({"DEBUG": "0", **REAL_SECRETS, "SECRET_KEY": "x" * 60})
    assert result.returncode != 0
    assert "SECRET_KEY is too weak" in result.stderr


def test_the_credentials_key_is_its_own_required_secret_in_production():
    # No derivation from SECRET_KEY: without its own key the server does not start.
    result = django_check({"DEBUG": "0", "SECRET_KEY": REAL_SECRETS["SECRET_KEY"]})
    assert result.returncode != 0
    assert "ENDPOINT_CREDENTIALS_KEY must be set when DEBUG is off" in result.stderr


def test_database_urls_are_parsed():
    pg = database_from_url("postgres://u:p%40ss@db.example:6543/inferboard?sslmode=require")
    assert (pg["NAME"], pg["USER"], pg["PASSWORD"], pg["HOST"], pg["PORT"]) == (
        "inferboard",
        "u",
        "p@ss",
        "db.example",
        "6543",
    )
    # A database that does not answer fails a request in seconds (libpq would wait forever).
    assert pg["OPTIONS"] == {"sslmode": "require", "connect_timeout": "3"}
    assert database_from_url("sqlite:////tmp/x.sqlite3")["NAME"] == "/tmp/x.sqlite3"
    with pytest.raises(Exception, match="unsupported scheme"):
        database_from_url("mysql://localhost/x")


def test_it_refuses_a_boolean_setting_it_cannot_read():
    # The lenient reader took anything unknown as false: `DEBUG=flase` would have turned
    # DEBUG off without a word, and `SECURE_SSL_REDIRECT=ture` turned it off.
    result = django_check({"DEBUG": "flase"})
    assert result.returncode != 0
    assert "DEBUG='flase' is not a boolean" in result.stderr


@pytest.mark.parametrize("word", ["0", "false", "No", " off "])
def test_it_reads_the_usual_words_for_false(word):
    result = django_check({"DEBUG": word, **REAL_SECRETS})
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("value", ["30d", "0", "-5", "1.5"])
def test_it_refuses_a_retention_that_is_not_a_whole_number_of_days(value):
    result = django_check({"INFERBOARD_RECORDS_RETAIN_DAYS": value})
    assert result.returncode != 0
    name = "INFERBOARD_RECORDS_RETAIN_DAYS"
    assert f"{name}={value!r} is not a whole number" in result.stderr or (
        f"{name}={value!r} is below its least value, 1" in result.stderr
    )


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("JOB_MAX_LEVELS", "32 levels", "is not a whole number"),
        ("JOB_MAX_DURATION_S", "1h", "is not a number"),
        ("CACHE_TIMEOUT_S", "nan", "is not a finite number"),
        ("API_MAX_BODY_BYTES", "0", "is below its least value, 1"),
        ("DB_POOL_SIZE", "-1", "is below its least value, 0"),
    ],
)
def test_it_refuses_a_number_setting_it_cannot_read_naming_the_variable(name, value, problem):
    # These were bare int()/float() calls: a ValueError that named no variable, or a
    # negative pool size taken as it came.
    result = django_check({name: value})
    assert result.returncode != 0
    assert f"{name}={value!r} {problem}" in result.stderr


def test_it_refuses_a_denied_port_that_is_not_a_number():
    result = django_check({"ENDPOINT_DENIED_PORTS": "22,ssh"})
    assert result.returncode != 0
    assert "ENDPOINT_DENIED_PORTS: 'ssh' is not a whole number" in result.stderr


def test_it_refuses_an_s3_endpoint_without_a_bucket():
    result = django_check({"INFERBOARD_ARCHIVE_S3_ENDPOINT": "http://127.0.0.1:9000"})
    assert result.returncode != 0
    assert "INFERBOARD_ARCHIVE_S3_ENDPOINT is set without INFERBOARD_ARCHIVE_S3_BUCKET" in (
        result.stderr
    )
