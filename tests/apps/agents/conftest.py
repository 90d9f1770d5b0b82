"""What the MCP tests share: a JSON-RPC call through the site's /mcp/ view (Django's test
client, inside the test's transaction), and the site started as the run command serves it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.production import suite_database_url
from workers.testing.processes import REPO_ROOT, free_port, stop, wait_until_healthy

# What the SDK's client sends with every POST (streamable HTTP, handshake era).
MCP_HEADERS = {
    "HTTP_ACCEPT": "application/json, text/event-stream",
    "HTTP_MCP_PROTOCOL_VERSION": "2025-06-18",
}


def rpc(client, method: str, params: dict[str, Any], token: str = "") -> Any:
    """One JSON-RPC request to /mcp/ (stateless: no initialize needed); its response."""
    headers = dict(MCP_HEADERS)
    if token:
        headers["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    answered = client.post("/mcp/", json.dumps(body), content_type="application/json", **headers)
    assert answered.status_code == 200, answered.content
    return answered.json()


def call_tool(client, name: str, arguments: dict[str, Any], token: str = "") -> dict[str, Any]:
    """A tool's result: {"isError": ..., "structuredContent": ..., "content": ...}."""
    response = rpc(client, "tools/call", {"name": name, "arguments": arguments}, token)
    assert "result" in response, response
    return response["result"]


@pytest.fixture(scope="module")
def run_command_site(django_db_setup, django_db_blocker) -> Iterator[str]:
    """The site as `scripts/run` serves it (manage.py demo ends in `runserver` without the
    reloader: Django's development server, WSGI, DEBUG on), on the test database; tests that
    use it store their data committed (transaction=True) so the server sees it."""
    from django.conf import settings

    with django_db_blocker.unblock():
        database = suite_database_url()
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database,
        "REDIS_URL": settings.REDIS_URL or "redis://127.0.0.1:6379/15",
        "CELERY_BROKER_URL": settings.REDIS_URL or "redis://127.0.0.1:6379/15",
    }
    env.pop("DEBUG", None)
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, server, 120, path="/healthz")
        yield url
    finally:
        stop(server)


def with_client[T](site: str, use: Callable[[Client], Awaitable[T]], token: str = "") -> T:
    """Runs `use(client)` with the SDK's client connected to the site's /mcp/ (with a Bearer
    token if given), as an assistant configured with the URL connects."""

    async def connected() -> T:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(120)) as http,
            Client(streamable_http_client(f"{site}/mcp/", http_client=http)) as client,
        ):
            return await use(client)

    return asyncio.run(connected())


async def tool(client: Client, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    """A tool call through the SDK's client: (is it an error, its structured content)."""
    result = await client.call_tool(name, arguments)
    return bool(result.is_error), result.structured_content
