"""Retention (apps/runs/archive.py): old public runs' request records moved to Parquet files,
and every page and export that reads records reading the same from the file."""

import hashlib
import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from apps.leaderboard.run_selectors import run_in_flight, run_latency_series
from apps.runs import archive
from apps.runs.models import RecordArchive, RequestRecord, Run
from apps.runs.services import run_ingest
from apps.runs.significance import _sample

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_smoke]


def _records(n: int, offset: int) -> list[dict]:
    return [
        {"i": i, "t_sched_ms": i * 10.0, "t_send_ms": i * 10.0 + 0.25, "ttft_ms": 400.0 + i % 97}
        | {"ttfo_ms": 401.5, "e2el_ms": 5100.0 + i % 89 + offset, "tpot_ms": 4.7, "n_in": 20000}
        | {"n_out": 1000 + i, "cached": 12000, "chunks": 999, "status": "ok"}
        for i in range(n)
    ]


def _document() -> dict:
    from tests.factories import document as build
    from tests.factories import point

    points = [
        point(c, output_tok_s=100, ttft_p99_ms=500, interactivity=200, records=_records(120, c))
        for c in (1, 4, 16)
    ]
    data = build(points=points)
    # Failures, nulls, absent fields and odd text: what the file must give back exactly.
    varied = data["points"][1]["records"]
    varied[3] |= {"status": "http_error", "http_status": 503, "ttft_ms": None, "e2el_ms": None}
    varied[3]["error"] = 'upstream: {"detail": "busy"} \\ naïve ☃ : retry'
    varied[4] |= {"status": "timeout", "error": "", "n_out": None}
    del varied[5]["t_sched_ms"], varied[5]["cached"]
    varied[7] |= {"status": "truncated", "error": "x" * 500}
    return data


def _old_run(org, *, days: int = 40, public: bool = True) -> Run:
    run = run_ingest(document=_document(), org=org, is_public=public).run
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(days=days))
    return Run.objects.get(pk=run.pk)


@pytest.fixture
def archive_dir(settings, tmp_path) -> Path:
    settings.RECORDS_ARCHIVE_DIR = tmp_path / "archive"
    settings.RECORDS_ARCHIVE_S3_BUCKET = ""
    return settings.RECORDS_ARCHIVE_DIR


def _reads(client, run: Run) -> dict:
    """Everything served from a run's records: exports as bytes, the page's CDF data."""
    page = client.get(f"/runs/{run.pk}/")
    assert page.status_code == 200
    run = Run.objects.get(pk=run.pk)
    return {
        "requests.jsonl": client.get(f"/api/v1/runs/{run.pk}/requests.jsonl").getvalue(),
        "document": client.get(f"/api/v1/runs/{run.pk}/document").content,
        "request_records": client.get(f"/api/v1/runs/{run.pk}").json()["request_records"],
        "cdf": page.context["cdf"],
        "records shown": page.context["records"],
        "latency": run_latency_series(run=run),
        "in flight": run_in_flight(run=run, ordinals=[0, 1, 2]),
        "sample": _sample(run.best_point, run).send_ms.tolist(),
    }


def test_it_archives_a_public_runs_records_and_its_page_and_exports_still_serve_them(
    client, org, archive_dir
):
    run = _old_run(org)
    before = _reads(client, run)
    assert before["request_records"] == 360 and before["records shown"]

    out = call_command_output("records_archive", "--older-than-days", "30")

    assert RequestRecord.objects.filter(point__run=run).count() == 0
    stored = RecordArchive.objects.get(run=run)
    path = archive_dir / f"run-{run.pk}-records.parquet"
    assert stored.location == path.resolve().as_uri()
    assert stored.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert (stored.records, stored.size_bytes) == (360, path.stat().st_size)
    assert f"run {run.pk}: archived 360 records" in out
    assert _reads(client, run) == before


def test_it_never_archives_a_private_run(org, archive_dir):
    run = _old_run(org, public=False)
    assert archive.records_archive(older_than=timezone.now()) == []
    assert RequestRecord.objects.filter(point__run=run).count() == 360
    assert not RecordArchive.objects.exists()


