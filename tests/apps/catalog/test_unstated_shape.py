"""A length spread or prefix-cache hit rate a run does not state is "not stated", never 0."""

import copy
import json

import pytest

from apps.catalog.models import Scenario
from apps.catalog.services import scenario_get_or_create
from apps.runs.services import run_ingest
from tests.conftest import example
from workers import result_facts

pytestmark = pytest.mark.django_db


def _document(key: str, **scenario) -> dict:
    document = copy.deepcopy(example())
    document["idempotency_key"] = key
    document["scenario"] = {"input_tokens": 2048, "output_tokens": 128, **scenario}
    return document


def test_a_run_that_does_not_state_them_does_not_join_the_scenario_that_states_zero():
    stated = run_ingest(
        document=_document("states-0", length_spread=0, prefix_cache_hit_rate=0), org=None
    ).run
    unstated = run_ingest(document=_document("states-nothing"), org=None).run
    assert stated.scenario_id != unstated.scenario_id
    assert (stated.scenario.length_spread, stated.scenario.prefix_cache_hit_rate) == (0, 0)
    assert unstated.scenario.length_spread is None
    assert unstated.scenario.prefix_cache_hit_rate is None
    # The name is what pages print: it says which facts the source left out.
    assert unstated.scenario.name.endswith("length spread, prefix cache not stated")
    assert "not stated" not in stated.scenario.name
    # A second unstated run joins the first, not the stated one.
    again = run_ingest(document=_document("states-nothing-again"), org=None).run
    assert again.scenario_id == unstated.scenario_id


def test_only_the_fact_left_out_is_unstated():
    scenario, _ = scenario_get_or_create(
        scenario=result_facts.Scenario(input_tokens=64, output_tokens=8, length_spread=0.25)
    )
    assert (scenario.length_spread, scenario.prefix_cache_hit_rate) == (0.25, None)
    assert scenario.shape_key == "64/8/spread=0.25/prefix=?/random/closed"
    assert scenario.name == "64 in / 8 out / prefix cache not stated"


def test_an_old_document_stating_zeros_still_joins_its_existing_scenario():
    # Documents stored before "not stated" existed carry explicit zeros; their shape is unchanged.
    old = Scenario.objects.create(
        slug="old-2048-in-128-out",
        name="2048 in / 128 out",
        shape_key="2048/128/spread=0/prefix=0/random/closed",
        input_tokens=2048,
        output_tokens=128,
    )
    run = run_ingest(
        document=_document("old-document", length_spread=0, prefix_cache_hit_rate=0), org=None
    ).run
    assert run.scenario_id == old.pk


def test_a_document_naming_a_preset_takes_the_preset_values_it_leaves_out():
    document = copy.deepcopy(example())
    del document["scenario"]["prefix_cache_hit_rate"]
    run = run_ingest(document=document, org=None).run
    assert run.scenario.slug == "seed-20k-1k-60"
    assert run.scenario.prefix_cache_hit_rate == 0.6


def test_the_scenarios_api_says_null_for_unstated_and_fills_defaults_for_a_defined_one(
    client, auth
):
    run_ingest(document=_document("api-unstated"), org=None)
    listed = client.get("/api/v1/scenarios").json()
    [unstated] = [s for s in listed if s["name"].endswith("not stated")]
    assert (unstated["length_spread"], unstated["prefix_cache_hit_rate"]) == (None, None)
    # A scenario defined through the API is a workload to run: the load generator's defaults.
    body = json.dumps({"input_tokens": 2048, "output_tokens": 128})
    created = client.post("/api/v1/scenarios", body, "application/json", **auth)
    assert created.status_code == 201
    assert (created.json()["length_spread"], created.json()["prefix_cache_hit_rate"]) == (0, 0)
    assert created.json()["slug"] != unstated["slug"]
