import json

import pytest
from django.core.management import call_command

from apps.runs.models import Point, RequestRecord, Run

pytestmark = pytest.mark.django_db


def test_a_runs_document_exports_with_its_records_and_validates(client, document, auth):
    run_id = client.post("/api/v1/runs", json.dumps(document), "application/json", **auth).json()[
        "id"
    ]
    exported = client.get(f"/api/v1/runs/{run_id}/document").json()
    assert exported["points"][0]["records"] == document["points"][0]["records"]
    assert exported["idempotency_key"] == document["idempotency_key"]
    lines = client.get(f"/api/v1/runs/{run_id}/requests.jsonl").getvalue().decode().splitlines()
    assert [json.loads(line)["ttft_ms"] for line in lines] == [410, 490]
    assert json.loads(lines[0])["point"] == 0


def test_a_private_runs_export_is_404_for_others(client, document, auth):
    run_id = client.post(
        "/api/v1/runs?private=true", json.dumps(document), "application/json", **auth
    ).json()["id"]
    assert client.get(f"/api/v1/runs/{run_id}/document").status_code == 404
    assert client.get(f"/api/v1/runs/{run_id}/requests.jsonl").status_code == 404


def test_an_exported_document_imports_into_a_fresh_database_with_the_same_figures(
    client, document, auth, tmp_path
):
    run_id = client.post("/api/v1/runs", json.dumps(document), "application/json", **auth).json()[
        "id"
    ]
    page_before = client.get(f"/runs/{run_id}/").content.decode()
    exported = tmp_path / "run.json"
    exported.write_bytes(client.get(f"/api/v1/runs/{run_id}/document").content)
    Run.objects.all().delete()  # what a fresh database holds of runs: nothing
    assert (Point.objects.count(), RequestRecord.objects.count()) == (0, 0)

    call_command("importresults", str(exported))
    run = Run.objects.get()
    page_after = client.get(f"/runs/{run.pk}/").content.decode()
    table = page_before.split('id="points"')[1].split("</table>")[0]
    assert table == page_after.split('id="points"')[1].split("</table>")[0]
    assert RequestRecord.objects.count() == 2
