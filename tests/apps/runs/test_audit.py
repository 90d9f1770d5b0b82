"""The row audit on the shipped data (issue 51): `loadreference` stores every row, flags the
ones that contradict themselves with their reasons, and GET /api/v1/audit, /audit/ and each
run's page show them; flagged runs are neither ranked nor priced by default. Every expected
count is computed here from the stored documents, never written down: the importer's
denominators (and so the counts) may change."""

from __future__ import annotations

import copy
from collections import Counter

import pytest
from django.core.management import call_command
from django.db import transaction

from apps.costs.curve_selectors import procurement_curves
from apps.costs.formulas import TokenKind
from apps.runs.models import Run
from apps.runs.services import run_ingest
from tests.conftest import example
from workers import audit
from workers import results as doc

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def snapshot_loaded(django_db_setup, django_db_blocker):
    """`loadreference` once for this module, rolled back after it (as tests/apps/imports)."""
    with django_db_blocker.unblock(), transaction.atomic():
        call_command("loadreference", verbosity=0)
        yield
        transaction.set_rollback(True)


def expected() -> dict[int, list[str]]:
    """Run id -> the audit's reason codes, computed from each stored document."""
    found = {}
    for pk, document in Run.objects.values_list("pk", "document"):
        reasons = audit.audit(doc.parse_document(document))
        if reasons:
            found[pk] = [reason.code for reason in reasons]
    return found


def test_the_shipped_rows_that_contradict_themselves_are_stored_flagged(snapshot_loaded):
    flagged = expected()
    assert flagged, "the shipped snapshot has rows whose figures disagree (issue 51)"
    stored = {
        pk: [r["code"] for r in reasons]
        for pk, reasons in Run.objects.filter(audit_flagged=True).values_list("pk", "audit_reasons")
    }
    assert stored == flagged
    # Nothing dropped: every row of the snapshot is stored, flagged or not.
    assert Run.objects.filter(origin="imported").count() > len(flagged)
    # Flagged runs fail the board's rule and are never its default rows.
    rules = Run.objects.filter(pk__in=flagged).values_list("rules_passed", "rules_failed")
    assert all(
        not passed and any(f["rule"] == "audit_passed" for f in failed) for passed, failed in rules
    )


def test_the_audit_api_lists_every_flagged_run_with_counts_per_reason_and_accelerator(
    client, snapshot_loaded
):
    flagged = expected()
    skus = dict(
        Run.objects.filter(pk__in=flagged).values_list("pk", "deployment__accelerator__sku")
    )
    by_reason = Counter(code for codes in flagged.values() for code in set(codes))
    by_accelerator = Counter(skus.values())
    body = client.get("/api/v1/audit", {"limit": 200}).json()
    assert body["count"] == len(flagged)
    assert body["counts"] == {"by_reason": dict(by_reason), "by_accelerator": dict(by_accelerator)}
    item = body["items"][0]
    assert item["page"] == f"/runs/{item['run_id']}/" and item["url"].endswith(
        f"/runs/{item['run_id']}"
    )
    assert [r["code"] for r in item["reasons"]] == flagged[item["run_id"]]
    assert all(r["paths"] and r["message"] for r in item["reasons"])
    # Pages: ninja's limit and offset, every run once.
    seen = set()
    for offset in range(0, len(flagged), 200):
        page = client.get("/api/v1/audit", {"limit": 200, "offset": offset}).json()
        seen |= {row["run_id"] for row in page["items"]}
    assert seen == set(flagged)


def test_the_audit_api_filters_by_reason_accelerator_and_source(client, snapshot_loaded):
    flagged = expected()
    code, _ = Counter(c for codes in flagged.values() for c in set(codes)).most_common(1)[0]
    body = client.get("/api/v1/audit", {"reason": code, "limit": 200}).json()
    assert body["count"] == sum(code in codes for codes in flagged.values())
    assert all(code in [r["code"] for r in row["reasons"]] for row in body["items"])
    sku = Run.objects.filter(pk__in=flagged).values_list("deployment__accelerator__sku")[0][0]
    body = client.get("/api/v1/audit", {"accelerator": sku.lower(), "limit": 200}).json()
    assert (
        body["count"]
        == Run.objects.filter(pk__in=flagged, deployment__accelerator__sku=sku).count()
    )
    assert client.get("/api/v1/audit", {"source": "imported"}).json()["count"] == len(flagged)
    assert client.get("/api/v1/audit", {"source": "scheduled"}).json()["count"] == 0
    refused = client.get("/api/v1/audit", {"reason": "no_such_check"})
    assert refused.status_code == 422 and refused.json()["detail"][0]["path"] == "reason"


def test_the_audit_page_and_each_run_page_show_the_audit(client, snapshot_loaded):
    flagged = expected()
    page = client.get("/audit/").content.decode()
    assert f'id="audit-total">{len(flagged)} flagged runs' in page
    assert all(f'data-reason="{code}"' in page for codes in flagged.values() for code in codes)
    partial = client.get("/audit/", HTTP_HX_REQUEST="true")
    assert partial.content.decode().lstrip().startswith('<section id="audit-table">')
    run_id, codes = next(iter(flagged.items()))
    detail = client.get(f"/runs/{run_id}/").content.decode()
    assert 'id="audit-reasons"' in detail and f'data-code="{codes[0]}"' in detail
    clean = Run.objects.exclude(pk__in=flagged).values_list("pk", flat=True)[0]
    assert "passes every check of the row audit" in client.get(f"/runs/{clean}/").content.decode()


def test_flagged_runs_are_not_priced_on_costs(snapshot_loaded):
    flagged = set(expected())
    curves = procurement_curves(org=None, kind=TokenKind.OUTPUT)
    assert curves and not {curve.run_id for curve in curves} & flagged


def test_audit_runs_flags_runs_stored_before_the_audit(snapshot_loaded):
    flagged = expected()
    Run.objects.filter(pk__in=flagged).update(audit_reasons=[], audit_flagged=False)
    call_command("audit_runs", verbosity=0)
    assert set(Run.objects.filter(audit_flagged=True).values_list("pk", flat=True)) == set(flagged)


def test_an_imported_document_that_contradicts_itself_is_stored_flagged_and_a_measured_one_refused(
    org,
):
    body = copy.deepcopy(example())
    body["points"] = body["points"][:1]
    body["points"][0].pop("records", None)
    body["points"][0]["throughput"]["total_tok_s"] = 1  # below its own output
    with pytest.raises(doc.DocumentError) as refused:
        run_ingest(document=body, org=org)
    assert refused.value.errors[0][0] == "points[0].throughput.output_tok_s"
    assert not Run.objects.filter(idempotency_key=body["idempotency_key"]).exists()
    body["provenance"] = "imported"
    run = run_ingest(document=body, org=org).run
    assert run.audit_flagged and [r["code"] for r in run.audit_reasons] == ["output_above_total"]
