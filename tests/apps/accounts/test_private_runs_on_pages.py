import pytest

from apps.accounts.models import Role
from apps.accounts.services import organization_get_or_create
from tests.reviews import approved, ingest_reviewed

pytestmark = pytest.mark.django_db


@pytest.fixture
def private_run(org, document):
    return ingest_reviewed(document=document, org=org, is_public=False).run


def board(client, run, extra: str = "") -> str:
    url = f"/?model={run.deployment.model.name}&scenario={run.scenario.slug}{extra}"
    return client.get(url).content.decode()


def test_members_see_their_private_run_badged_and_can_hide_it(client, org, person, private_run):
    client.force_login(person(org, Role.VIEWER))
    html = board(client, private_run)
    assert f"/runs/{private_run.pk}/" in html and "badge-private" in html
    assert f"/runs/{private_run.pk}/" not in board(client, private_run, "&private=0")
    assert client.get(f"/runs/{private_run.pk}/").status_code == 200


def test_anonymous_visitors_and_other_organizations_see_only_public_runs(
    client, person, private_run
):
    assert f"/runs/{private_run.pk}/" not in board(client, private_run)
    assert client.get(f"/runs/{private_run.pk}/").status_code == 404
    client.force_login(person(organization_get_or_create(slug="rival"), Role.OWNER))
    assert f"/runs/{private_run.pk}/" not in board(client, private_run)
    assert client.get(f"/runs/{private_run.pk}/").status_code == 404


def test_a_published_run_reaches_anonymous_visitors_and_the_cache_keeps_no_person(
    client, org, person, private_run
):
    anonymous_before = board(client, private_run)  # cached for anonymous visitors
    assert f"/runs/{private_run.pk}/" not in anonymous_before
    admin = person(org, Role.ADMIN, email="admin@example.com")
    client.force_login(admin)
    assert "admin@example.com" in board(client, private_run)
    assert 'id="publish"' in client.get(f"/runs/{private_run.pk}/").content.decode()
    client.post(f"/org/runs/{private_run.pk}/publish/")
    client.logout()
    # Public now, and self-reported: it ranks once a reviewer approved it (issue 53).
    approved(private_run)
    html = board(client, private_run)
    assert f"/runs/{private_run.pk}/" in html and "badge-private" not in html
    assert "admin@example.com" not in html


@pytest.mark.usefixtures("costs_site")
def test_costs_and_accuracy_show_a_members_private_run_badged_and_hide_it_from_others(
    client, org, person, document
):
    from tests.apps.costs.test_page import SEED_SLO, all_succeeded
    from tests.factories import document as make_document

    priced = ingest_reviewed(document=all_succeeded(document), org=org, is_public=False).run
    gsm = {"protocol": "gsm8k-5shot-v1", "task": "gsm8k", "metric": "exact_match_numeric"}
    scored = ingest_reviewed(
        document=make_document(accuracy=[{**gsm, "n": 1319, "score": 0.955}]),
        org=org,
        is_public=False,
    ).run
    pages = ((f"/costs/?{SEED_SLO}", priced), ("/accuracy/?", scored))
    for page, run in pages:
        assert f"/runs/{run.pk}/" not in client.get(page).content.decode()
    client.force_login(person(org, Role.VIEWER))
    for page, run in pages:
        html = client.get(page).content.decode()
        assert f"/runs/{run.pk}/" in html and "badge-private" in html, page
        hidden = client.get(f"{page}&private=0").content.decode()
        assert f"/runs/{run.pk}/" not in hidden, page


def test_a_private_accuracy_score_never_shows_beside_a_deployments_public_row(client, org, person):
    from tests.factories import document as make_document

    gsm = {"protocol": "gsm8k-5shot-v1", "task": "gsm8k", "metric": "exact_match_numeric"}
    # BF16: the public run ranks without an accuracy result (the board's rules ask one only of
    # quantized deployments), so it has none of its own.
    public = ingest_reviewed(document=make_document(quantization="BF16"), org=org).run
    ingest_reviewed(
        document=make_document(quantization="BF16", accuracy=[{**gsm, "n": 1319, "score": 0.4242}]),
        org=org,
        is_public=False,
    )
    # The public run has no accuracy of its own: any gsm8k score shown would be the private one.
    assert "gsm8k 42%" not in board(client, public)
    assert "gsm8k" not in client.get(f"/deployments/{public.deployment_id}/").content.decode()
    client.force_login(person(org, Role.MEMBER))
    assert "gsm8k 42%" in board(client, public)
    runs_page = client.get("/runs/").content.decode()
    assert "badge-private" in runs_page
