"""The staff review queue: a Django permission (not an organization role), the checker's
findings beside each proposed run, a reason the submitter sees, and an audit record."""

import pytest
from django.contrib.auth.models import Permission

from apps.accounts.models import AuditEvent
from apps.runs.services import run_ingest
from apps.trust.models import Review
from tests.factories import document

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(person):
    user = person()
    user.user_permissions.add(Permission.objects.get(codename="review_runs"))
    return user


def test_an_admin_proposes_and_staff_approve_with_a_reason_the_submitter_sees(
    client, org, person, staff
):
    run = run_ingest(document=document(), org=org).run
    client.force_login(person(org, "admin"))
    assert client.post(f"/runs/{run.pk}/propose").status_code == 302
    # An organization's owner is not site staff: the queue is not theirs.
    assert client.get("/staff/reviews/").status_code == 403

    client.force_login(staff)
    queue = client.get("/staff/reviews/").content.decode()
    assert f'data-run="{run.pk}"' in queue and "passes every rule" in queue
    review = Review.objects.get(run=run)
    assert client.post(f"/staff/reviews/{review.pk}", {"decision": "approve"}).status_code == 400
    answer = client.post(
        f"/staff/reviews/{review.pk}", {"decision": "approve", "reason": "facts check out"}
    )
    assert answer.status_code == 302
    review.refresh_from_db()
    assert review.status == "approved" and review.decided_by == staff.get_username()
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "approved</strong>: facts check out" in page
    assert AuditEvent.objects.filter(org=org, action="review.approved").exists()


def test_a_run_that_fails_a_rule_shows_its_findings_and_cannot_be_approved(
    client, org, person, staff
):
    doc = document()
    doc["deployment"]["engine_flags"] = []
    run = run_ingest(document=doc, org=org).run
    client.force_login(person(org, "admin"))
    client.post(f"/runs/{run.pk}/propose")
    client.force_login(staff)
    queue = client.get("/staff/reviews/").content.decode()
    assert 'data-rule="engine_flags_disclosed"' in queue
    review = Review.objects.get(run=run)
    refused = client.post(f"/staff/reviews/{review.pk}", {"decision": "approve", "reason": "ok"})
    assert refused.status_code == 400 and b"fails the board" in refused.content
    rejected = client.post(
        f"/staff/reviews/{review.pk}", {"decision": "reject", "reason": "state the flags"}
    )
    assert rejected.status_code == 302
    assert "rejected</strong>: state the flags" in client.get(f"/runs/{run.pk}/").content.decode()


def test_a_private_run_cannot_be_proposed_and_strangers_cannot_propose(client, org, person):
    hidden = run_ingest(document=document(), org=org, is_public=False).run
    public = run_ingest(document=document(accelerator="B200"), org=org).run
    client.force_login(person(org, "admin"))
    assert client.post(f"/runs/{hidden.pk}/propose").status_code == 400
    client.force_login(person())
    assert client.post(f"/runs/{public.pk}/propose").status_code == 404
    assert not Review.objects.exists()


def test_it_refuses_a_non_reviewer_with_the_styled_page_and_no_traceback(
    client, org, person, caplog
):
    client.force_login(person(org, "owner"))
    with caplog.at_level("INFO"):
        response = client.get("/staff/reviews/")
    page = response.content.decode()
    assert response.status_code == 403
    # The site's frame (its navigation and footer), not Django's bare "403 Forbidden".
    assert "<h1>Not allowed</h1>" in page and '<nav aria-label="Site">' in page
    assert "/staff/reviews/" in page
    refusals = [r for r in caplog.records if "/staff/reviews/" in r.getMessage()]
    assert refusals, "the refusal is still logged, as one line"
    assert all(r.exc_info is None for r in caplog.records), "no traceback is logged"
