import base64
import json
import logging
from dataclasses import fields

import pytest
from django.db import connection

from apps.jobs.models import Endpoint, Job
from tests.apps.jobs.conftest import DEPLOYMENT_FACTS
from workers.submit import EVENTS, EventAnswer

KEY = "sk-secret-endpoint-key-123"


def post(client, url, body, auth):
    return client.post(url, data=json.dumps(body), content_type="application/json", **auth)


def queued_spec(broker, queue: str) -> tuple[dict, dict]:
    """The task message the broker holds: (headers, job spec)."""
    (raw,) = broker.messages(queue)
    message = json.loads(raw)
    args, _kwargs, _embed = json.loads(base64.b64decode(message["body"]))
    return message["headers"], args[0]


@pytest.fixture
def new_endpoint(client, auth, broker):
    def create(**overrides):
        body = {
            "name": "glm-mi355x",
            "url": "http://127.0.0.1:30000/v1",
            "served_model": "glm",
            "api_key": KEY,
            "pool": broker.pool(),
            **DEPLOYMENT_FACTS,
            **overrides,
        }
        return post(client, "/api/v1/endpoints", body, auth)

    return create


def test_it_registers_an_endpoint_and_never_returns_its_key(new_endpoint, caplog):
    caplog.set_level(logging.DEBUG)
    response = new_endpoint()
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["has_api_key"] is True
    assert data["url"] == "http://127.0.0.1:30000/v1"
    assert KEY not in response.content.decode()
    assert "api_key" not in data
    endpoint = Endpoint.objects.get(pk=data["id"])
    assert endpoint.deployment.accelerator.sku == "H200"
    with connection.cursor() as cursor:
        cursor.execute("SELECT api_key_encrypted FROM jobs_endpoint WHERE id = %s", [endpoint.pk])
        (stored,) = cursor.fetchone()
    assert stored and KEY not in stored
    assert KEY not in caplog.text


def test_the_pool_defaults_to_the_accelerator(new_endpoint):
    from apps.jobs.services import pools_first_party_ensure

    pools_first_party_ensure(["pool.h200"])
    response = new_endpoint(pool="")
    assert response.json()["pool"] == "pool.h200"


def test_listing_endpoints_hides_keys_and_other_organizations(new_endpoint, client, auth):
    new_endpoint()
    from apps.accounts.services import organization_get_or_create, token_create

    other = token_create(org=organization_get_or_create(slug="other"))
    mine = client.get("/api/v1/endpoints", **auth)
    theirs = client.get("/api/v1/endpoints", HTTP_AUTHORIZATION=f"Bearer {other.plaintext}")
    assert [e["name"] for e in mine.json()] == ["glm-mi355x"]
    assert KEY not in mine.content.decode()
    assert theirs.json() == []


def test_an_endpoint_outside_the_allowlist_is_refused_and_nothing_stored(new_endpoint):
    response = new_endpoint(url="http://10.1.2.3:8000/v1")
    assert response.status_code == 422
    (error,) = response.json()["detail"]
    assert error["path"] == "url"
    assert "outside ENDPOINT_ALLOWLIST" in error["message"]
    assert not Endpoint.objects.exists()


def test_it_needs_a_token(client):
    assert (
        client.post("/api/v1/endpoints", data="{}", content_type="application/json").status_code
        == 401
    )


def test_run_now_queues_a_job_on_the_endpoint_pool(new_endpoint, client, auth, broker, scenario):
    endpoint = new_endpoint().json()
    response = post(
        client,
        f"/api/v1/endpoints/{endpoint['id']}/runs",
        {"scenario": scenario.slug, "concurrency": [1, 2], "requests": 4},
        auth,
    )
    assert response.status_code == 202, response.content
    job = response.json()
    assert job["status"] == "queued"
    assert job["pool"] == endpoint["pool"]
    assert KEY not in response.content.decode()
    headers, spec = queued_spec(broker, endpoint["pool"])
    assert headers["task"] == "inferboard.run_load"
    # Monitoring and worker logs show argsrepr, never the key it carries.
    assert KEY not in headers["argsrepr"] and KEY not in json.dumps(headers)
    assert spec["job_id"] == job["id"]
    assert "api_key" not in spec["endpoint"]  # the worker gets it when it starts the job
    assert spec["endpoint"]["url"] == "http://127.0.0.1:30000/v1"
    assert spec["idempotency_key"] == Job.objects.get(pk=job["id"]).idempotency_key
    assert spec["load"]["concurrency"] == [1, 2]
    assert spec["load"]["requests"] == 4
    assert spec["scenario"]["input_tokens"] == 32
    assert spec["deployment"]["accelerator"] == "H200"
    assert spec["provenance"] == "measured"
    fetched = client.get(f"/api/v1/jobs/{job['id']}", **auth)
    assert fetched.json()["status"] == "queued"


