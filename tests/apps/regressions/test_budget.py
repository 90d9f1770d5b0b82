"""An organization keeps at most ORG_MAX_SUBSCRIPTIONS alert subscriptions: one more is a 400
whose form says which budget, and removing one makes room again."""

import pytest

from apps.regressions.models import Subscription

pytestmark = pytest.mark.django_db

FORM = {"channel": "email", "regressions": "on", "persist_needed": 2, "persist_window": 3}


def test_subscriptions_past_the_budget_are_refused_naming_it(client, person, org, settings):
    settings.ORG_MAX_SUBSCRIPTIONS = 2
    admin = person(org, role="admin", email="admin@acme.example")
    client.force_login(admin)
    for _ in range(2):
        added = client.post("/regressions/subscriptions/", {**FORM, "target": admin.email})
        assert added.status_code == 200
    refused = client.post("/regressions/subscriptions/", {**FORM, "target": admin.email})
    assert refused.status_code == 400
    assert "ORG_MAX_SUBSCRIPTIONS" in refused.content.decode()
    assert Subscription.objects.filter(org=org).count() == 2
    first = Subscription.objects.filter(org=org).first()
    client.post("/regressions/subscriptions/", {"delete": first.pk})
    again = client.post("/regressions/subscriptions/", {**FORM, "target": admin.email})
    assert again.status_code == 200
    assert Subscription.objects.filter(org=org).count() == 2
