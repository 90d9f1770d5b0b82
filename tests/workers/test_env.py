"""The typed environment readers the settings and the workers share (workers/env.py)."""

import subprocess
import sys

import pytest

from workers.env import (
    EnvError,
    env_bool,
    env_float,
    env_int,
    env_int_list,
    env_list,
    env_optional_int,
    env_str,
)


def test_an_unset_or_empty_variable_takes_the_default(monkeypatch):
    monkeypatch.delenv("IB_TEST_X", raising=False)
    assert env_int("IB_TEST_X", 7) == 7
    monkeypatch.setenv("IB_TEST_X", "  ")
    assert (env_int("IB_TEST_X", 7), env_float("IB_TEST_X", 0.5)) == (7, 0.5)
    assert (env_bool("IB_TEST_X", True), env_list("IB_TEST_X", ["a"])) == (True, ["a"])
    assert env_optional_int("IB_TEST_X") is None
    monkeypatch.setenv("IB_TEST_X", "")
    assert env_str("IB_TEST_X", "default") == "default"


def test_it_reads_typed_values(monkeypatch):
    monkeypatch.setenv("IB_TEST_X", " 42 ")
    assert env_int("IB_TEST_X", 0, minimum=1) == 42
    assert env_float("IB_TEST_X", 0.0) == 42.0
    assert env_optional_int("IB_TEST_X", minimum=1) == 42
    monkeypatch.setenv("IB_TEST_X", "a, ,b")
    assert env_list("IB_TEST_X", []) == ["a", "b"]
    monkeypatch.setenv("IB_TEST_X", "22,6379")
    assert env_int_list("IB_TEST_X", []) == [22, 6379]


@pytest.mark.parametrize(
    ("read", "value", "message"),
    [
        (lambda: env_int("IB_TEST_X", 1), "3x", "IB_TEST_X='3x' is not a whole number"),
        (lambda: env_int("IB_TEST_X", 1), "1.5", "IB_TEST_X='1.5' is not a whole number"),
        (lambda: env_int("IB_TEST_X", 1, minimum=1), "0", "is below its least value, 1"),
        (lambda: env_float("IB_TEST_X", 1.0), "fast", "IB_TEST_X='fast' is not a number"),
        (lambda: env_float("IB_TEST_X", 1.0), "inf", "IB_TEST_X='inf' is not a finite"),
        (lambda: env_bool("IB_TEST_X", False), "ture", "IB_TEST_X='ture' is not a boolean"),
        (lambda: env_int_list("IB_TEST_X", []), "1,x", "IB_TEST_X: 'x' is not a whole number"),
    ],
)
def test_a_value_it_cannot_read_is_an_error_naming_the_variable(monkeypatch, read, value, message):
    monkeypatch.setenv("IB_TEST_X", value)
    with pytest.raises(EnvError, match=message):
        read()


def test_the_worker_refuses_a_time_limit_it_cannot_read():
    # workers/celery.py reads it when imported: a GPU host's bad value stops the worker's
    # start with the variable's name, not a bare int() error.
    result = subprocess.run(
        [sys.executable, "-c", "import workers.celery"],
        env={"INFERBOARD_TASK_TIME_LIMIT_S": "6h", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "INFERBOARD_TASK_TIME_LIMIT_S='6h' is not a whole number" in result.stderr