def test_run_now_names_the_wrong_field(new_endpoint, client, auth, broker, scenario):
    endpoint = new_endpoint().json()
    url = f"/api/v1/endpoints/{endpoint['id']}/runs"
    unknown = post(client, url, {"scenario": "nope"}, auth)
    missing = post(client, url, {}, auth)
    bad_level = post(client, url, {"scenario": scenario.slug, "concurrency": [0]}, auth)
    bad_protocol = post(client, url, {"kind": "accuracy", "protocol": "nope-v0"}, auth)
    for response, path in (
        (unknown, "scenario"),
        (missing, "scenario"),
        (bad_level, "concurrency"),
        (bad_protocol, "protocol"),
    ):
        assert response.status_code == 422
        assert response.json()["detail"][0]["path"] == path
    assert not Job.objects.exists()
    assert broker.messages(endpoint["pool"]) == []


def test_an_endpoint_the_allowlist_no_longer_covers_is_refused_at_run_time(
    new_endpoint, client, auth, broker, scenario, settings
):
    endpoint = new_endpoint().json()
    settings.ENDPOINT_ALLOWLIST = ["10.0.0.0/8"]
    response = post(
        client, f"/api/v1/endpoints/{endpoint['id']}/runs", {"scenario": scenario.slug}, auth
    )
    assert response.status_code == 422
    assert response.json()["detail"][0]["path"] == "url"
    assert not Job.objects.exists()
    assert broker.messages(endpoint["pool"]) == []


def test_an_unreachable_broker_fails_the_job_with_503(
    new_endpoint, client, auth, scenario, settings
):
    endpoint = new_endpoint().json()
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    response = post(
        client, f"/api/v1/endpoints/{endpoint['id']}/runs", {"scenario": scenario.slug}, auth
    )
    assert response.status_code == 503
    job = Job.objects.get()
    assert job.status == "failed"
    assert "broker" in job.error


def test_jobs_of_other_organizations_are_not_found(new_endpoint, client, auth, scenario):
    endpoint = new_endpoint().json()
    job = post(
        client, f"/api/v1/endpoints/{endpoint['id']}/runs", {"scenario": scenario.slug}, auth
    ).json()
    from apps.accounts.services import organization_get_or_create, token_create

    stranger = token_create(org=organization_get_or_create(slug="x")).plaintext
    other = {"HTTP_AUTHORIZATION": f"Bearer {stranger}"}
    assert client.get(f"/api/v1/jobs/{job['id']}", **other).status_code == 404
    assert post(client, f"/api/v1/jobs/{job['id']}/cancel", {}, other).status_code == 404
    event = {"event": "started", "attempt": 1, "worker": "w"}
    assert post(client, f"/api/v1/jobs/{job['id']}/events", event, other).status_code == 404


def test_cancel_from_the_api_stops_a_queued_job_from_starting(new_endpoint, client, auth, scenario):
    endpoint = new_endpoint().json()
    job = post(
        client, f"/api/v1/endpoints/{endpoint['id']}/runs", {"scenario": scenario.slug}, auth
    ).json()
    cancelled = post(client, f"/api/v1/jobs/{job['id']}/cancel", {}, auth)
    assert cancelled.json()["status"] == "cancelled"
    started = post(
        client,
        f"/api/v1/jobs/{job['id']}/events",
        {"event": "started", "attempt": 1, "worker": "w1"},
        auth,
    ).json()
    assert started["proceed"] is False
    assert started["status"] == "cancelled"


def test_the_worker_reads_the_servers_event_answer_as_one_shared_type(
    new_endpoint, client, auth, scenario
):
    """The server answers with workers.submit.EventAnswer's fields and the worker parses
    the JSON back into the same type: a field added on one side reaches the other."""
    endpoint = new_endpoint().json()
    job = post(
        client, f"/api/v1/endpoints/{endpoint['id']}/runs", {"scenario": scenario.slug}, auth
    ).json()
    body = post(
        client,
        f"/api/v1/jobs/{job['id']}/events",
        {"event": "started", "attempt": 1, "worker": "w1"},
        auth,
    ).json()
    assert set(body) - {"job_id"} == {f.name for f in fields(EventAnswer)}
    answer = EventAnswer.from_json(body)
    assert answer.proceed is True and answer.status == "running"
    assert answer.api_key == KEY


