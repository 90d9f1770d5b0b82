from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.workers.accuracy.accuracy_support import SERVER, ScriptedServer


@pytest.fixture
def scripted_server(tmp_path: Path) -> Iterator[Callable[[dict[str, Any]], ScriptedServer]]:
    """Start the scripted OpenAI-compatible server (a real process on a free port)."""
    processes: list[subprocess.Popen[str]] = []

    def start(script: dict[str, Any]) -> ScriptedServer:
        index = len(processes)
        script_path = tmp_path / f"script{index}.json"
        log_path = tmp_path / f"requests{index}.jsonl"
        script_path.write_text(json.dumps(script), encoding="utf-8")
        log_path.write_text("", encoding="utf-8")
        process = subprocess.Popen(
            [sys.executable, str(SERVER), str(script_path), str(log_path)],
            stdout=subprocess.PIPE,
            text=True,
        )
        processes.append(process)
        assert process.stdout is not None
        line = process.stdout.readline()  # blocks until the server is listening (or died)
        if not line.startswith("LISTENING "):
            raise RuntimeError(f"scripted server did not start (exit {process.poll()})")
        return ScriptedServer(f"http://127.0.0.1:{int(line.split()[1])}", log_path)

    yield start
    for process in processes:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout:
            process.stdout.close()
