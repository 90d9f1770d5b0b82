"""The archive on S3-compatible storage, through a FAKE S3: moto's server (`moto[server]`), on
loopback. It shows that the archive's pyarrow S3 calls (endpoint override, write, read back,
read) work against the S3 protocol; it says nothing of a real provider's consistency or limits.
"""

import socket

import pytest
from django.utils import timezone
from moto import server as moto_server  # dev extra: a missing FAKE S3 fails, never skips

from apps.runs import archive
from apps.runs.models import RecordArchive, RequestRecord
from tests.apps.runs.test_archive import _old_run, _reads

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake_s3(settings, monkeypatch):
    """A moto S3 server on a free loopback port with a bucket, and the settings pointing at it."""
    from pyarrow import fs

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "fake")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake")
    settings.RECORDS_ARCHIVE_S3_BUCKET = "records/archive"
    settings.RECORDS_ARCHIVE_S3_ENDPOINT = f"http://127.0.0.1:{port}"
    settings.RECORDS_ARCHIVE_S3_REGION = "us-east-1"
    s3 = fs.S3FileSystem(
        endpoint_override=f"127.0.0.1:{port}",
        scheme="http",
        region="us-east-1",
        allow_bucket_creation=True,
    )
    s3.create_dir("records")
    yield s3
    server.stop()


def test_it_archives_to_s3_compatible_storage_and_the_run_still_reads_the_same(
    client, org, fake_s3
):
    run = _old_run(org)
    before = _reads(client, run)

    [outcome] = archive.records_archive(older_than=timezone.now())

    key = f"records/archive/run-{run.pk}-records.parquet"
    assert outcome.location == f"s3://{key}"
    assert fake_s3.get_file_info(key).size == outcome.size_bytes
    assert RecordArchive.objects.get(run=run).location == f"s3://{key}"
    assert RequestRecord.objects.filter(point__run=run).count() == 0
    assert _reads(client, run) == before
