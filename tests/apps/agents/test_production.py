"""/mcp/ under the production command (gunicorn managing uvicorn workers, ASGI, DEBUG off): the
same view answers there as under the run command's development server."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from mcp import Client

from tests.apps.agents.conftest import tool, with_client

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_production_command_serves_the_tools_and_their_writes(
    production_server, issued, document
):
    site = production_server()

    async def use(client: Client) -> tuple[list[str], Any, Any]:
        names = [t.name for t in (await client.list_tools()).tools]
        stored = await tool(client, "submit_run", {"document": document})
        assert stored[0] is False, stored
        read = await tool(client, "run", {"run_id": stored[1]["id"]})
        return names, stored[1], read

    names, stored, (is_error, read) = with_client(site, use, issued.plaintext)
    assert {"answer", "board", "run", "search_runs", "costs", "submit_run"} <= set(names)
    assert stored["created"] is True and is_error is False
    assert read["run"]["id"] == stored["id"]
    assert read["citation"]["permalink"] == f"{site}/runs/{stored['id']}/"
    assert httpx.get(f"{site}/mcp/", timeout=30).status_code == 405
    assert httpx.get(f"{site}/llms.txt", timeout=30).text.startswith("# inferboard")
