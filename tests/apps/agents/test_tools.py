"""The MCP tools through the site's /mcp/ view (Django's test client): their arguments, their
citations, and errors that are the REST API's for the same input, naming the field."""

import json

import pytest

from apps.accounts.models import ApiToken
from apps.accounts.services import token_create
from apps.agents.server import TOOLS
from tests.apps.agents.conftest import MCP_HEADERS, call_tool, rpc
from tests.factories import document as made_document
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db


def _error(result: dict) -> dict:
    assert result["isError"] is True, result
    # The text an assistant reads is the same JSON as the structured error.
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    return result["structuredContent"]


def _api(response) -> dict:
    return {"status": response.status_code, **response.json()}


def _posted(client, document: dict, token: str = ""):
    """POST /api/v1/runs with the document, as a program would (with the token if given)."""
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
    return client.post("/api/v1/runs", document, content_type="application/json", **auth)


def _to_ms(summary: dict) -> dict:
    """A run summary with its date in the API's precision: the API's JSON encoder writes
    milliseconds (Django's), the tools' pydantic microseconds; the instant is the same."""
    return {**summary, "created_at": summary["created_at"][:23] + "Z"}


def test_tools_list_names_every_registered_tool_with_its_schemas(client):
    listed = rpc(client, "tools/list", {})["result"]["tools"]
    assert [t["name"] for t in listed] == [spec.name for spec in TOOLS]
    for listed_tool in listed:
        assert listed_tool["inputSchema"]["type"] == "object"
        assert "citation" in listed_tool["outputSchema"]["properties"], listed_tool["name"]
        assert listed_tool["description"]
    answer = next(t for t in listed if t["name"] == "answer")
    # The API's question, by the API's names (the shorthand ceiling by its query name too).
    assert {"model", "scenario", "a", "b", "basis", "tier", "ttft_p99_s_max"} <= set(
        answer["inputSchema"]["properties"]
    )
    assert set(answer["inputSchema"]["required"]) == {"model", "scenario", "a", "b"}


def test_arguments_that_break_the_schema_are_refused_naming_each_field(client):
    error = _error(call_tool(client, "answer", {"model": "DeepSeek-R1-0528", "max_gap": 1}))
    assert error["status"] == 422
    paths = {item["path"] for item in error["detail"]}
    assert paths == {"scenario", "a", "b", "max_gap"}
    error = _error(call_tool(client, "run", {"run_id": "seven"}))
    assert [item["path"] for item in error["detail"]] == ["run_id"]
    error = _error(call_tool(client, "costs", {"model": "m", "min_success_pct": 150}))
    assert [item["path"] for item in error["detail"]] == ["min_success_pct"]


def test_the_answer_refuses_a_scenario_as_the_api_does(client):
    question = {"model": "DeepSeek-R1-0528", "scenario": "no-such", "a": "MI355X", "b": "B200"}
    api = client.get("/api/v1/compare/answer", question)
    assert api.status_code == 422
    assert _error(call_tool(client, "answer", question)) == _api(api)


def test_a_run_you_may_not_see_is_not_found_as_on_the_api(client, org):
    private = ingest_reviewed(document=made_document(), org=org, is_public=False).run
    assert _error(call_tool(client, "run", {"run_id": private.pk})) == _api(
        client.get(f"/api/v1/runs/{private.pk}")
    )


def test_submit_run_has_the_apis_scopes_and_errors(client, org, document):
    anonymous = _error(call_tool(client, "submit_run", {"document": document}))
    assert anonymous == _api(_posted(client, document))
    assert anonymous["status"] == 401

    read_only = token_create(org=org, name="reader", scope=ApiToken.Scope.READ).plaintext
    refused = _error(call_tool(client, "submit_run", {"document": document}, read_only))
    assert refused == _api(_posted(client, document, read_only))
    assert refused == {"status": 403, "detail": "this token is read-only"}

    writer = token_create(org=org, name="writer").plaintext
    broken = {**document, "deployment": {**document["deployment"], "gpus": -1}}
    broken.pop("model")
    refused = _error(call_tool(client, "submit_run", {"document": broken}, writer))
    assert refused == _api(_posted(client, broken, writer))
    assert {"model", "deployment.gpus"} <= {item["path"] for item in refused["detail"]}


def test_submit_run_shares_the_tokens_write_limit_with_the_api(client, org, settings):
    settings.RATE_LIMIT_TOKEN_WRITES = "2/60"
    token = token_create(org=org, name="writer").plaintext
    stored = call_tool(client, "submit_run", {"document": made_document()}, token)
    assert stored["isError"] is False and stored["structuredContent"]["created"] is True
    again = call_tool(client, "submit_run", {"document": made_document()}, token)
    assert again["isError"] is False
    # The third write of the minute, whichever way it comes, is the API's 429.
    limited = _error(call_tool(client, "submit_run", {"document": made_document()}, token))
    api = _posted(client, made_document(), token)
    assert api.status_code == 429
    assert limited["status"] == 429 and limited["detail"] == api.json()["detail"]
    assert limited["retry_after"] >= 1


