"""Schedules from /endpoints/: a member adds one to an endpoint's row, turns it off and on, and
removes it; a refusal names the field and stores nothing."""

import pytest

from apps.accounts.models import AuditEvent
from apps.catalog.models import Scenario
from apps.jobs.models import Schedule
from tests.apps.jobs.test_register_from_the_page import NEW

pytestmark = pytest.mark.django_db


@pytest.fixture
def endpoint(client, org, person, broker):
    from apps.catalog.models import Accelerator
    from apps.jobs.models import Endpoint

    Accelerator.objects.get_or_create(sku="H200")
    Scenario.objects.get_or_create(
        slug="single-stream",
        defaults={
            "name": "single stream",
            "shape_key": "ss",
            "input_tokens": 1,
            "output_tokens": 1,
        },
    )
    client.force_login(person(org, "member"))
    assert client.post("/endpoints/", {**NEW, "pool": broker.pool()}).status_code == 302
    return Endpoint.objects.get(org=org, name=NEW["name"])


def test_a_member_adds_a_schedule_turns_it_off_and_removes_it(client, endpoint):
    page = client.get("/endpoints/").content.decode()
    assert f'action="/endpoints/{endpoint.pk}/schedules/"' in page

    response = client.post(
        f"/endpoints/{endpoint.pk}/schedules/",
        {"scenario": "single-stream", "interval_minutes": "1440"},
        follow=True,
    )
    schedule = Schedule.objects.get(endpoint=endpoint)
    assert schedule.interval_minutes == 1440 and schedule.enabled and schedule.next_run_at
    assert "Schedule added" in response.content.decode()
    assert AuditEvent.objects.filter(action="schedule.created").exists()
    assert "every 1440 min" in client.get("/endpoints/").content.decode()

    client.post(f"/schedules/{schedule.pk}/")
    schedule.refresh_from_db()
    assert not schedule.enabled
    assert "(off)" in client.get("/endpoints/").content.decode()

    client.post(f"/schedules/{schedule.pk}/", {"remove": "1"})
    assert not Schedule.objects.filter(pk=schedule.pk).exists()


@pytest.mark.parametrize(
    "fields, said",
    [
        (
            {"scenario": "single-stream"},
            "cron: give either a cron expression or an interval in minutes",
        ),
        ({"scenario": "single-stream", "cron": "61 * * * *"}, "cron:"),
        ({"scenario": "no-such-scenario", "interval_minutes": "60"}, "scenario"),
    ],
)
def test_a_refused_schedule_says_why_and_stores_nothing(client, endpoint, fields, said):
    response = client.post(f"/endpoints/{endpoint.pk}/schedules/", fields, follow=True)
    assert said in response.content.decode()
    assert not Schedule.objects.filter(endpoint=endpoint).exists()


def test_another_organisations_endpoint_cannot_be_scheduled(client, endpoint, person):
    from apps.accounts.services import organization_get_or_create

    other = organization_get_or_create(slug="other")
    client.force_login(person(other, "member"))
    response = client.post(
        f"/endpoints/{endpoint.pk}/schedules/", {"scenario": "single-stream", "cron": "0 2 * * *"}
    )
    assert response.status_code == 404
    assert not Schedule.objects.exists()
