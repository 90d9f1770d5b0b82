"""/mcp/ on the site started as the run command starts it (a real server process on loopback),
talked to with the SDK's own client: the tools listed, the answer equal to the REST API's for
the same question, and submit_run refused without a token and stored with one."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from django.core.management import call_command
from mcp import Client

from tests.apps.agents.conftest import tool, with_client

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = {"model": "DeepSeek-R1-0528", "scenario": "8k-1k", "a": "MI355X", "b": "B200"}


def test_the_run_commands_site_lists_the_tools_and_answers_as_the_api_does(run_command_site):
    call_command("loadreference", verbosity=0)  # the shipped data, InferenceX's rows included
    # The question as the API takes it with its defaults, and the headline's (FP4, a floor).
    headline = {**QUESTION, "precision": "fp4", "interactivity_min": 30}

    async def use(client: Client) -> tuple[list, list]:
        listed = await client.list_tools()
        answers = [await tool(client, "answer", asked) for asked in (QUESTION, headline)]
        return listed.tools, answers

    tools, answers = with_client(run_command_site, use)
    assert {"answer", "board", "run", "search_runs", "costs", "submit_run"} <= {
        t.name for t in tools
    }
    assert all(t.output_schema and t.input_schema["type"] == "object" for t in tools)
    for asked, (is_error, result) in zip((QUESTION, headline), answers, strict=True):
        assert is_error is False, result
        api = httpx.get(f"{run_command_site}/api/v1/compare/answer", params=asked, timeout=120)
        assert api.status_code == 200
        # The same question, the same figures: the API's body, field for field.
        assert result["answer"] == api.json()
        # Cited: each run whose figures the answer states (a side's point, the upper point of
        # an interpolated reading, or its nearest point where none meets), each once.
        points = [
            point
            for side in ("a", "b")
            for key in ("point", "upper", "nearest")
            if (point := result["answer"][side][key]) is not None
        ]
        origins = {point["run_id"]: point["origin"] for point in points}
        cited = result["citation"]
        assert [f["run_id"] for f in cited["figures"]] == list(origins)
        assert {f["run_id"]: f["origin"] for f in cited["figures"]} == origins
        assert cited["as_of"] == max(f["measured_at"] for f in cited["figures"])
        assert cited["api"].startswith(f"{run_command_site}/api/v1/compare/answer?")
        assert httpx.get(cited["api"], timeout=120).json() == api.json()

    # The headline question's permalink opens the answer page on the same two points.
    cited = answers[1][1]["citation"]
    assert cited["permalink"].startswith(f"{run_command_site}/answer/?")
    page = httpx.get(cited["permalink"], timeout=120).text
    sides = [answers[1][1]["answer"][side] for side in ("a", "b")]
    assert any(side["meets"] for side in sides)
    for shown in sides:
        if shown["meets"]:
            assert f'href="/runs/{shown["point"]["run_id"]}/"' in page
            assert f"{shown['tok_s_per_gpu']:.1f}" in page


def test_submit_run_is_refused_without_a_token_and_stored_with_one(
    run_command_site, issued, document
):
    async def anonymous(client: Client) -> tuple[bool, Any]:
        return await tool(client, "submit_run", {"document": document})

    is_error, refused = with_client(run_command_site, anonymous)
    assert is_error is True and refused["status"] == 401
    api = httpx.post(f"{run_command_site}/api/v1/runs", json=document, timeout=60)
    assert {"status": api.status_code, **api.json()} == refused

    async def owner(client: Client) -> tuple[Any, Any]:
        stored = await tool(client, "submit_run", {"document": document, "visibility": "private"})
        assert stored[0] is False, stored
        read = await tool(client, "run", {"run_id": stored[1]["id"]})
        return stored[1], read

    stored, (is_error, read) = with_client(run_command_site, owner, issued.plaintext)
    assert stored["created"] is True and stored["visibility"] == "private"
    assert is_error is False and read["run"]["id"] == stored["id"]
    assert re.fullmatch(rf"{run_command_site}/runs/{stored['id']}/", read["citation"]["permalink"])
    assert read["citation"]["figures"][0]["origin"] == "submitted"

    # Private: another caller without the token does not find it.
    async def stranger(client: Client) -> tuple[bool, Any]:
        return await tool(client, "run", {"run_id": stored["id"]})

    is_error, missing = with_client(run_command_site, stranger)
    assert is_error is True and missing["status"] == 404
