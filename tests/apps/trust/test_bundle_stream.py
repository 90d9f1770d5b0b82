"""The bundle is streamed: the zip is written as it is sent, in chunks, from records read as
it goes; what it holds is what the whole-document reader gives (selectors.run_document)."""

import io
import json
import zipfile

import pytest

from apps.runs import selectors
from apps.runs.services import run_ingest
from apps.trust import bundle

pytestmark = pytest.mark.django_db


@pytest.fixture
def large_run(document, org):
    template = document["points"][0]["records"][0]
    records = [{**template, "i": i, "t_sched_ms": i * 7.5, "t_send_ms": i * 7.5 + 0.1}
               for i in range(3000)]  # fmt: skip
    document["points"][0]["records"] = records
    document["points"][0]["requests"] = {"total": 3000, "succeeded": 3000, "failed": 0}
    return run_ingest(document=document, org=org, is_public=True).run


def unzip(body: bytes, run) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        assert archive.testzip() is None
        return {
            name.removeprefix(f"run-{run.pk}/"): archive.read(name) for name in archive.namelist()
        }


def test_the_streamed_zip_holds_the_document_records_and_their_hashes(client, large_run):
    response = client.get(f"/runs/{large_run.pk}/bundle.zip")
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"] == "application/zip"
    files = unzip(b"".join(response.streaming_content), large_run)
    assert set(files) == {
        "result.json", "requests.jsonl", "scenario.json", "deployment.yaml",
        "server_metrics.json", "reproduce.sh", "README.txt",
    }  # fmt: skip
    assert json.loads(files["result.json"]) == selectors.run_document(run=large_run)
    lines = files["requests.jsonl"].decode().splitlines()
    assert len(lines) == 3000 + 0 and json.loads(lines[-1])["i"] == 2999
    import hashlib

    hashes = json.loads(files["scenario.json"])["files_sha256"]
    assert hashes == {
        name: hashlib.sha256(files[name]).hexdigest()
        for name in ("result.json", "requests.jsonl", "deployment.yaml", "server_metrics.json",
                     "reproduce.sh")
    }  # fmt: skip


def test_the_zip_comes_in_chunks_not_at_once(large_run, monkeypatch):
    monkeypatch.setattr(bundle, "CHUNK_BYTES", 256)
    chunks = list(bundle.bundle_chunks(run=large_run))
    assert len(chunks) > 3
    assert unzip(b"".join(chunks), large_run)["result.json"]


def test_a_run_without_records_still_bundles(document, org):
    for point in document["points"]:
        point.pop("records", None)
    run = run_ingest(document=document, org=org, is_public=True).run
    files = unzip(b"".join(bundle.bundle_chunks(run=run)), run)
    assert json.loads(files["result.json"]) == selectors.run_document(run=run)
    assert files["requests.jsonl"] == b""


def test_bundles_are_limited_per_client_address(client, large_run, settings):
    settings.RATE_LIMIT_BUNDLES = "2/60"
    url = f"/runs/{large_run.pk}/bundle.zip"
    for _ in range(2):
        assert client.get(url, REMOTE_ADDR="203.0.113.7").status_code == 200
    refused = client.get(url, REMOTE_ADDR="203.0.113.7")
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) >= 1
    assert "too many bundle downloads for this client address" in refused.content.decode()
    # Another client is not held by the first one's downloads.
    assert client.get(url, REMOTE_ADDR="198.51.100.9").status_code == 200
