"""A run's origin, as the service checks it: only a document that comes back with its job's
secret is "scheduled"; one that claims a job it is not is refused and nothing is stored.
(The real Celery worker and agent paths: tests/workers/test_celery_tasks.py and
tests/apps/jobs/test_agent.py assert their runs land scheduled.)"""

import json

import pytest
from django.utils import timezone

from apps.accounts.services import organization_get_or_create, token_create
from apps.catalog.services import deployment_upsert, preset_get
from apps.jobs.crypto import job_binding_secret
from apps.jobs.models import Endpoint, Job, Pool
from apps.jobs.services import job_cancel, job_event, job_retry
from apps.runs.models import Run
from tests.factories import document
from workers import results as doc

pytestmark = pytest.mark.django_db

HEADER = "HTTP_X_INFERBOARD_JOB_SECRET"


def queued_job(org, *, pool_org=None, started: bool = True) -> Job:
    """A job as job_enqueue stores it, without a broker: this test is about ingestion. Unless
    told otherwise its worker has reported starting it, as a real one does before its result."""
    body = document()
    deployment = deployment_upsert(document=doc.parse_document(body))
    pool = Pool.objects.create(name=f"pool.origin-{org.slug}", org=pool_org)
    endpoint = Endpoint.objects.create(
        org=org,
        deployment=deployment,
        facts={"model": body["model"], "deployment": body["deployment"]},
        name="e",
        url="http://127.0.0.1:9/",
        served_model="m",
        pool=pool.name,
    )
    return Job.objects.create(
        endpoint=endpoint,
        scenario=preset_get(slug="seed-20k-1k-60"),
        idempotency_key=Job.new_key(),
        pool=pool.name,
        status=Job.Status.RUNNING if started else Job.Status.QUEUED,
        started_at=timezone.now() if started else None,
    )


def post(client, body: dict, token: str, **headers):
    return client.post(
        "/api/v1/runs",
        data=json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
        **headers,
    )


def job_document(job: Job) -> dict:
    body = document()
    body["idempotency_key"] = job.idempotency_key
    return body


def test_a_document_with_its_jobs_secret_lands_scheduled_on_the_first_party_fleet(client, org):
    job = queued_job(org)
    token = token_create(org=org, name="worker").plaintext
    secret = job_binding_secret(job.idempotency_key, job.attempt)
    response = post(client, job_document(job), token, **{HEADER: secret})
    assert response.status_code == 201, response.content
    run = Run.objects.get(pk=response.json()["id"])
    assert (run.origin, run.origin_host) == ("scheduled", "first_party")
    detail = client.get(f"/api/v1/runs/{run.pk}").json()
    assert (detail["origin"], detail["origin_host"]) == ("scheduled", "first_party")


def test_an_organizations_own_pool_is_told_apart_from_the_fleet(client, org):
    job = queued_job(org, pool_org=org)
    token = token_create(org=org, name="agent").plaintext
    secret = job_binding_secret(job.idempotency_key, job.attempt)
    response = post(client, job_document(job), token, **{HEADER: secret})
    assert response.status_code == 201, response.content
    run = Run.objects.get(pk=response.json()["id"])
    assert (run.origin, run.origin_host) == ("scheduled", "org_host")


def test_a_document_for_a_job_that_never_started_is_refused_as_scheduled(client, org):
    job = queued_job(org, started=False)
    token = token_create(org=org, name="worker").plaintext
    secret = job_binding_secret(job.idempotency_key, job.attempt)
    response = post(client, job_document(job), token, **{HEADER: secret})
    assert response.status_code == 403
    assert response.json()["detail"][0]["path"] == "X-Inferboard-Job-Secret"
    assert not Run.objects.filter(idempotency_key=job.idempotency_key).exists()


def test_a_fabricated_document_on_an_org_pool_is_never_first_party_beside_a_fleet_pool(client, org):
    job = queued_job(org, pool_org=org)
    # `addpool` now refuses a name an organization holds (tests/faults/test_pools.py), but a
    # first-party pool of the same name made before that rule may still be in the database.
    Pool.objects.create(name=job.pool, org=None)
    token = token_create(org=org, name="agent").plaintext
    secret = job_binding_secret(job.idempotency_key, job.attempt)
    response = post(client, job_document(job), token, **{HEADER: secret})
    assert response.status_code == 201, response.content
    run = Run.objects.get(pk=response.json()["id"])
    assert run.origin_host == "org_host"


def _report(job: Job, event: str, worker: str = "agent-1") -> None:
    answer = job_event(job=job, event=event, attempt=job.attempt, worker=worker)
    job.refresh_from_db()
    assert answer.status == job.status


