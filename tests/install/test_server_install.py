"""The server as deploy/ installs it (the wheel with its `server` extra) under the production
command: it serves /healthz, and clients that trickle a body in cannot stall it."""

from __future__ import annotations

import contextlib
import shlex
import socket
import subprocess
import threading
from collections.abc import Iterator

import httpx
import pytest
import yaml

from tests.install.conftest import Venv, production_env
from tests.waits import wait_for
from workers.testing.processes import REPO_ROOT, free_port, stop

# The one production command; the test below holds every deploy file to it.
PRODUCTION_COMMAND = ["gunicorn", "--config", "python:apps.serving", "apps.asgi:application"]
HOST = "inferboard.example.com"  # ALLOWED_HOSTS in deploy/env.example
# What the TLS proxy in front adds; without it DEBUG=0 redirects to https.
PROXIED = {"Host": HOST, "X-Forwarded-Proto": "https"}


def test_every_deploy_file_runs_the_same_production_command():
    dockerfile = (REPO_ROOT / "deploy/Dockerfile").read_text()
    assert 'CMD ["' + '", "'.join(PRODUCTION_COMMAND) + '"]' in dockerfile
    compose = yaml.safe_load((REPO_ROOT / "deploy/compose.yaml").read_text())
    web = " ".join(compose["services"]["web"]["command"])
    assert web.endswith("exec " + " ".join(PRODUCTION_COMMAND))
    unit = (REPO_ROOT / "deploy/systemd/inferboard-web.service").read_text()
    [start] = [line for line in unit.splitlines() if line.startswith("ExecStart=")]
    binary, *args = shlex.split(start.removeprefix("ExecStart="))
    assert binary == "/opt/inferboard/venv/bin/gunicorn" and args == PRODUCTION_COMMAND[1:]


def _answers(url: str, process: subprocess.Popen[bytes]) -> bool:
    if process.poll() is not None:
        raise AssertionError(f"the production server exited with code {process.returncode}")
    with contextlib.suppress(httpx.HTTPError):
        return httpx.get(url + "/healthz", headers=PROXIED, timeout=5).status_code == 200
    return False


@contextlib.contextmanager
def production_server(venv: Venv) -> Iterator[str]:
    port = free_port()
    env = venv.env(**production_env(), INFERBOARD_BIND=f"127.0.0.1:{port}")
    # Run from the checkout, as the systemd unit's WorkingDirectory and the image's /app do.
    process = subprocess.Popen(
        [str(venv.bin / PRODUCTION_COMMAND[0]), *PRODUCTION_COMMAND[1:]],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_for(lambda: _answers(url, process), 120, "the production server's /healthz")
        except AssertionError as exc:
            stop(process)
            err = process.stderr.read().decode(errors="replace") if process.stderr else ""
            pytest.fail(f"{exc}:\n{err[-3000:]}")
        yield url
    finally:
        stop(process)
        if process.stderr:
            process.stderr.close()


@pytest.fixture(scope="module")
def server(server_venv: Venv) -> Iterator[str]:
    with production_server(server_venv) as url:
        yield url


def test_the_server_install_serves_healthz_under_the_production_command(server):
    answer = httpx.get(server + "/healthz", headers=PROXIED, timeout=30)
    assert (answer.status_code, answer.text) == (200, "ok")
    # Production settings are on: plain http is sent to https.
    plain = httpx.get(server + "/healthz", headers={"Host": HOST}, timeout=30)
    assert plain.status_code == 301 and plain.headers["location"].startswith("https://")


def test_slow_body_senders_do_not_stall_healthz(server):
    """More clients than the old setup had workers, each trickling a body one byte at a time."""
    port = int(server.rsplit(":", 1)[1])
    length = 1000
    head = (
        f"POST /api/v1/runs HTTP/1.1\r\nHost: {HOST}\r\nX-Forwarded-Proto: https\r\n"
        f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n{{"
    ).encode()
    senders = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(12)]
    done = threading.Event()

    def trickle() -> None:
        # One byte per second to each, for at most a minute: it stops by itself.
        for _ in range(60):
            if done.wait(1):
                return
            for sock in senders:
                with contextlib.suppress(OSError):
                    sock.sendall(b" ")

    for sock in senders:
        sock.sendall(head)
    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        for _ in range(3):
            answer = httpx.get(server + "/healthz", headers=PROXIED, timeout=30)
            assert answer.status_code == 200
        # The slow requests were in flight the whole time: none has been answered yet.
        for sock in senders:
            sock.setblocking(False)
            with pytest.raises(BlockingIOError):
                sock.recv(1)
    finally:
        done.set()
        thread.join()
        for sock in senders:
            sock.close()


def test_a_body_over_the_limit_is_refused_before_it_is_read(server):
    # API_MAX_BODY_BYTES from env.example; the body itself is never sent.
    limit = int(production_env()["API_MAX_BODY_BYTES"])
    port = int(server.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(
            f"POST /api/v1/runs HTTP/1.1\r\nHost: {HOST}\r\nX-Forwarded-Proto: https\r\n"
            f"Content-Length: {limit + 1}\r\n\r\n".encode()
        )
        status_line = sock.makefile("rb").readline()
    assert status_line.split()[1] == b"413"
