"""The leaks a hostile probe found, each shown closed through the real API."""

import copy

import pytest

from apps.accounts.services import organization_get_or_create, token_create
from apps.jobs import services as jobs
from apps.jobs import specs
from apps.jobs.models import Pool
from apps.runs.models import Run
from tests.apps.imports.files import H200_FACTS
from tests.apps.imports.test_imports_api import SUMMARY, upload
from tests.apps.jobs.conftest import DEPLOYMENT_FACTS

pytestmark = pytest.mark.django_db


@pytest.fixture
def rival():
    org = organization_get_or_create(slug="rival")
    return {"HTTP_AUTHORIZATION": f"Bearer {token_create(org=org).plaintext}"}


def named_scenario(document, name: str) -> dict:
    document = copy.deepcopy(document)
    document["scenario"].pop("preset", None)
    document["scenario"]["name"] = name
    document["scenario"]["slo"] = {"ttft_ms": 1, "ttft_percentile": 99}
    return document


def submit(client, document, auth, private: bool):
    suffix = "?private=true" if private else ""
    response = client.post(
        f"/api/v1/runs{suffix}", document, content_type="application/json", **auth
    )
    assert response.status_code == 201, response.content
    return Run.objects.get(pk=response.json()["id"])


def test_a_foreign_private_deployment_id_is_404_when_registering_an_endpoint(
    client, auth, rival, document
):
    jobs.pools_first_party_ensure(["pool.mi355x"])  # the document's accelerator's pool
    private = submit(client, document, auth, private=True)
    body = {"name": "probe", "url": "http://127.0.0.1:9/", "deployment_id": private.deployment_id}
    probe = client.post("/api/v1/endpoints", body, content_type="application/json", **rival)
    assert probe.status_code == 404
    # Its own organization may, and so may anyone once a public run shows the deployment.
    own = client.post("/api/v1/endpoints", body, content_type="application/json", **auth)
    assert own.status_code == 201, own.content
    public = copy.deepcopy(document)
    public["idempotency_key"] = "public-one"
    submit(client, public, auth, private=False)
    assert (
        client.post("/api/v1/endpoints", body, content_type="application/json", **rival).status_code
        == 201
    )


def test_a_private_scenario_name_never_reaches_others_or_anonymous_visitors(
    client, auth, rival, document
):
    run = submit(client, named_scenario(document, "vendor X is slow"), auth, private=True)
    assert run.scenario.name == "vendor X is slow"
    anonymous = [s["name"] for s in client.get("/api/v1/scenarios").json()]
    theirs = [s["name"] for s in client.get("/api/v1/scenarios", **rival).json()]
    mine = [s["name"] for s in client.get("/api/v1/scenarios", **auth).json()]
    assert "vendor X is slow" not in anonymous + theirs
    assert "vendor X is slow" in mine
    # The rival's run of the same shape keeps its own name and the SLO it was submitted with.
    other = named_scenario(document, "")
    other["scenario"].pop("name")
    other["scenario"]["slo"] = {"ttft_ms": 5000, "ttft_percentile": 99}
    other["idempotency_key"] = "rival-run"
    theirs_run = submit(client, other, rival, private=False)
    assert theirs_run.scenario_id != run.scenario_id
    assert theirs_run.scenario.name != "vendor X is slow"
    assert theirs_run.scenario.slo_ttft_ms == 5000
    assert run.scenario.slo_ttft_ms == 1


def test_a_private_runs_accelerator_is_not_listed_anonymously(client, auth, document):
    document = copy.deepcopy(document)
    document["deployment"]["accelerator"] = "SECRET-X1"
    submit(client, document, auth, private=True)
    assert "SECRET-X1" not in [a["sku"] for a in client.get("/api/v1/accelerators").json()]
    assert "SECRET-X1" in [a["sku"] for a in client.get("/api/v1/accelerators", **auth).json()]


def test_two_organizations_import_the_same_file_independently(client, auth, rival):
    private = upload(client, SUMMARY, auth=auth, deployment=H200_FACTS, private="true")
    assert private.status_code == 201, private.content
    theirs = upload(client, SUMMARY, auth=rival, deployment=H200_FACTS)
    assert theirs.status_code == 201, theirs.content
    assert theirs.json()["runs"][0]["id"] != private.json()["runs"][0]["id"]
    assert "another organization" not in theirs.content.decode()
    assert Run.objects.count() == 2