def test_it_keeps_the_records_of_a_run_newer_than_the_retention(org, archive_dir):
    run = _old_run(org, days=10)
    assert archive.records_archive(older_than=timezone.now() - timedelta(days=30)) == []
    assert RequestRecord.objects.filter(point__run=run).count() == 360


def test_a_rerun_archives_nothing_more_and_leaves_the_file_as_it_was(org, archive_dir):
    run = _old_run(org)
    [first] = archive.records_archive(older_than=timezone.now())
    written = Path(archive_dir / f"run-{run.pk}-records.parquet").read_bytes()

    assert archive.records_archive(older_than=timezone.now()) == []
    assert (archive_dir / f"run-{run.pk}-records.parquet").read_bytes() == written
    assert RecordArchive.objects.get(run=run).sha256 == first.sha256


def test_a_failed_write_leaves_every_row_and_a_rerun_then_archives(org, settings, tmp_path):
    run = _old_run(org)
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the archive folder should be")
    settings.RECORDS_ARCHIVE_DIR = blocked / "archive"

    with pytest.raises(OSError):
        archive.records_archive(older_than=timezone.now())
    assert RequestRecord.objects.filter(point__run=run).count() == 360
    assert not RecordArchive.objects.exists()

    settings.RECORDS_ARCHIVE_DIR = tmp_path / "archive"
    [outcome] = archive.records_archive(older_than=timezone.now())
    assert outcome.records == 360
    assert RequestRecord.objects.filter(point__run=run).count() == 0


def test_a_file_that_reads_back_otherwise_leaves_every_row(org, archive_dir, monkeypatch):
    run = _old_run(org)
    real_write = archive._write

    def fake_storage_losing_the_last_byte(location: str, data: bytes) -> None:
        real_write(location, data[:-1])

    monkeypatch.setattr(archive, "_write", fake_storage_losing_the_last_byte)
    with pytest.raises(archive.ArchiveMismatch):
        archive.records_archive(older_than=timezone.now())
    assert RequestRecord.objects.filter(point__run=run).count() == 360
    assert not RecordArchive.objects.exists()


def test_a_dry_run_names_what_would_move_and_moves_nothing(org, archive_dir):
    run = _old_run(org)
    out = call_command_output("records_archive", "--older-than-days", "30", "--dry-run")
    assert f"run {run.pk}: would archive 360 records" in out
    assert RequestRecord.objects.filter(point__run=run).count() == 360
    assert not archive_dir.exists()


def test_the_command_refuses_when_retention_is_off(settings, db):
    settings.RECORDS_RETAIN_DAYS = None
    with pytest.raises(CommandError, match="retention is off"):
        call_command("records_archive")


def test_the_command_uses_the_retention_setting(org, archive_dir, settings):
    settings.RECORDS_RETAIN_DAYS = 30
    old, recent = _old_run(org), _old_run_with_key(org, days=5)
    call_command_output("records_archive")
    assert RecordArchive.objects.filter(run=old).exists()
    assert not RecordArchive.objects.filter(run=recent).exists()


def test_an_archived_runs_requests_export_lines_parse_as_before(client, org, archive_dir):
    run = _old_run(org)
    archive.records_archive(older_than=timezone.now())
    lines = client.get(f"/api/v1/runs/{run.pk}/requests.jsonl").getvalue().splitlines()
    failed = json.loads(lines[120 + 3])
    assert (failed["point"], failed["status"], failed["http_status"]) == (1, "http_error", 503)
    assert "ttft_ms" not in failed and "t_sched_ms" not in json.loads(lines[120 + 5])


def test_an_import_bringing_records_again_adds_none_to_an_archived_run(org, archive_dir):
    from apps.runs.services import run_records_attach
    from workers.results import parse_document

    run = _old_run(org)
    archive.records_archive(older_than=timezone.now())
    document = parse_document(json.dumps(_document()).encode())
    assert run_records_attach(run=run, document=document) == 0
    assert RequestRecord.objects.filter(point__run=run).count() == 0


def _old_run_with_key(org, *, days: int) -> Run:
    data = _document()
    data["idempotency_key"] = f"{data['idempotency_key']}-recent"
    run = run_ingest(document=data, org=org).run
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(days=days))
    return run


def call_command_output(*args: str) -> str:
    from io import StringIO

    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()
