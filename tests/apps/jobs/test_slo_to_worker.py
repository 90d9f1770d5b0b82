import pytest

from apps.catalog.services import scenario_create
from apps.jobs.specs import _scenario_doc
from apps.runs.summary import scenario_slo
from workers import result_facts

pytestmark = pytest.mark.django_db


def test_a_job_hands_the_worker_the_scenarios_whole_slo():
    scenario = scenario_create(
        scenario=result_facts.Scenario(
            input_tokens=321,
            output_tokens=12,
            slo={
                "ttft_ms": 500,
                "bounds": [{"metric": "tpot", "percentile": "p99.9", "limit": 40}],
                "min_success_rate": 0.95,
            },
        )
    )
    load = {"warmup": 0, "duration_s": None, "requests": 10}
    sent = result_facts.Scenario.model_validate(_scenario_doc(scenario, load))
    assert sent.slo.rule() == scenario_slo(scenario)
    assert [b.describe() for b in sent.slo.rule().bounds] == [
        "TTFT p99 ≤ 500 ms",
        "TPOT p99.9 ≤ 40 ms",
    ]


def test_the_scenarios_api_shows_the_whole_slo(client):
    scenario_create(
        scenario=result_facts.Scenario(
            input_tokens=654,
            output_tokens=32,
            slo={"bounds": [{"metric": "e2el", "percentile": "p90", "limit": 3, "unit": "s"}]},
        )
    )
    (row,) = [s for s in client.get("/api/v1/scenarios").json() if s["input_tokens"] == 654]
    assert row["slo_bounds"] == [{"metric": "e2el", "percentile": "p90", "limit": 3, "unit": "s"}]
    assert row["slo_min_success_rate"] == 0.99
