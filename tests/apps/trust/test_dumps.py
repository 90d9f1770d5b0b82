"""Public dumps hold every public run and no private one, whoever asks."""

import csv
import io
import json

import pytest

from apps.runs.services import run_ingest
from tests.factories import document

pytestmark = pytest.mark.django_db


def body(response) -> str:
    return b"".join(response.streaming_content).decode()


def test_the_dumps_hold_every_public_run_and_no_private_one(client, org, person):
    public = [
        run_ingest(document=document(accelerator=sku), org=org).run for sku in ("B200", "H200")
    ]
    private = run_ingest(document=document(accelerator="MI300X"), org=org, is_public=False).run
    # A member of the organization sees the private run on pages, never in a dump.
    client.force_login(person(org, "admin"))

    lines = body(client.get("/data/runs.jsonl")).splitlines()
    documents = [json.loads(line) for line in lines]
    assert sorted(d["run_id"] for d in documents) == sorted(r.pk for r in public)
    assert all(d["schema"] == "inferboard.run/v1" and d["origin"] for d in documents)

    rows = list(csv.DictReader(io.StringIO(body(client.get("/data/points.csv")))))
    assert {int(r["run_id"]) for r in rows} == {r.pk for r in public}
    assert private.pk not in {int(r["run_id"]) for r in rows}
    assert len(rows) == 3 * len(public)  # every point of every public run
    assert {r["origin"] for r in rows} == {"submitted"}
