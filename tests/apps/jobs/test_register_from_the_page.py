"""Registering an endpoint from /endpoints/: the same service as POST /api/v1/endpoints, for a
new deployment described in the form or one already measured; a refusal names its field and
stores nothing."""

import html

import pytest

from apps.accounts.models import AuditEvent
from apps.catalog.models import Deployment
from apps.jobs.models import Endpoint
from tests.reviews import ingest_reviewed

NEW = {
    "name": "mi355x-sglang",
    "url": "http://127.0.0.1:9/",
    "api": "completions",
    "model_name": "GLM 5.2",
    "accelerator": "H200",
    "gpus": "8",
    "engine": "sglang",
    "engine_version": "0.5.9",
    "quantization": "FP8",
    "tp": "8",
}


@pytest.fixture
def member(client, org, person, broker, settings):
    from apps.catalog.models import Accelerator
    from apps.jobs.services import pools_first_party_ensure

    Accelerator.objects.get_or_create(sku="H200")
    pools_first_party_ensure(["pool.h200"])  # the pool an H200 endpoint goes to by default
    client.force_login(person(org, "member"))
    return client


def test_a_member_registers_an_endpoint_for_a_new_deployment(member, org):
    response = member.post("/endpoints/", NEW)
    assert response.status_code == 302
    endpoint = Endpoint.objects.get(org=org, name="mi355x-sglang")
    assert endpoint.deployment.accelerator.sku == "H200" and endpoint.deployment.gpus == 8
    assert endpoint.deployment.engine_version == "0.5.9"
    assert endpoint.pool == "pool.h200"
    page = member.get("/endpoints/").content.decode()
    assert "Endpoint “mi355x-sglang” registered" in page and "mi355x-sglang" in page
    assert AuditEvent.objects.filter(action="endpoint.created", target="mi355x-sglang").exists()


def test_an_endpoint_for_a_deployment_already_measured_needs_no_facts(
    member, org, document, broker
):
    deployment = ingest_reviewed(document=document, org=org).run.deployment
    body = {
        "name": "again",
        "url": "http://127.0.0.1:9/",
        "api": "chat",
        "deployment": deployment.pk,
        "pool": broker.pool(),
    }
    assert member.post("/endpoints/", body).status_code == 302
    assert Endpoint.objects.get(org=org, name="again").deployment == deployment


def test_a_deployment_nobody_measured_where_you_can_see_it_cannot_be_picked(member, deployment):
    body = {"name": "hidden", "url": "http://127.0.0.1:9/", "deployment": deployment.pk}
    response = member.post("/endpoints/", body)
    assert response.status_code == 422 and 'data-field="deployment"' in response.content.decode()
    assert not Endpoint.objects.exists()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"url": "http://192.0.2.10:8000/"}, "url"),  # outside the allowlist
        ({"gpus": ""}, "gpus"),  # a new deployment needs its facts
        ({"pool": "no spaces allowed"}, "pool"),
    ],
)
def test_a_refused_endpoint_names_its_field_and_stores_nothing(member, change, field):
    deployments = Deployment.objects.count()
    response = member.post("/endpoints/", {**NEW, **change})
    assert response.status_code == 422
    assert f'data-field="{field}"' in response.content.decode()
    assert not Endpoint.objects.exists() and Deployment.objects.count() == deployments


def test_a_second_endpoint_of_the_same_name_is_refused_on_the_name(member):
    assert member.post("/endpoints/", NEW).status_code == 302
    response = member.post("/endpoints/", NEW)
    assert response.status_code == 422 and 'data-field="name"' in response.content.decode()
    assert Endpoint.objects.count() == 1


def test_a_viewer_may_not_register(client, org, person):
    client.force_login(person(org, "viewer"))
    assert 'id="register-endpoint"' not in client.get("/endpoints/").content.decode()
    assert client.post("/endpoints/", NEW).status_code == 403
    assert not Endpoint.objects.exists()


