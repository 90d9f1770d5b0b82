"""Jobs, schedules and endpoints under hostile input: bounded options, URLs refused at
registration, nothing half-stored, no job left queued forever."""

import json

import pytest

from apps.catalog.models import Deployment, Model
from apps.jobs.models import Endpoint, Job
from apps.jobs.services import job_cancel, job_retry
from tests.apps.jobs.conftest import DEPLOYMENT_FACTS

pytestmark = pytest.mark.django_db


def post(client, url, body, auth):
    return client.post(url, data=json.dumps(body), content_type="application/json", **auth)


def paths(response) -> dict[str, str]:
    return {item["path"]: item["message"] for item in response.json()["detail"]}


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"requests": 2**63}, "requests"),
        ({"duration_s": 1e308}, "duration_s"),
        ({"concurrency": [4096] * 32}, "concurrency"),
        ({"concurrency": list(range(1, 40))}, "concurrency"),
        ({"rates": [-1.0]}, "rates"),
        ({"warmup": 10**9}, "warmup"),
    ],
)
def test_job_options_beyond_their_bounds_get_422_naming_the_option(
    client, auth, endpoint, scenario, options, field
):
    body = {"scenario": scenario.slug, **options}
    response = post(client, f"/api/v1/endpoints/{endpoint.pk}/runs", body, auth)
    assert response.status_code == 422, response.content
    assert field in paths(response)
    assert Job.objects.count() == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"interval_minutes": 4}, "interval_minutes"),
        ({"interval_minutes": 2**40}, "interval_minutes"),
        ({"cron": "* * * * *"}, "cron"),
        ({"cron": "0 0 31 2 *"}, "cron"),
        ({"interval_minutes": 60, "options": {"concurrency": ["x"]}}, "concurrency"),
        ({"interval_minutes": 60, "options": {"bogus": 1}}, "bogus"),
    ],
)
def test_schedules_that_fire_too_often_never_or_with_bad_options_get_422(
    client, auth, endpoint, scenario, body, field
):
    response = post(
        client,
        f"/api/v1/endpoints/{endpoint.pk}/schedules",
        {"scenario": scenario.slug, **body},
        auth,
    )
    assert response.status_code == 422, response.content
    assert field in paths(response)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8791/\r\nX-Injected: 1",
        "http://127.0.0.1:8790#@169.254.169.254",
        "http://127.0.0.1:5432/",
        "http://127.0.0.1:6379/",
        "http://127.0.0.1:8000\\@169.254.169.254/",
    ],
)
def test_urls_that_smuggle_headers_hosts_or_reach_local_services_are_refused_at_once(
    client, auth, broker, url
):
    body = {"name": "x", "url": url, "pool": broker.pool(), **DEPLOYMENT_FACTS}
    response = post(client, "/api/v1/endpoints", body, auth)
    assert response.status_code == 422, response.content
    assert "url" in paths(response)
    assert Endpoint.objects.count() == 0


def test_a_refused_registration_leaves_no_model_or_deployment_behind(client, auth):
    facts = json.loads(json.dumps(DEPLOYMENT_FACTS))
    facts["model"]["name"] = "never-stored/model"
    body = {"name": "x", "url": "http://10.9.9.9:8000/", **facts}
    assert post(client, "/api/v1/endpoints", body, auth).status_code == 422
    too_long_pool = {**body, "url": "http://127.0.0.1:8000/", "pool": "p" * 101}
    assert post(client, "/api/v1/endpoints", too_long_pool, auth).status_code == 422
    assert not Model.objects.filter(name="never-stored/model").exists()
    assert not Deployment.objects.filter(model__name="never-stored/model").exists()


def test_retrying_a_job_whose_endpoint_left_the_allowlist_leaves_it_cancelled(
    endpoint, scenario, settings
):
    from apps.jobs.allowlist import EndpointRefused
    from apps.jobs.services import job_enqueue

    job = job_cancel(job=job_enqueue(endpoint=endpoint, scenario=scenario))
    settings.ENDPOINT_ALLOWLIST = ["10.0.0.0/8"]
    with pytest.raises(EndpointRefused):
        job_retry(job=job)
    job.refresh_from_db()
    assert (job.status, job.attempt) == (Job.Status.CANCELLED, 1)
