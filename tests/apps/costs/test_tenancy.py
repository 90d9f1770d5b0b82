"""/costs/ draws its model and scenario choices, and the scenarios a length mix may name, from
what the viewer may see: another organization's private run stays unnamed."""

import pytest

from apps.accounts.services import organization_get_or_create
from apps.runs.services import run_ingest
from tests.apps.tenancy import SECRET, leaks, private_run
from tests.factories import document

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("costs_site")]


@pytest.fixture
def hush(db):
    owner = organization_get_or_create(slug="hush")
    private_run(owner)
    # A public run too, so the choices are not simply empty.
    run_ingest(document=document(), org=None, is_public=True)
    return owner


PAGES = [
    "/costs/",
    "/costs/?ttft_s_max=2.22&interactivity_min=30",
    "/costs/?length_mix=nonsense:1",
    "/costs/claim/",
]


def test_the_owner_sees_its_private_names(client, person, hush):
    client.force_login(person(hush, role="viewer"))
    page = client.get("/costs/").content.decode()
    assert f'<option value="Model {SECRET}"' in page or f"Model {SECRET}" in page
    assert f"scenario-{SECRET}" in page


@pytest.mark.parametrize("path", PAGES)
def test_another_organization_and_an_anonymous_visitor_never_see_them(
    client, person, org, hush, path
):
    anonymous = client.get(path)
    assert anonymous.status_code < 500
    assert not leaks(anonymous.content.decode()), path
    client.force_login(person(org, role="admin"))
    member = client.get(path)
    assert member.status_code < 500
    assert not leaks(member.content.decode()), path


def test_a_length_mix_cannot_name_another_organizations_scenario(client, person, org, hush):
    client.force_login(person(org, role="admin"))
    # The page echoes what was typed, so this checks the mix was not resolved: the slug is
    # refused as unknown, as any name the viewer may not see.
    page = client.get(f"/costs/?length_mix=scenario-{SECRET}:1").content.decode()
    assert "is neither input/output tokens" in page
    assert "3333 in" not in page and "3,333 in" not in page
