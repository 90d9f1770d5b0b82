"""The background llama-server build (scripts/test) and the order that keeps it off the
suite's critical path."""

import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import _llama_server_modules_last
from workers.testing import llama_server


def _item(path: Path, name: str) -> SimpleNamespace:
    return SimpleNamespace(path=path, name=name)


def test_modules_that_run_llama_server_go_last_whole(tmp_path):
    plain = tmp_path / "test_plain.py"
    plain.write_text("def test_a(): pass\n")
    uses = tmp_path / "test_uses.py"
    uses.write_text("from workers.testing.llama_server import llama_server\n")
    items = [_item(uses, "u1"), _item(plain, "p1"), _item(uses, "u2"), _item(plain, "p2")]

    _llama_server_modules_last(items)

    assert [item.name for item in items] == ["p1", "p2", "u1", "u2"]


def _finish(folder: Path, *, rc: int, stdout: str = "", stderr: str = "") -> None:
    (folder / "stdout").write_text(stdout)
    (folder / "stderr").write_text(stderr)
    (folder / "rc").write_text(f"{rc}\n")


def test_a_test_waits_for_the_background_build_and_gets_its_binary(tmp_path, monkeypatch):
    binary = tmp_path / "llama-server"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    monkeypatch.delenv("INFERBOARD_LLAMA_SERVER", raising=False)
    monkeypatch.setenv("INFERBOARD_LLAMA_SERVER_BUILD", str(tmp_path))
    waiting = threading.Event()
    original_sleep = llama_server.time.sleep

    def sleep(seconds: float) -> None:
        waiting.set()
        original_sleep(0.01)

    monkeypatch.setattr(llama_server.time, "sleep", sleep)
    finisher = threading.Thread(
        target=lambda: (waiting.wait(), _finish(tmp_path, rc=0, stdout=f"{binary}\n"))
    )
    finisher.start()

    assert llama_server.require() == binary
    finisher.join()
    assert waiting.is_set()


def test_a_failed_background_build_fails_the_test_with_its_log(tmp_path, monkeypatch):
    monkeypatch.delenv("INFERBOARD_LLAMA_SERVER", raising=False)
    monkeypatch.setenv("INFERBOARD_LLAMA_SERVER_BUILD", str(tmp_path))
    _finish(tmp_path, rc=2, stderr="cc1plus: fatal error: out of memory\n")

    with pytest.raises(RuntimeError, match="out of memory"):
        llama_server.require()
