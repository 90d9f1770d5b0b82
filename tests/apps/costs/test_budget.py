"""An organization keeps at most ORG_MAX_SAVED_PAGES saved pages and ORG_MAX_PRICE_PROFILES
price profiles: one more is a 422 naming `name` and the budget, while replacing one (its name
again) stays possible, and another organization's budget is its own."""

import pytest

from apps.accounts.services import organization_get_or_create
from apps.costs.models import PriceProfile, SavedPage

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


def save_profile(client, name: str):
    return client.post("/costs/profiles/", {"name": name, "price_MI355X": "1.9"})


def test_price_profiles_past_the_budget_are_refused_naming_it(client, org, person, settings):
    settings.ORG_MAX_PRICE_PROFILES = 2
    client.force_login(person(org))
    assert [save_profile(client, f"book {n}").status_code for n in range(2)] == [302, 302]
    refused = save_profile(client, "one too many")
    assert refused.status_code == 422
    [problem] = refused.json()["detail"]
    assert problem["path"] == "name" and "ORG_MAX_PRICE_PROFILES" in problem["message"]
    assert sorted(PriceProfile.objects.filter(org=org).values_list("name", flat=True)) == [
        "book 0",
        "book 1",
    ]
    # The refused save left the active profile as it was.
    assert PriceProfile.objects.get(org=org, active=True).name == "book 1"
    # Replacing one is no new profile: allowed at the budget, and it becomes the active one.
    assert save_profile(client, "book 0").status_code == 302
    assert PriceProfile.objects.get(org=org, active=True).name == "book 0"
    assert PriceProfile.objects.filter(org=org).count() == 2


def test_each_organization_has_its_own_price_profile_budget(client, org, person, settings):
    settings.ORG_MAX_PRICE_PROFILES = 1
    client.force_login(person(org))
    assert save_profile(client, "mine").status_code == 302
    other = organization_get_or_create(slug="other")
    client.force_login(person(other))
    assert save_profile(client, "theirs").status_code == 302


def test_the_price_profile_budget_defaults_to_fifty():
    from apps import settings as project_settings

    assert project_settings.ORG_MAX_PRICE_PROFILES == 50
