import copy

import pytest

from apps.accounts.models import AuditEvent, Role
from apps.accounts.services import token_create, token_revoke
from apps.runs.models import Run

pytestmark = pytest.mark.django_db


def post_run(client, document, auth, key: str):
    document = copy.deepcopy(document)
    document["idempotency_key"] = f"ratelimit-test-{key}-0000"
    return client.post("/api/v1/runs", document, content_type="application/json", **auth)


def test_writes_past_the_token_limit_get_429_with_retry_after(client, auth, document, settings):
    settings.RATE_LIMIT_TOKEN_WRITES = "2/3600"
    assert post_run(client, document, auth, "a").status_code == 201
    assert post_run(client, document, auth, "b").status_code == 201
    refused = post_run(client, document, auth, "c")
    assert refused.status_code == 429
    # A sliding window: the writes counted in this window weigh on the next one as it slides.
    assert 1 <= int(refused["Retry-After"]) <= 2 * 3600
    assert "token" in refused.json()["detail"]
    assert not Run.objects.filter(idempotency_key="ratelimit-test-c-0000").exists()
    submitted = AuditEvent.objects.filter(action="run.submitted").values_list("target", flat=True)
    assert sorted(submitted) == sorted(f"run {run.pk}" for run in Run.objects.all())


def test_the_organization_limit_covers_all_its_tokens(client, org, document, settings):
    settings.RATE_LIMIT_TOKEN_WRITES = "100/3600"
    settings.RATE_LIMIT_ORG_WRITES = "1/3600"
    first, second = (
        {"HTTP_AUTHORIZATION": f"Bearer {token_create(org=org).plaintext}"} for _ in range(2)
    )
    assert post_run(client, document, first, "a").status_code == 201
    refused = post_run(client, document, second, "b")
    assert refused.status_code == 429 and "organization" in refused.json()["detail"]


def test_the_audit_trail_records_tokens_jobs_and_publishing(client, org, person, document):
    from apps.runs.services import run_ingest

    owner = person(org, Role.OWNER)
    client.force_login(owner)
    client.post("/org/tokens/", {"name": "ci"})
    token = org.tokens.get(name="ci")
    run = run_ingest(document=document, org=org, is_public=False).run
    assert client.post(f"/org/runs/{run.pk}/publish/").status_code == 302
    run.refresh_from_db()
    assert run.is_public and run.visibility_changed_by == owner.email
    client.post(f"/org/tokens/{token.pk}/revoke/")
    actions = list(AuditEvent.objects.filter(org=org).values_list("action", "actor"))
    assert ("token.created", owner.email) in actions
    assert ("run.published", owner.email) in actions
    assert ("token.revoked", owner.email) in actions
    page = client.get("/org/").content.decode()
    assert "run.published" in page and "token.revoked" in page


def test_a_member_cannot_publish_and_another_organization_sees_no_trail(
    client, org, person, document
):
    from apps.accounts.services import organization_get_or_create
    from apps.runs.services import run_ingest

    run = run_ingest(document=document, org=org, is_public=False).run
    client.force_login(person(org, Role.MEMBER))
    assert client.post(f"/org/runs/{run.pk}/publish/").status_code == 403
    run.refresh_from_db()
    assert not run.is_public
    issued = token_create(org=org, name="x")
    token_revoke(token=issued.token, actor="someone@example.com")
    client.force_login(person(organization_get_or_create(slug="rival"), Role.OWNER))
    assert "someone@example.com" not in client.get("/org/").content.decode()
    assert client.post(f"/org/runs/{run.pk}/publish/").status_code == 404
