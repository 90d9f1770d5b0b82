"""`manage.py mcp`, the MCP server over stdio, as an assistant starts it: JSON-RPC a line at a
time on stdin and stdout, and the end of its input ends it cleanly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from typing import Any

import pytest
from django.conf import settings

from apps.accounts.services import organization_get_or_create, token_create, token_revoke
from apps.runs.services import run_ingest
from tests.factories import document
from tests.production import suite_database_url
from workers.testing.processes import REPO_ROOT, stop

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "a test", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


class Stdio:
    """The command as a child process; one JSON-RPC message a line each way."""

    def __init__(self, token: str = "") -> None:
        env = {
            **os.environ,
            "DATABASE_URL": suite_database_url(),
            "REDIS_URL": settings.REDIS_URL or "redis://127.0.0.1:6379/15",
        }
        env.pop("INFERBOARD_TOKEN", None)
        if token:
            env["INFERBOARD_TOKEN"] = token
        # Its log goes to a file: a pipe nobody reads would stall it once full.
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "mcp"],
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
        )

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def receive(self, timeout_s: float = 120) -> dict[str, Any]:
        """The next line of stdout, which must be a JSON-RPC message (nothing else may be)."""
        assert self.process.stdout is not None
        line: list[bytes] = []
        reader = threading.Thread(target=lambda: line.append(self.process.stdout.readline()))
        reader.start()
        reader.join(timeout_s)
        assert line and line[0], f"no answer; stderr: {self.stderr()[-3000:]}"
        return json.loads(line[0])

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        self.send(message)
        answer = self.receive()
        assert answer["id"] == message["id"], answer
        return answer

    def end_of_input(self, timeout_s: float = 60) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout_s)

    def stderr(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def close(self) -> None:
        stop(self.process)
        self.log.close()


def _call(stdio: Stdio, id_: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    request = {"jsonrpc": "2.0", "id": id_, "method": "tools/call"}
    answer = stdio.ask({**request, "params": {"name": name, "arguments": arguments}})
    return answer["result"]


@pytest.mark.django_db
def test_it_answers_initialize_and_tools_list_and_exits_cleanly_at_end_of_input():
    stdio = Stdio()
    try:
        initialized = stdio.ask(INITIALIZE)["result"]
        assert initialized["serverInfo"]["name"] == "inferboard"
        assert "tools" in initialized["capabilities"]
        stdio.send(INITIALIZED)
        listed = stdio.ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})["result"]
        names = {tool["name"] for tool in listed["tools"]}
        assert {"answer", "board", "run", "search_runs", "costs", "submit_run"} <= names
        assert stdio.end_of_input() == 0
    finally:
        stdio.close()


@pytest.mark.django_db(transaction=True)
def test_a_token_sees_its_organizations_runs_until_it_is_revoked():
    owner = organization_get_or_create(slug="stdio-owner")
    private = run_ingest(document=document(), org=owner, is_public=False).run
    issued = token_create(org=owner, name="assistant")
    stdio = Stdio(issued.plaintext)
    try:
        stdio.ask(INITIALIZE)
        stdio.send(INITIALIZED)
        read = _call(stdio, 2, "run", {"run_id": private.pk})
        assert read["isError"] is False and read["structuredContent"]["run"]["id"] == private.pk
        token_revoke(token=issued.token)
        # Checked on every call, as the API checks it: revoked is refused, not anonymous.
        refused = _call(stdio, 3, "run", {"run_id": private.pk})
        assert refused["isError"] is True
        assert refused["structuredContent"] == {"status": 401, "detail": "unknown or revoked token"}
        assert stdio.end_of_input() == 0
    finally:
        stdio.close()


@pytest.mark.django_db
def test_an_unknown_token_stops_it_before_it_serves():
    stdio = Stdio("ib_not-a-token")
    try:
        assert stdio.end_of_input() != 0
        assert "INFERBOARD_TOKEN: unknown or revoked token" in stdio.stderr()
    finally:
        stdio.close()
