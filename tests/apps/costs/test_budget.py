"""An organization keeps at most ORG_MAX_SAVED_PAGES saved pages: one more is a 422 naming
`name` and the budget, while replacing a saved page (its name again) stays possible, and
another organization's budget is its own."""

import pytest

from apps.accounts.services import organization_get_or_create
from apps.costs.models import SavedPage

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("costs_site")]


def save(client, name: str):
    return client.post("/costs/saved/", {"name": name, "query": "ttft_s_max=2"})


def test_saved_pages_past_the_budget_are_refused_naming_it(client, org, person, settings):
    settings.ORG_MAX_SAVED_PAGES = 3
    client.force_login(person(org))
    for n in range(3):
        assert save(client, f"page {n}").status_code == 302
    refused = save(client, "one too many")
    assert refused.status_code == 422
    [problem] = refused.json()["detail"]
    assert problem["path"] == "name" and "ORG_MAX_SAVED_PAGES" in problem["message"]
    assert SavedPage.objects.filter(org=org).count() == 3
    # Replacing one is no new page: allowed at the budget.
    assert save(client, "page 1").status_code == 302
    assert SavedPage.objects.filter(org=org).count() == 3


def test_each_organization_has_its_own_budget(client, org, person, settings):
    settings.ORG_MAX_SAVED_PAGES = 1
    client.force_login(person(org))
    assert save(client, "mine").status_code == 302
    other = organization_get_or_create(slug="other")
    client.force_login(person(other))
    assert save(client, "theirs").status_code == 302