def test_an_earlier_attempts_document_is_refused_once_a_retry_runs(client, org):
    # An org pool: the retry wakes its agents instead of publishing to a broker.
    job = queued_job(org, pool_org=org, started=False)
    first_secret = job_binding_secret(job.idempotency_key, job.attempt)
    _report(job, "started")
    _report(job, "failed")
    job = job_retry(job=job)
    _report(job, "started", worker="agent-2")
    assert (job.attempt, job.status) == (2, "running")
    token = token_create(org=org, name="agent").plaintext
    late = post(client, job_document(job), token, **{HEADER: first_secret})
    assert late.status_code == 409, late.content
    [problem] = late.json()["detail"]
    assert problem["path"] == "X-Inferboard-Job-Secret"
    assert "attempt 1" in problem["message"] and "attempt 2" in problem["message"]
    assert not Run.objects.filter(idempotency_key=job.idempotency_key).exists()
    # The running attempt's own document is still the job's.
    secret = job_binding_secret(job.idempotency_key, job.attempt)
    response = post(client, job_document(job), token, **{HEADER: secret})
    assert response.status_code == 201, response.content
    assert Run.objects.get(pk=response.json()["id"]).origin == "scheduled"


def test_an_earlier_attempts_document_is_refused_while_the_retry_waits_to_start(client, org):
    job = queued_job(org, pool_org=org, started=False)
    first_secret = job_binding_secret(job.idempotency_key, job.attempt)
    _report(job, "started")
    _report(job, "failed")
    job = job_retry(job=job)
    assert (job.attempt, job.status) == (2, "queued")
    token = token_create(org=org, name="agent").plaintext
    response = post(client, job_document(job), token, **{HEADER: first_secret})
    assert response.status_code == 409
    assert response.json()["detail"][0]["path"] == "X-Inferboard-Job-Secret"
    assert not Run.objects.filter(idempotency_key=job.idempotency_key).exists()


@pytest.mark.parametrize("ending", ["failed", "cancelled"])
def test_a_document_for_an_attempt_that_finished_is_refused_as_scheduled(client, org, ending):
    job = queued_job(org, pool_org=org, started=False)
    _report(job, "started")
    if ending == "failed":
        _report(job, "failed")
    else:
        job = job_cancel(job=job)
    assert job.status == ending
    token = token_create(org=org, name="agent").plaintext
    secret = job_binding_secret(job.idempotency_key, job.attempt)
    response = post(client, job_document(job), token, **{HEADER: secret})
    assert response.status_code == 409
    [problem] = response.json()["detail"]
    assert problem["path"] == "X-Inferboard-Job-Secret" and ending in problem["message"]
    assert not Run.objects.filter(idempotency_key=job.idempotency_key).exists()


def test_the_secret_of_one_attempt_is_not_the_next_ones():
    assert job_binding_secret("job:k", 1) != job_binding_secret("job:k", 2)


def test_a_token_posting_a_jobs_key_without_its_secret_is_stored_as_submitted(client, org):
    job = queued_job(org)
    token = token_create(org=org, name="script").plaintext
    response = post(client, job_document(job), token)
    assert response.status_code == 201
    run = Run.objects.get(pk=response.json()["id"])
    assert run.origin == "submitted" and run.origin_host == ""
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'data-origin="submitted"' in html and "self-reported" in html


@pytest.mark.parametrize("forgery", ["wrong secret", "another job's secret", "other org"])
def test_a_document_claiming_a_job_it_does_not_belong_to_is_refused(client, org, forgery):
    job = queued_job(org)
    other_job = queued_job(organization_get_or_create(slug="other"))
    token = token_create(org=org, name="t").plaintext
    secret = job_binding_secret(job.idempotency_key, job.attempt)
    if forgery == "wrong secret":
        secret = "0" * 64
    elif forgery == "another job's secret":
        secret = job_binding_secret(other_job.idempotency_key, other_job.attempt)
    else:
        token = token_create(org=other_job.endpoint.org, name="rival").plaintext
    response = post(client, job_document(job), token, **{HEADER: secret})
    assert response.status_code == 403
    assert response.json()["detail"][0]["path"] == "X-Inferboard-Job-Secret"
    assert not Run.objects.filter(idempotency_key=job.idempotency_key).exists()


def test_a_plain_submission_is_self_reported_and_the_api_filters_by_origin(client, org, auth):
    assert post(client, document(), auth["HTTP_AUTHORIZATION"].split()[1]).status_code == 201
    imported = document(accelerator="B200", provenance="imported")
    assert post(client, imported, auth["HTTP_AUTHORIZATION"].split()[1]).status_code == 201
    listed = client.get("/api/v1/runs?origin=imported").json()
    assert [r["origin"] for r in listed["items"]] == ["imported"]
    assert client.get("/api/v1/runs?origin=bogus").status_code == 422


def test_the_job_spec_carries_the_secret_that_ingestion_checks(org):
    from apps.jobs.specs import job_spec
    from apps.runs.services import _origin

    job = queued_job(org)
    spec = job_spec(job)
    assert spec["job_secret"] == job_binding_secret(job.idempotency_key, job.attempt)
    parsed = doc.parse_document(job_document(job))
    assert _origin(parsed, org, spec["job_secret"]) == ("scheduled", "first_party")
