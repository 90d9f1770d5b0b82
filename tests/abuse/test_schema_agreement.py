"""The places issue 53's schemathesis pass found the OpenAPI document and the API disagreeing,
each now stated by the document and refused by the API with a 422 naming the field, and
nothing stored (the fuzz test, tests/abuse/test_openapi_fuzz.py, checks the rest)."""

from __future__ import annotations

import json

import pytest

from apps.catalog.models import Scenario

pytestmark = pytest.mark.django_db


@pytest.fixture
def openapi(client) -> dict:
    return client.get("/api/v1/openapi.json").json()


def component(openapi: dict, name: str) -> dict:
    return openapi["components"]["schemas"][name]["properties"]


def query_parameter(openapi: dict, path: str, name: str) -> dict:
    parameters = openapi["paths"][path]["get"]["parameters"]
    schema = next(p for p in parameters if p["name"] == name)["schema"]
    return next((s for s in schema.get("anyOf", [schema]) if s.get("type") != "null"), schema)


def post(client, path: str, body: dict, auth: dict | None = None):
    return client.post(path, json.dumps(body), content_type="application/json", **(auth or {}))


def refused_field(response) -> str:
    assert response.status_code == 422, response.content
    return response.json()["detail"][0]["path"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"name": ""}, "name"),
        ({"duration_s": 5e-324}, "duration_s"),
        ({"duration_s": 0.01}, "duration_s"),
        ({"input_tokens": True}, "input_tokens"),
    ],
)
def test_a_scenario_with_an_empty_name_or_a_vanishing_duration_is_refused(
    client, auth, openapi, change, field
):
    scenario = {"name": "forged", "input_tokens": 1024, "output_tokens": 1024, **change}
    assert refused_field(post(client, "/api/v1/scenarios", scenario, auth)) == field
    assert not Scenario.objects.filter(name__in=["", "forged"]).exists()
    stated = openapi["components"]["schemas"]
    scenario_schema = next(s for n, s in stated.items() if n.startswith("Scenario"))
    properties = scenario_schema["properties"]
    name = next(s for s in properties["name"]["anyOf"] if s["type"] == "string")
    duration = next(s for s in properties["duration_s"]["anyOf"] if s["type"] == "number")
    assert name["minLength"] == 1 and duration["minimum"] == 0.1


@pytest.mark.parametrize("price", [False, True, "1.5"])
def test_a_price_is_a_number_not_a_boolean(client, price):
    body = {
        "points": [{"tok_per_s_per_gpu": 100.0, "metrics": {}, "success_rate": 1.0}],
        "slo": {},
        "usd_per_gpu_hour": price,
    }
    assert refused_field(post(client, "/api/v1/costs/slo", body)) == "usd_per_gpu_hour"


@pytest.mark.parametrize(
    ("path", "query", "field", "bound"),
    [
        ("/api/v1/costs/gpu-hour", "gpu_purchase_usd=0&kw_per_gpu=0&usd_per_kwh=0&"
         "depreciation_years=0", "depreciation_years", ("minimum", 0.1)),
        ("/api/v1/costs/mtok", "usd_per_gpu_hour=-1e-70&tok_per_s=1000", "usd_per_gpu_hour",
         ("minimum", 0)),
        ("/api/v1/costs/mtok", "usd_per_gpu_hour=2&tok_per_s=5e-324", "tok_per_s",
         ("minimum", 1e-6)),
        ("/api/v1/accuracy/compare", "a=1&b=2&margin=-1", "margin", ("minimum", 0)),
        ("/api/v1/compare/answer", "a=&b=B200&model=x&scenario=y", "a", ("minLength", 1)),
    ],
)  # fmt: skip
def test_a_bound_the_api_keeps_is_one_the_document_states(
    client, openapi, path, query, field, bound
):
    assert refused_field(client.get(f"{path}?{query}")) == field
    keyword, value = bound
    assert query_parameter(openapi, path, field)[keyword] == value


def test_text_with_a_nul_character_is_refused_naming_it_and_the_document_says_so(client, openapi):
    body = {
        "points": [{"label": "a\x00b", "tok_per_s_per_gpu": 100.0, "metrics": {}}],
        "slo": {},
        "usd_per_gpu_hour": 2.0,
    }
    assert refused_field(post(client, "/api/v1/costs/slo", body)) == "points[0].label"
    assert component(openapi, "PointIn")["label"]["pattern"] == "^[^\\x00]*$"


def test_a_percentile_the_api_takes_is_one_the_document_names(client, openapi):
    slo = component(openapi, "SloBodyIn")["ttft_percentile"]
    assert "pattern" in slo
    point = {"tok_per_s_per_gpu": 100.0, "metrics": {"ttft_s.p99": 1.0}, "success_rate": 1.0}
    for spelled, status in (("p99", 200), ("99.0", 200), ("P99.9", 200), (" p99", 422)):
        body = {"points": [point], "slo": {"ttft_s_max": 2, "ttft_percentile": spelled}}
        answer = post(client, "/api/v1/costs/slo", {**body, "usd_per_gpu_hour": 2.0})
        assert answer.status_code == status, (spelled, answer.content)


def test_the_document_states_bounds_in_json_schemas_words(openapi):
    """pydantic writes a bound that follows a validator as "ge"/"le", which no OpenAPI tool
    reads: every bound is a minimum or maximum (apps/api_params.py orders them first)."""
    text = json.dumps(openapi)
    for word in ('"ge":', '"le":', '"gt":', '"lt":'):
        assert word not in text