def test_a_stored_run_is_cited_by_its_page_origin_and_date(client, org):
    token = token_create(org=org, name="writer").plaintext
    stored = call_tool(client, "submit_run", {"document": made_document()}, token)
    run_id = stored["structuredContent"]["id"]
    read = call_tool(client, "run", {"run_id": run_id})["structuredContent"]
    assert _to_ms(read["run"]) == client.get(f"/api/v1/runs/{run_id}").json()
    citation = read["citation"]
    assert citation["permalink"] == f"http://testserver/runs/{run_id}/"
    assert citation["api"] == f"http://testserver/api/v1/runs/{run_id}"
    (figure,) = citation["figures"]
    assert figure["run_id"] == run_id and figure["origin"] == "submitted"
    assert citation["origins"] == ["submitted"] and citation["as_of"] == figure["measured_at"]


def test_search_runs_is_the_apis_list_and_says_what_its_page_does_not_narrow(client, org):
    ingest_reviewed(document=made_document(model="GLM 5.2"), org=None, is_public=True)
    ingest_reviewed(document=made_document(model="Other"), org=None, is_public=True)
    found = call_tool(client, "search_runs", {"model": "GLM 5.2", "accelerator": "MI355X"})
    result = found["structuredContent"]
    api = client.get("/api/v1/runs", {"model": "GLM 5.2", "accelerator": "MI355X"}).json()
    assert [_to_ms(item) for item in result["items"]] == api["items"]
    assert result["count"] == api["count"] == 1
    assert result["citation"]["permalink"] == "http://testserver/runs/?accelerator=MI355X"
    assert result["note"] == "the page does not narrow by model"


def test_the_board_refuses_a_value_it_cannot_use_naming_the_field(client):
    ingest_reviewed(document=made_document(), org=None, is_public=True)
    error = _error(call_tool(client, "board", {"sort": "sideways"}))
    assert error["status"] == 422 and [item["path"] for item in error["detail"]] == ["sort"]
    board = call_tool(client, "board", {"model": "GLM 5.2"})["structuredContent"]
    assert board["model"] == "GLM 5.2" and board["rows"]
    assert board["citation"]["permalink"].startswith("http://testserver/?model=GLM+5.2")
    assert [f["run_id"] for f in board["citation"]["figures"]] == [
        row["run_id"] for row in board["rows"]
    ]


def test_costs_is_the_procurement_table_and_refuses_as_it_does(client):
    ingest_reviewed(document=made_document(), org=None, is_public=True)
    asked = {"model": "GLM 5.2", "requests_per_day": 500000, "min_success_pct": 0}
    costs = call_tool(client, "costs", asked)["structuredContent"]
    api = client.get("/api/v1/costs/procurement", asked).json()
    assert costs["rows"] == api["rows"] and costs["state"] == api["state"]
    assert costs["citation"]["permalink"].startswith("http://testserver/costs/?")
    # An own price the page refuses: the API's 422, naming the price's field.
    refused = _error(call_tool(client, "costs", {**asked, "prices": {"MI355X": -1}}))
    api = client.get("/api/v1/costs/procurement", {**asked, "price_MI355X": "-1"})
    assert refused == _api(api) and refused["status"] == 422
    assert [item["path"] for item in refused["detail"]] == ["price_MI355X"]


def test_a_tool_that_fails_answers_500_without_its_traceback(client, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("secret internals at line 42")

    monkeypatch.setattr("apps.agents.tools.run_summaries", broken)
    error = _error(call_tool(client, "search_runs", {}))
    assert error == {"status": 500, "detail": "internal server error"}


def test_resources_are_the_methodology_file_and_the_apis_presets(client):
    listed = rpc(client, "resources/list", {})["result"]["resources"]
    assert {r["uri"] for r in listed} == {
        "inferboard://methodology",
        "inferboard://scenarios/presets",
    }
    read = rpc(client, "resources/read", {"uri": "inferboard://methodology"})["result"]
    from apps.leaderboard.methodology import SOURCE

    assert read["contents"][0]["text"] == SOURCE.read_text(encoding="utf-8")
    read = rpc(client, "resources/read", {"uri": "inferboard://scenarios/presets"})["result"]
    presets = [s for s in client.get("/api/v1/scenarios").json() if s["is_preset"]]
    assert json.loads(read["contents"][0]["text"]) == sorted(presets, key=lambda s: s["slug"])


def test_a_wrong_token_is_refused_not_read_as_anonymous(client):
    answered = client.post(
        "/mcp/",
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}),
        content_type="application/json",
        HTTP_AUTHORIZATION="Bearer ib_not-a-token",
        **MCP_HEADERS,
    )
    assert answered.status_code == 401 and answered["WWW-Authenticate"] == "Bearer"
    assert answered.json()["error"]["message"] == "unknown or revoked token"


def test_only_posts_from_the_sites_own_origin_within_the_body_limit(client, settings):
    assert client.get("/mcp/").status_code == 405
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    other = client.post(
        "/mcp/",
        body,
        content_type="application/json",
        HTTP_ORIGIN="https://evil.example",
        **MCP_HEADERS,
    )
    assert other.status_code == 403
    # Spelled without its slash, as assistants' configurations often do: served, not redirected.
    no_slash = client.post("/mcp", body, content_type="application/json", **MCP_HEADERS)
    assert no_slash.status_code == 200 and no_slash.json()["result"]["tools"]
    settings.API_MAX_BODY_BYTES = 10
    assert (
        client.post("/mcp/", body, content_type="application/json", **MCP_HEADERS).status_code
        == 413
    )
