"""`inferboard-worker agent` as a real process against a live server: it takes only its own
organization's jobs, over HTTP, with nothing but that organization's token."""

import subprocess
import sys

import httpx
import pytest

from apps.accounts.services import organization_get_or_create, token_create
from apps.catalog.services import presets_ensure
from apps.jobs.models import Job
from apps.runs.models import Run
from tests.apps.jobs.conftest import DEPLOYMENT_FACTS
from workers.testing.processes import REPO_ROOT, fault_server, stop

pytestmark = pytest.mark.django_db(transaction=True)


def api(base: str, token: str, method: str, path: str, **kwargs) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.request(method, f"{base}/api/v1{path}", headers=headers, timeout=60, **kwargs)


def test_an_agent_runs_its_organizations_job_and_no_other_organization_can_claim_it(
    live_server, org, issued
):
    presets_ensure()
    base, token = live_server.url, issued.plaintext
    rival = token_create(org=organization_get_or_create(slug="rival")).plaintext
    pool = api(base, token, "POST", "/pools", json={"name": "acme-own"})
    assert pool.status_code == 201, pool.text
    pool_name = pool.json()["name"]
    # A pool name has one owner (issue 45): the rival cannot claim the same one.
    assert api(base, rival, "POST", "/pools", json={"name": "acme-own"}).status_code == 409

    with fault_server("--ttft-ms", "5", "--itl-ms", "1") as url:
        endpoint = api(
            base, token, "POST", "/endpoints",
            json={"name": "own-host", "url": url, "pool": pool_name, "simulated": True,
                  "served_model": "demo-model", **DEPLOYMENT_FACTS},
        )  # fmt: skip
        assert endpoint.status_code == 201, endpoint.text
        queued = api(
            base, token, "POST", f"/endpoints/{endpoint.json()['id']}/runs",
            json={"scenario": "single-stream", "concurrency": [1], "requests": 4},
        )  # fmt: skip
        assert queued.status_code == 202, queued.text
        job_id = queued.json()["id"]
        # Another organization's agent has no pool of that name: it cannot reach the job.
        claim = api(base, rival, "POST", "/agent/claim", params={"pool": pool_name, "wait": 0})
        assert claim.status_code == 404
        assert Job.objects.get(pk=job_id).worker == ""

        agent = subprocess.Popen(
            [sys.executable, "-m", "workers.cli", "agent", "--server", base, "--token", token,
             "--pool", pool_name, "--wait", "5", "--once", "--name", "agent-under-test"],
            cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            output, _ = agent.communicate(timeout=300)
        finally:
            stop(agent)
    assert agent.returncode == 0, output.decode()[-3000:]
    job = Job.objects.get(pk=job_id)
    assert job.status == Job.Status.SUCCEEDED, (job.error, output.decode()[-3000:])
    assert job.worker == "agent-under-test"
    run = Run.objects.get(pk=job.run_id)
    assert run.org == org and run.idempotency_key == job.idempotency_key
    # Bound to its job by the secret its spec carried, and told apart from the service's fleet.
    assert (run.origin, run.origin_host) == ("scheduled", "org_host")


def test_a_rival_token_is_refused_a_pool_that_is_not_its_own(live_server, org, issued):
    from apps.jobs.services import pool_create

    pool = pool_create(org=org, name="acme-own")
    rival = token_create(org=organization_get_or_create(slug="rival")).plaintext
    agent = subprocess.run(
        [sys.executable, "-m", "workers.cli", "agent", "--server", live_server.url,
         "--token", rival, "--pool", pool.name, "--once"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert agent.returncode == 2 and "404" in agent.stderr


def test_a_claim_on_an_empty_pool_answers_204_and_offers_nothing(client, org, issued):
    from apps.jobs.services import pool_create

    pool = pool_create(org=org, name="acme-own")
    auth = {"HTTP_AUTHORIZATION": f"Bearer {issued.plaintext}"}
    response = client.post(f"/api/v1/agent/claim?pool={pool.name}&wait=0", **auth)
    assert response.status_code == 204
    unknown = client.post("/api/v1/agent/claim?pool=pool.nobody&wait=0", **auth)
    assert unknown.status_code == 404 and unknown.json()["detail"][0]["path"] == "pool"
