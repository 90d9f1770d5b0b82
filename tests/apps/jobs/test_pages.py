import pytest

from apps.jobs.models import Job


@pytest.fixture
def member(client, endpoint, person):
    client.force_login(person(endpoint.org, "member"))
    return client


def test_the_endpoint_list_offers_run_now(member, endpoint):
    client = member
    response = client.get("/endpoints/")
    assert response.status_code == 200
    html = response.content.decode()
    assert endpoint.name in html and "Run now" in html
    assert f'hx-post="/endpoints/{endpoint.pk}/run/"' in html
    assert "sk-secret-endpoint-key-123" not in html


def test_run_now_returns_a_polling_job_partial(member, endpoint, scenario):
    client = member
    response = client.post(f"/endpoints/{endpoint.pk}/run/", {"scenario": scenario.slug})
    assert response.status_code == 200
    job = Job.objects.get()
    html = response.content.decode()
    assert f'id="job-{job.pk}"' in html and 'hx-trigger="every 2s"' in html
    assert "Cancel" in html
    cancelled = client.post(f"/jobs/{job.pk}/cancel/")
    assert 'data-status="cancelled"' in cancelled.content.decode()
    assert "every 2s" not in cancelled.content.decode()
    assert "Retry" in cancelled.content.decode()


def test_the_job_partial_links_its_run(member, endpoint, scenario, document):
    from apps.jobs import services
    from apps.runs.services import run_ingest

    client = member
    job = services.job_enqueue(endpoint=endpoint, scenario=scenario)
    services.job_event(job=job, event="started", attempt=1, worker="w")
    document["idempotency_key"] = job.idempotency_key
    run = run_ingest(document=document, org=endpoint.org).run
    services.job_event(job=job, event="succeeded", attempt=1, worker="w")
    html = client.get(f"/jobs/{job.pk}/", HTTP_HX_REQUEST="true").content.decode()
    assert f"/runs/{run.pk}/" in html and 'data-status="succeeded"' in html


def test_with_debug_on_an_anonymous_visitor_is_sent_to_sign_in_and_cannot_run(
    client, endpoint, scenario, settings
):
    settings.DEBUG = True
    response = client.get("/endpoints/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert (
        client.post(f"/endpoints/{endpoint.pk}/run/", {"scenario": scenario.slug}).status_code
        == 403
    )
    assert not Job.objects.exists()


def test_a_viewer_sees_endpoints_but_cannot_run_or_cancel(client, endpoint, scenario, person):
    from apps.jobs import services

    client.force_login(person(endpoint.org, "viewer"))
    assert endpoint.name in client.get("/endpoints/").content.decode()
    assert (
        client.post(f"/endpoints/{endpoint.pk}/run/", {"scenario": scenario.slug}).status_code
        == 403
    )
    job = services.job_enqueue(endpoint=endpoint, scenario=scenario)
    assert client.post(f"/jobs/{job.pk}/cancel/").status_code == 403
    job.refresh_from_db()
    assert job.status == Job.Status.QUEUED


def test_another_organizations_member_neither_sees_nor_runs_the_endpoint(
    client, endpoint, scenario, person
):
    from apps.accounts.services import organization_get_or_create
    from apps.jobs import services

    other = organization_get_or_create(slug="rival")
    client.force_login(person(other, "owner"))
    assert endpoint.name not in client.get("/endpoints/").content.decode()
    assert (
        client.post(f"/endpoints/{endpoint.pk}/run/", {"scenario": scenario.slug}).status_code
        == 404
    )
    job = services.job_enqueue(endpoint=endpoint, scenario=scenario)
    assert client.get(f"/jobs/{job.pk}/").status_code == 404
    assert client.post(f"/jobs/{job.pk}/cancel/").status_code == 404


def test_the_admin_refuses_a_schedule_with_a_bad_cron(admin_client, endpoint, scenario):
    from apps.jobs.models import Schedule

    response = admin_client.post(
        "/admin/jobs/schedule/add/",
        {
            "endpoint": endpoint.pk,
            "kind": "load",
            "scenario": scenario.pk,
            "options": "{}",
            "cron": "every night",
            "enabled": "on",
        },
    )
    assert response.status_code == 200
    assert "five fields" in response.content.decode()
    assert not Schedule.objects.exists()
    response = admin_client.post(
        "/admin/jobs/schedule/add/",
        {
            "endpoint": endpoint.pk,
            "kind": "load",
            "scenario": scenario.pk,
            "options": "{}",
            "cron": "0 2 * * *",
            "enabled": "on",
        },
    )
    assert response.status_code == 302
    assert Schedule.objects.get().next_run_at is not None


def test_run_now_past_the_organizations_write_limit_is_429(member, endpoint, scenario, settings):
    settings.RATE_LIMIT_ORG_WRITES = "1/3600"
    first = member.post(f"/endpoints/{endpoint.pk}/run/", {"scenario": scenario.slug})
    assert first.status_code == 200
    refused = member.post(f"/endpoints/{endpoint.pk}/run/", {"scenario": scenario.slug})
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert Job.objects.count() == 1


def test_the_endpoint_list_asks_the_database_as_often_for_four_endpoints_as_for_one(
    member, endpoint, scenario, deployment, broker
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apps.jobs import services

    def queries() -> int:
        with CaptureQueriesContext(connection) as seen:
            assert member.get("/endpoints/").status_code == 200
        return len(seen)

    services.job_enqueue(endpoint=endpoint, scenario=scenario)
    one = queries()
    for n in range(3):
        more = services.endpoint_create(
            org=endpoint.org,
            name=f"more-{n}",
            url="http://127.0.0.1:9/",
            deployment=deployment,
            pool=broker.pool(),
        )
        services.job_enqueue(endpoint=more, scenario=scenario)
    assert queries() == one
    html = member.get("/endpoints/").content.decode()
    assert html.count('data-status="queued"') == 4  # each row shows its own latest job
