"""The regressions page, a change point's page, badges where the series appear, and the
subscriptions page: who sees what, and bad input named."""

from __future__ import annotations

import pytest

from apps.regressions import webhooks
from apps.regressions.models import Acknowledgement, ChangePoint, Subscription
from apps.regressions.services import regressions_detect
from tests.apps.regressions.series import stored_series

pytestmark = pytest.mark.django_db


@pytest.fixture
def public_drop() -> ChangePoint:
    stored_series([8000] * 6)
    stored_series([6000] * 3, first_day=6, engine_version="0.5.24")
    regressions_detect()
    return ChangePoint.objects.get(metric="tput_per_gpu", org__isnull=True)


@pytest.fixture
def private_drop(org) -> ChangePoint:
    stored_series([5000] * 6, org=org, is_public=False, accelerator="H200")
    stored_series([4000] * 3, first_day=6, org=org, is_public=False, accelerator="H200")
    regressions_detect()
    return ChangePoint.objects.get(metric="tput_per_gpu", org=org)


def test_the_page_lists_change_points_with_their_dates_runs_and_what_changed(client, public_drop):
    page = client.get("/regressions/").content.decode()
    assert f"/regressions/{public_drop.pk}/" in page
    # The last run before the change (day 5) and the first after it (day 6).
    assert ">2026-03-06</time> → <time" in page and ">2026-03-07</time>" in page
    assert f'href="/runs/{public_drop.before_run_id}/"' in page
    assert f'href="/runs/{public_drop.after_run_id}/"' in page
    assert "Engine version: 0.5.23 → 0.5.24" in page


def test_the_page_filters_by_model_accelerator_engine_and_organization(client, public_drop):
    def listed(query: str) -> bool:
        return (
            f"/regressions/{public_drop.pk}/"
            in client.get(f"/regressions/?{query}").content.decode()
        )

    assert listed("model=GLM+5.2") and listed("accelerator=MI355X") and listed("engine=sglang")
    assert not listed("model=Kimi")
    assert not listed("accelerator=B200")
    assert not listed("engine=vllm")
    assert not listed("organization=acme")  # the public series' runs belong to no organization
    response = client.get("/regressions/?direction=sideways&metric=speed")
    assert response.status_code == 200
    assert "Direction: “sideways”" in response.content.decode()
    assert "Metric: “speed”" in response.content.decode()


def test_a_private_series_is_seen_by_its_organization_only(client, person, org, private_drop):
    assert f"/regressions/{private_drop.pk}/" not in client.get("/regressions/").content.decode()
    assert client.get(f"/regressions/{private_drop.pk}/").status_code == 404
    client.force_login(person(org))
    page = client.get("/regressions/?organization=acme").content.decode()
    assert f"/regressions/{private_drop.pk}/" in page
    assert client.get(f"/regressions/{private_drop.pk}/").status_code == 200


def test_badges_show_on_the_board_the_deployment_and_the_run(client, public_drop):
    badge = "▼ regression"
    deployment = client.get(f"/deployments/{public_drop.deployment_id}/").content.decode()
    assert badge in deployment
    assert f"/regressions/?deployment={public_drop.deployment_id}" in deployment
    run = client.get(f"/runs/{public_drop.after_run_id}/").content.decode()
    assert badge in run and f"/regressions/{public_drop.pk}/" in run
    board = client.get("/?scenario=seed-20k-1k-60").content.decode()
    assert badge in board


def test_a_member_acknowledges_and_an_anonymous_visitor_cannot(client, person, org, public_drop):
    url = f"/regressions/{public_drop.pk}/acknowledge/"
    assert client.post(url).status_code == 403
    client.force_login(person(org))
    assert client.post(url).status_code == 302
    assert Acknowledgement.objects.filter(change_point=public_drop, org=org).exists()
    assert (
        "Acknowledged by your organization"
        in client.get(f"/regressions/{public_drop.pk}/").content.decode()
    )


def test_an_admin_subscribes_and_bad_input_names_the_field(client, person, org, monkeypatch):
    # A fake resolver: this machine has no DNS; hooks.example stands for a public host.
    monkeypatch.setattr(webhooks, "system_resolve", lambda host, port: ["93.184.215.14"])
    client.force_login(person(org, role="admin"))
    bad = client.post(
        "/regressions/subscriptions/",
        {"channel": "webhook", "target": "not a url", "regressions": "on",
         "persist_needed": 4, "persist_window": 3},
    )  # fmt: skip
    assert bad.status_code == 400
    text = bad.content.decode()
    assert "a webhook needs an http(s) URL" in text
    assert "must be between 1 and the window" in text
    assert not Subscription.objects.exists()
    good = client.post(
        "/regressions/subscriptions/",
        {"channel": "webhook", "target": "https://hooks.example/x", "regressions": "on",
         "persist_needed": 2, "persist_window": 3, "accelerator": "MI355X"},
    )  # fmt: skip
    assert good.status_code == 200
    subscription = Subscription.objects.get(org=org)
    assert subscription.secret and subscription.secret in good.content.decode()


def test_a_viewer_sees_subscriptions_but_cannot_add_one(client, person, org):
    client.force_login(person(org, role="viewer"))
    assert client.get("/regressions/subscriptions/").status_code == 200
    refused = client.post(
        "/regressions/subscriptions/", {"channel": "email", "target": "a@b.example"}
    )
    assert refused.status_code == 403


def test_a_webhook_may_not_point_at_the_servers_own_network_unless_allowed(
    client, person, org, settings
):
    client.force_login(person(org, role="admin"))
    form = {"channel": "webhook", "regressions": "on", "persist_needed": 2, "persist_window": 3}
    for target in ("http://127.0.0.1:8080/x", "http://169.254.169.254/", "http://localhost/x"):
        refused = client.post("/regressions/subscriptions/", {**form, "target": target})
        assert refused.status_code == 400
        assert "private or loopback address" in refused.content.decode()
    assert not Subscription.objects.exists()
    settings.REGRESSION_WEBHOOK_PRIVATE_HOSTS = True
    target = "http://127.0.0.1:8080/x"
    assert client.post("/regressions/subscriptions/", {**form, "target": target}).status_code == 200
    assert Subscription.objects.get(org=org).target == target


def test_the_list_links_to_the_alert_subscriptions(client, public_drop):
    page = client.get("/regressions/").content.decode()
    assert '<a id="subscriptions-link" href="/regressions/subscriptions/">' in page
