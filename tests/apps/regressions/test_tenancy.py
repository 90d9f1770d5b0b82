"""/regressions/subscriptions/ offers only the deployments and scenarios its organization may
see: never another organization's private model, engine version or scenario name."""

import pytest

from apps.accounts.services import organization_get_or_create
from apps.regressions.models import Subscription
from apps.runs.services import run_ingest
from tests.apps.tenancy import leaks, private_run
from tests.factories import document

pytestmark = pytest.mark.django_db


@pytest.fixture
def hidden(db):
    owner = organization_get_or_create(slug="hush")
    run = private_run(owner)
    run_ingest(document=document(), org=None, is_public=True)
    return owner, run


def test_the_owner_is_offered_its_own_private_deployment(client, person, hidden):
    owner, _ = hidden
    client.force_login(person(owner, role="admin"))
    assert leaks(client.get("/regressions/subscriptions/").content.decode())


def test_another_organization_is_offered_none_of_its_names(client, person, org, hidden):
    client.force_login(person(org, role="admin"))
    page = client.get("/regressions/subscriptions/")
    assert page.status_code == 200
    assert "GLM 5.2" in page.content.decode()  # the public deployment is offered
    assert not leaks(page.content.decode())
    assert client.get("/regressions/subscriptions/").status_code == 200
    client.logout()
    assert not leaks(client.get("/regressions/subscriptions/").content.decode())


def test_a_post_naming_anothers_private_deployment_or_scenario_is_refused(
    client, person, org, hidden
):
    _, run = hidden
    client.force_login(person(org, role="admin"))
    form = {"channel": "email", "target": "", "regressions": "on",
            "persist_needed": 2, "persist_window": 3}  # fmt: skip
    for field, value in (("deployment", run.deployment_id), ("scenario", run.scenario_id)):
        refused = client.post("/regressions/subscriptions/", {**form, field: value})
        assert refused.status_code == 400
        assert f'id="id_{field}"' in refused.content.decode()
        assert "not one of the available choices" in refused.content.decode()
        assert not leaks(refused.content.decode())
    assert not Subscription.objects.exists()
