"""Start and stop server processes for tests and benchmarks (fault server, llama-server)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx

REPO_ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop(process: subprocess.Popen[bytes], *, group: bool = False) -> None:
    """Terminate our own child by PID, then kill it if it lingers.

    With group=True the child leads its own process group (start_new_session=True) and the
    whole group is signalled, so processes it started itself go with it.
    """

    def send(sig: signal.Signals) -> None:
        if group:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, sig)
        elif process.poll() is None:
            process.send_signal(sig)

    if process.poll() is None or group:
        send(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            send(signal.SIGKILL)
            process.wait(timeout=10)
        if group:
            send(signal.SIGKILL)  # anything of the group that outlived its leader


_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform == "linux" else None
_PR_SET_PDEATHSIG = 1


def dies_with_parent() -> Callable[[], None] | None:
    """A `preexec_fn` for long-lived children: SIGTERM them when their parent dies.

    Stopping children in `finally` covers Ctrl-C and SIGTERM; this covers a parent that is
    killed outright (SIGKILL, OOM), which runs no Python at all. Linux only.
    """
    if _LIBC is None:
        return None
    parent = os.getpid()

    def preexec() -> None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return preexec


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


def wait_until_healthy(
    url: str, process: subprocess.Popen[bytes], timeout_s: float, path: str = "/health"
) -> None:
    """Returns once `url + path` answers 200; raises if the process exits or time runs out."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with code {process.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url + path, timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"server at {url} not healthy after {timeout_s:g} s")
