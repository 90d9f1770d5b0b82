"""Tenancy through the MCP server, over HTTP as an assistant calls it: an anonymous caller and
another organization's token never see a private run, endpoint or model name through any tool
or resource; the owning organization's token does (so the check can fail).

A question naming a private run's model, scenario or id must get the answer the same question
gets about names that do not exist (its own words echoed back, nothing more): that tells the
caller nothing. Every other answer must not contain the private names at all."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client

from apps.accounts.services import organization_get_or_create, token_create
from tests.apps.agents.conftest import tool, with_client
from tests.apps.tenancy import SECRET, leaks, mcp_questions, private_endpoint, private_run
from tests.factories import document
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db(transaction=True)

ABSENT = "nothere1"  # names nobody stored
ABSENT_RUN = 2**31  # an id no run has


def _asked(site: str, run_id: int, token: str = "") -> tuple[dict[str, list[Any]], list[Any]]:
    """Every tool's answers, for the private names and for absent ones, then the tool and
    resource lists and each resource."""

    async def use(client: Client) -> tuple[dict[str, list[Any]], list[Any]]:
        listed = await client.list_tools()
        private, absent = mcp_questions(run_id), mcp_questions(ABSENT_RUN, ABSENT)
        assert {t.name for t in listed.tools} == set(private), "a tool without a case here"
        answers: dict[str, list[Any]] = {}
        for name in private:
            for secret, nothing in zip(private[name], absent[name], strict=True):
                asked = [secret] if name == "submit_run" else [secret, nothing]
                for arguments in asked:
                    answers.setdefault(name, []).append(await tool(client, name, arguments))
        seen: list[Any] = [t.model_dump(mode="json") for t in listed.tools]
        for found in (await client.list_resources()).resources:
            seen.append((await client.read_resource(found.uri)).model_dump(mode="json"))
        return answers, seen

    return with_client(site, use, token)


def _tells_nothing(answers: dict[str, list[Any]], seen: list[Any]) -> None:
    for name, given in answers.items():
        if name == "submit_run":
            assert not leaks(json.dumps(given))
            continue
        about_private, about_absent = given[0::2], given[1::2]
        for private, absent in zip(about_private, about_absent, strict=True):
            assert not leaks(json.dumps(absent)), name
            echoed = json.dumps(absent).replace(ABSENT, SECRET)
            assert json.dumps(private) == echoed, name
    assert not leaks(json.dumps(seen))


def test_no_tool_shows_another_organizations_private_run_endpoint_or_names(run_command_site):
    owner = organization_get_or_create(slug="hush")
    hidden = private_run(owner)
    private_endpoint(owner, hidden)
    ingest_reviewed(document=document(), org=None, is_public=True)  # so answers are not all empty
    other = organization_get_or_create(slug="elsewhere")

    _tells_nothing(*_asked(run_command_site, hidden.pk))
    _tells_nothing(*_asked(run_command_site, hidden.pk, token_create(org=other).plaintext))

    # The owner's token sees its run and its names through the same tools.
    answers, _ = _asked(run_command_site, hidden.pk, token_create(org=owner).plaintext)
    read, found = answers["run"][0], answers["search_runs"][4]
    assert read[0] is False and leaks(json.dumps(read))
    assert [item["id"] for item in found[1]["items"]] == [hidden.pk]
