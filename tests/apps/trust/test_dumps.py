"""Public dumps hold every public run and no private one, whoever asks, and are rebuilt when
runs land."""

import csv
import io
import json

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command

from tests.factories import document
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def dump_dir(settings, tmp_path):
    settings.INFERBOARD_DUMP_DIR = tmp_path / "dumps"
    return settings.INFERBOARD_DUMP_DIR


def body(response) -> bytes:
    assert response.status_code == 200
    return b"".join(response.streaming_content)


def test_the_dumps_hold_every_public_run_and_no_private_one(
    client, org, person, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        public = [
            ingest_reviewed(document=document(accelerator=s), org=org).run for s in ("B200", "H200")
        ]
        private = ingest_reviewed(
            document=document(accelerator="MI300X"), org=org, is_public=False
        ).run
    # A member of the organization sees the private run on pages, never in a dump.
    client.force_login(person(org, "admin"))
    public_ids = sorted(r.pk for r in public)

    documents = [json.loads(line) for line in body(client.get("/data/runs.jsonl")).splitlines()]
    assert sorted(d["run_id"] for d in documents) == public_ids
    assert all(d["schema"] == "inferboard.run/v1" and d["origin"] for d in documents)

    rows = list(csv.DictReader(io.StringIO(body(client.get("/data/points.csv")).decode())))
    assert sorted({int(r["run_id"]) for r in rows}) == public_ids
    assert len(rows) == 3 * len(public)  # every point of every public run
    assert {r["origin"] for r in rows} == {"submitted"}

    table = pq.read_table(io.BytesIO(body(client.get("/data/points.parquet"))))
    assert sorted(set(table.column("run_id").to_pylist())) == public_ids
    assert private.pk not in table.column("run_id").to_pylist()
    assert table.num_rows == len(rows)
    assert client.get("/data/secrets.txt").status_code == 404


def test_a_landing_run_rebuilds_the_dump_and_the_command_builds_them_all(
    client, org, dump_dir, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        first = ingest_reviewed(document=document(), org=org).run
    before = [json.loads(x)["run_id"] for x in body(client.get("/data/runs.jsonl")).splitlines()]
    with django_capture_on_commit_callbacks(execute=True):
        second = ingest_reviewed(document=document(accelerator="B200"), org=org).run
    after = [json.loads(x)["run_id"] for x in body(client.get("/data/runs.jsonl")).splitlines()]
    assert (before, sorted(after)) == ([first.pk], sorted([first.pk, second.pk]))
    assert len(list(dump_dir.glob("*-runs.jsonl"))) == 1  # the old version is gone
    call_command("dumps_build", stdout=io.StringIO())
    assert {p.name.split("-", 1)[1] for p in dump_dir.iterdir()} == {
        "runs.jsonl",
        "points.csv",
        "points.parquet",
    }