def test_an_event_the_protocol_does_not_name_is_refused_with_its_field(
    new_endpoint, client, auth, scenario
):
    endpoint = new_endpoint().json()
    job = post(
        client, f"/api/v1/endpoints/{endpoint['id']}/runs", {"scenario": scenario.slug}, auth
    ).json()
    refused = post(
        client,
        f"/api/v1/jobs/{job['id']}/events",
        {"event": "paused", "attempt": 1, "worker": "w1"},
        auth,
    )
    assert refused.status_code == 422
    assert "event" in refused.text
    assert all(name in refused.text for name in EVENTS)


def test_schedules_are_created_edited_and_listed(new_endpoint, client, auth, scenario):
    endpoint = new_endpoint().json()
    url = f"/api/v1/endpoints/{endpoint['id']}/schedules"
    created = post(client, url, {"scenario": scenario.slug, "cron": "0 2 * * *"}, auth)
    assert created.status_code == 201, created.content
    schedule = created.json()
    assert schedule["next_run_at"].endswith("02:00:00Z") or "T02:00:00" in schedule["next_run_at"]
    edited = client.patch(
        f"/api/v1/schedules/{schedule['id']}",
        data=json.dumps({"interval_minutes": 30}),
        content_type="application/json",
        **auth,
    )
    assert edited.status_code == 200, edited.content
    assert edited.json()["cron"] == "" and edited.json()["interval_minutes"] == 30
    bad = post(client, url, {"scenario": scenario.slug, "cron": "every night"}, auth)
    assert bad.status_code == 422 and bad.json()["detail"][0]["path"] == "cron"
    assert len(client.get(url, **auth).json()) == 1


@pytest.fixture
def listener():
    """A loopback TCP listener that counts the connections it accepts."""
    import socket
    import threading

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    sock.settimeout(0.2)
    accepted: list[object] = []
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            accepted.append(conn)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield sock.getsockname()[1], accepted
    done.set()
    thread.join(timeout=5)
    sock.close()


def test_no_request_leaves_for_an_endpoint_outside_the_allowlist(
    new_endpoint, client, auth, scenario, settings, listener, broker
):
    port, accepted = listener
    inside = new_endpoint(name="inside", url=f"http://127.0.0.1:{port}/v1").json()
    settings.ENDPOINT_ALLOWLIST = ["10.0.0.0/8"]
    outside = new_endpoint(name="outside", url=f"http://127.0.0.1:{port}/v1")
    run = post(client, f"/api/v1/endpoints/{inside['id']}/runs", {"scenario": scenario.slug}, auth)
    assert outside.status_code == 422 and run.status_code == 422
    assert "outside ENDPOINT_ALLOWLIST" in run.json()["detail"][0]["message"]
    assert broker.messages(inside["pool"]) == []
    assert accepted == []


def test_run_now_refuses_a_scenario_that_does_not_state_its_spread_or_prefix(
    new_endpoint, client, auth, broker
):
    from apps.catalog.services import scenario_create
    from workers import result_facts

    imported = scenario_create(scenario=result_facts.Scenario(input_tokens=32, output_tokens=8))
    endpoint = new_endpoint().json()
    response = post(
        client, f"/api/v1/endpoints/{endpoint['id']}/runs", {"scenario": imported.slug}, auth
    )
    assert response.status_code in (400, 422), response.content
    assert "scenario" in response.content.decode()
    assert not Job.objects.exists()


def test_an_endpoint_whose_gpus_are_not_its_pools_is_refused_naming_deployment_gpus(new_endpoint):
    deployment = {
        **DEPLOYMENT_FACTS["deployment"],
        "gpus": 8,
        "disaggregation": {"prefill_gpus": 8, "decode_gpus": 16},
    }
    response = new_endpoint(deployment=deployment)
    assert response.status_code == 422
    (problem,) = response.json()["detail"]
    assert problem["path"] == "deployment.gpus"
    assert "prefill_gpus + decode_gpus = 8 + 16 = 24" in problem["message"]
    assert not Endpoint.objects.exists()