def test_another_organizations_pool_is_not_a_pool_to_this_one(org, broker):
    rival = organization_get_or_create(slug="rival")
    Pool.objects.create(name="pool.rival-h100", org=rival)
    deployment = jobs.deployment_from_facts(**DEPLOYMENT_FACTS)
    with pytest.raises(specs.JobError) as refused:
        jobs.endpoint_create(
            org=org, name="e", url="http://127.0.0.1:9/", deployment=deployment,
            pool="pool.rival-h100",
        )  # fmt: skip
    assert refused.value.field == "pool"
    assert "rival" not in refused.value.message.replace("pool.rival-h100", "")
    # A pool name has one owner (issue 45): the rival's name is not this one's to claim, and
    # the refusal names the field without naming the rival. A name of its own is, and its
    # jobs go to its own agents, never to the rival's.
    with pytest.raises(specs.JobError) as taken:
        jobs.pool_create(org=org, name="rival-h100")
    assert taken.value.field == "name" and "rival" not in taken.value.message.replace(
        "pool.rival-h100", ""
    )
    assert Pool.objects.filter(name="pool.rival-h100").count() == 1
    mine = jobs.pool_create(org=org, name="acme-h100")
    assert mine.org == org
    endpoint = jobs.endpoint_create(
        org=org, name="e", url="http://127.0.0.1:9/", deployment=deployment, pool=mine.name
    )
    from apps.catalog.models import Scenario
    from apps.catalog.services import presets_ensure

    presets_ensure()
    jobs.job_enqueue(endpoint=endpoint, scenario=Scenario.objects.filter(is_preset=True)[0])
    theirs = Pool.objects.get(name="pool.rival-h100", org=rival)
    assert jobs.job_claim(pool=theirs, worker="rival-agent") is None
    assert jobs.job_claim(pool=mine, worker="my-agent") is not None


def test_a_private_scenario_name_stays_off_the_pages_even_for_a_guessed_slug(
    client, auth, document
):
    private = submit(client, named_scenario(document, "vendor X is slow"), auth, private=True)
    # The same deployment also has a public run, and a second deployment one, so /compare/
    # shows both deployments to anyone; its scenario menu must not offer the private one.
    same = copy.deepcopy(document)
    same["idempotency_key"] = "public-same"
    other = copy.deepcopy(document)
    other["idempotency_key"] = "public-other"
    other["deployment"]["gpus"] = 4
    other["deployment"]["parallelism"]["dp"] = 1  # TP4 on its 4 GPUs (the row audit checks)
    submit(client, same, auth, private=False)
    shown = submit(client, other, auth, private=False)
    slug = private.scenario.slug
    model = private.deployment.model.name
    board = client.get(f"/?model={model}&scenario={slug}").content.decode()
    compare = client.get(f"/compare/?d={private.deployment_id}&d={shown.deployment_id}")
    assert compare.status_code == 200
    for page in (board, compare.content.decode(), client.get("/runs/").content.decode()):
        assert "vendor X is slow" not in page


def test_an_organizations_run_joins_a_public_scenario_only_when_it_says_nothing_different(org):
    from apps.catalog.services import scenario_get_or_create
    from workers import result_facts

    shape = {"input_tokens": 512, "output_tokens": 64, "dataset": "chat"}
    slo = {"ttft_ms": 500, "ttft_percentile": 99}
    public, _ = scenario_get_or_create(
        scenario=result_facts.Scenario(name="chat", slo=slo, **shape)
    )
    assert public.created_by is None
    same = [
        result_facts.Scenario(**shape),
        result_facts.Scenario(name="chat", **shape),
        result_facts.Scenario(name="chat", slo=slo, **shape),
    ]
    for scenario in same:
        assert scenario_get_or_create(scenario=scenario, org=org) == (public, False)
    stricter = result_facts.Scenario(
        name="chat", slo={"ttft_ms": 1, "ttft_percentile": 99}, **shape
    )
    own, created = scenario_get_or_create(scenario=stricter, org=org)
    assert created and own.created_by == org and own.slo_ttft_ms == 1
    assert public.slo_ttft_ms == 500  # untouched
    assert scenario_get_or_create(scenario=stricter, org=org) == (own, False)
