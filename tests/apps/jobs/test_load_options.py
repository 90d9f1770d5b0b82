"""A job asks for what the CLI's load flags can (arrival process, burstiness, prefix groups,
early stop, client processes ...): checked here on the server, naming the option, and
carried in the spec a worker builds its run from (workers/loadgen/setup.py)."""

import json

import pytest

from apps.jobs import services, specs
from apps.jobs.models import Job
from apps.jobs.specs import JobError
from tests.apps.jobs.test_api import new_endpoint, post  # noqa: F401 - the fixture
from workers.loadgen.load_spec import LoadSpec
from workers.tasks import JobSpec

SETUP = {
    "rates": [2.0, 4.0],
    "arrival": "gamma",
    "burstiness": 0.5,
    "max_concurrency": 16,
    "prefix_groups": 4,
    "early_stop": False,
    "client_cpu_limit": 0.8,
    "client_lag_limit_ms": 25.0,
}


def test_a_job_carries_the_clis_load_options_into_its_spec(endpoint, scenario):
    job = services.job_enqueue(endpoint=endpoint, scenario=scenario, options={**SETUP})
    spec = specs.job_spec(job)
    for name, value in SETUP.items():
        assert spec["load"][name] == value, name
    # What a worker reads back is the same load the CLI's flags would state.
    assert JobSpec.model_validate(spec).load == LoadSpec(**spec["load"])


def test_a_job_that_asks_for_none_of_them_sends_the_message_an_older_worker_reads(
    endpoint, scenario
):
    job = services.job_enqueue(endpoint=endpoint, scenario=scenario, options={"requests": 4})
    load = specs.job_spec(job)["load"]
    assert set(load) == {"concurrency", "rates", "requests", "duration_s", "warmup", "seed"}


def test_several_client_processes_need_a_request_count(endpoint, scenario):
    job = services.job_enqueue(
        endpoint=endpoint, scenario=scenario, options={"processes": 2, "requests": 8}
    )
    assert specs.job_spec(job)["load"]["processes"] == 2
    with pytest.raises(JobError) as refused:
        services.job_enqueue(
            endpoint=endpoint, scenario=scenario, options={"processes": 2, "duration_s": 5}
        )
    assert refused.value.field == "processes"


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"arrival": "uniform"}, "arrival"),
        ({"burstiness": 0}, "burstiness"),
        ({"burstiness": "high"}, "burstiness"),
        ({"max_concurrency": 0}, "max_concurrency"),
        ({"prefix_groups": 10**6}, "prefix_groups"),
        ({"prefix_groups": 1.5}, "prefix_groups"),
        ({"early_stop": "no"}, "early_stop"),
        ({"processes": 10**3, "requests": 8}, "processes"),
        ({"client_lag_limit_ms": -1}, "client_lag_limit_ms"),
        ({"processes": 2, "members": 2, "requests": 8}, "processes"),
    ],
)
def test_a_load_option_out_of_bounds_is_refused_naming_it(endpoint, scenario, options, field):
    with pytest.raises(JobError) as refused:
        services.job_enqueue(endpoint=endpoint, scenario=scenario, options=options)
    assert refused.value.field == field
    assert not Job.objects.exists()


def test_an_accuracy_job_refuses_a_load_option(endpoint):
    with pytest.raises(JobError) as refused:
        services.job_enqueue(
            endpoint=endpoint,
            kind="accuracy",
            protocol="gsm8k-5shot-v1",
            options={"prefix_groups": 2},
        )
    assert refused.value.field == "prefix_groups"


def test_run_now_takes_the_load_options_and_names_a_bad_one(new_endpoint, client, auth):  # noqa: F811
    from apps.catalog.services import scenario_create
    from workers import result_facts

    scenario = scenario_create(
        scenario=result_facts.Scenario(
            name="api-load", input_tokens=32, output_tokens=8, length_spread=0,
            prefix_cache_hit_rate=0.5, dataset="jobs-test",
        )
    )  # fmt: skip
    url = f"/api/v1/endpoints/{new_endpoint().json()['id']}/runs"
    accepted = post(client, url, {"scenario": scenario.slug, "prefix_groups": 3}, auth)
    assert accepted.status_code == 202, accepted.content
    assert specs.job_spec(Job.objects.get())["load"]["prefix_groups"] == 3

    refused = post(client, url, {"scenario": scenario.slug, "burstiness": -1}, auth)
    assert refused.status_code == 422, refused.content
    assert "burstiness" in json.dumps(refused.json())
    assert Job.objects.count() == 1
