"""Start and stop server processes for tests and benchmarks (fault server, llama-server)."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

REPO_ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate our own child by PID, then kill it if it lingers."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@contextlib.contextmanager
def fault_server(*args: str, cpu: int | None = None) -> Iterator[str]:
    """Run `python -m workers.testing.fault_server ARGS` on a free port; yield its base URL."""
    command = [sys.executable, "-m", "workers.testing.fault_server", "--port", "0", *args]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        cwd=REPO_ROOT,
        env=env,
        preexec_fn=(lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode()
        match = re.search(r"http://\S+", line)
        if not match:
            raise RuntimeError(f"fault server did not start: {line!r}")
        yield match.group(0)
    finally:
        stop(process)


def wait_until_healthy(url: str, process: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with code {process.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url + "/health", timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"server at {url} not healthy after {timeout_s:g} s")