@pytest.mark.parametrize(
    ("changes", "summary"),
    [
        ({"url": ""}, 'Some fields need fixing: <a href="#id_url">URL</a>.'),
        (
            {"url": "", "pool": "no spaces"},
            'Some fields need fixing: <a href="#id_url">URL</a>, <a href="#id_pool">Pool</a>.',
        ),
    ],
    ids=["one", "two"],
)
def test_the_error_summary_names_each_refused_field_once_between_commas(member, changes, summary):
    page = member.post("/endpoints/", {**NEW, **changes}).content.decode()
    assert summary in page
    assert ", ." not in page


def test_registering_with_the_pool_left_at_its_default_succeeds_on_the_demo_organisation(
    client, person
):
    from apps.accounts.models import Organization
    from apps.catalog.models import Accelerator
    from apps.jobs.management.commands.demo import DEMO_POOL, Command

    Command()._endpoint("http://127.0.0.1:9/v1")  # the demo's organization, pool and endpoint
    demo = Organization.objects.get(slug="demo")
    Accelerator.objects.get_or_create(sku="H200")  # no pool.h200 anywhere
    client.force_login(person(demo, "member"))
    form = client.get("/endpoints/").content.decode()
    assert f'<option value="{DEMO_POOL}">' in form  # the pool field lists the pools there are

    response = client.post("/endpoints/", {**NEW, "pool": ""})

    assert response.status_code == 302
    assert Endpoint.objects.get(org=demo, name=NEW["name"]).pool == DEMO_POOL


def test_a_default_pool_among_several_none_the_accelerators_is_refused_naming_them(
    member, org, broker
):
    from apps.jobs.models import Pool

    Pool.objects.filter(name="pool.h200").delete()
    one, other = broker.pool(), broker.pool()
    response = member.post("/endpoints/", {**NEW, "pool": ""})
    assert response.status_code == 422
    page = response.content.decode()
    assert 'data-field="pool"' in page and one in page and other in page
    assert not Endpoint.objects.filter(org=org, name=NEW["name"]).exists()


def test_the_deployment_list_is_searchable_and_names_each_deployment_once(member, org, document):
    import re

    first = ingest_reviewed(document=document, org=org).run.deployment
    flags = {**document["deployment"], "engine_flags": ["--other-flag"]}
    second = ingest_reviewed(
        document={**document, "idempotency_key": "another-run-key", "deployment": flags}, org=org
    ).run.deployment
    assert first.pk != second.pk and str(first) == str(second)  # alike but for their flags
    page = member.get("/endpoints/").content.decode()
    assert 'data-narrows="#id_deployment"' in page
    select = page[page.index('<select name="deployment"') :]
    options = re.findall(
        r"<option value=\"\d+\"[^>]*>([^<]*)</option>", select[: select.index("</select>")]
    )
    assert len(options) == len(set(options)) >= 2


def test_the_deployment_list_names_deployments_as_the_compare_picker_does(member, org, document):
    import re

    from apps.catalog.labels import deployment_names

    ingest_reviewed(document=document, org=org)
    flags = {**document["deployment"], "engine_flags": ["--other-flag"]}
    ingest_reviewed(
        document={**document, "idempotency_key": "another-run-key", "deployment": flags}, org=org
    )
    page = member.get("/endpoints/").content.decode()
    select = page[page.index('<select name="deployment"') :]
    options = dict(
        re.findall(
            r"<option value=\"(\d+)\"[^>]*>([^<]*)</option>", select[: select.index("</select>")]
        )
    )
    listed = Deployment.objects.filter(pk__in=[int(pk) for pk in options])
    named = deployment_names(listed.select_related("model", "accelerator", "engine"))
    assert {int(pk): html.unescape(text) for pk, text in options.items()} == named
    # Told apart by the flag that differs, not by their ids.
    assert any("--other-flag" in text for text in named.values())
    assert not any("(#" in text for text in named.values())
