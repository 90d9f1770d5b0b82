"""Retention: request records of old public runs moved to compressed Parquet files.

One file per run (zstd, the points' ordinals and every record column, in the order the
exports give them), in a local folder or on S3-compatible storage (settings.py). A run's
rows are deleted only in the transaction that wrote its file and read it back (digest and
row count), with the run's points locked: a failure or a crash anywhere before the commit
leaves every row in the table, and a rerun writes the file again. Reads go through
apps.runs.selectors.point_record_rows, which reads the file once the run has a RecordArchive.
"""

import hashlib
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from django.conf import settings
from django.db import models, transaction
from django.db.models import Exists, OuterRef, QuerySet

from apps.runs.models import REQUEST_RECORD_FIELDS, Point, RecordArchive, RequestRecord, Run

# Rows per Parquet row group: a reader of one point skips the groups of the others.
ROW_GROUP = 65_536
ORDINAL = "point"


class ArchiveMismatch(Exception):
    """The file read back is not what was written, or the rows changed underneath: nothing
    was deleted."""


@dataclass(frozen=True)
class ArchiveOutcome:
    run_id: int
    records: int
    location: str = ""
    sha256: str = ""
    size_bytes: int = 0


def runs_archivable(*, older_than: datetime) -> QuerySet[Run]:
    """Public runs created before `older_than` with records still in the table and no
    archive yet (a run archived once is never written over: its file is the record)."""
    in_table = RequestRecord.objects.filter(point__run=OuterRef("pk"))
    return (
        Run.objects.filter(is_public=True, created_at__lt=older_than, record_archive=None)
        .filter(Exists(in_table))
        .order_by("created_at", "id")
        .only("id", "created_at")
    )


def records_archive(
    *,
    older_than: datetime,
    dry_run: bool = False,
    on_progress: Callable[[int, int, ArchiveOutcome], None] | None = None,
) -> list[ArchiveOutcome]:
    """Archive the records of every archivable run (see runs_archivable), oldest first.

    `dry_run` counts what would move and writes nothing. `on_progress(done, total, outcome)`
    after each run. A run that fails raises, and the runs before it stay archived.
    """
    runs = list(runs_archivable(older_than=older_than))
    outcomes = []
    for done, run in enumerate(runs, start=1):
        if dry_run:
            outcome = ArchiveOutcome(
                run_id=run.pk, records=RequestRecord.objects.filter(point__run=run).count()
            )
        else:
            outcome = run_records_archive(run=run)
        outcomes.append(outcome)
        if on_progress is not None:
            on_progress(done, len(runs), outcome)
    return outcomes


def run_records_archive(*, run: Run) -> ArchiveOutcome:
    """Write one run's records to its file, check it, then delete the rows and mark the run."""
    with transaction.atomic():
        # Locked as run_records_attach locks them: no record is added between read and delete.
        point_ids = list(
            Point.objects.select_for_update().filter(run=run).values_list("pk", flat=True)
        )
        rows = list(
            RequestRecord.objects.filter(point_id__in=point_ids)
            .order_by("point__ordinal", "i", "id")
            .values_list("point__ordinal", *REQUEST_RECORD_FIELDS)
        )
        data = _parquet_bytes(rows)
        digest = hashlib.sha256(data).hexdigest()
        location = archive_location(run_id=run.pk)
        _write(location, data)
        _check(location, digest, len(rows))
        deleted, _ = RequestRecord.objects.filter(point_id__in=point_ids).delete()
        if deleted != len(rows):
            raise ArchiveMismatch(f"run {run.pk}: {len(rows)} records written, {deleted} deleted")
        RecordArchive.objects.create(
            run=run, location=location, sha256=digest, records=len(rows), size_bytes=len(data)
        )
    return ArchiveOutcome(
        run_id=run.pk, records=len(rows), location=location, sha256=digest, size_bytes=len(data)
    )


def archive_location(*, run_id: int) -> str:
    """Where a run's file goes, as the URI stored on its RecordArchive."""
    name = f"run-{run_id}-records.parquet"
    if settings.RECORDS_ARCHIVE_S3_BUCKET:
        return f"s3://{settings.RECORDS_ARCHIVE_S3_BUCKET}/{name}"
    return (settings.RECORDS_ARCHIVE_DIR.resolve() / name).as_uri()


def archived_rows(
    archive: RecordArchive, *, columns: Sequence[str], ordinals: Collection[int] | None = None
) -> Iterator[tuple]:
    """(point ordinal, *columns) per record of an archived run, in the file's (export) order."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    fs, path = _filesystem(archive.location)
    with fs.open_input_file(path) as handle:
        reader = pq.ParquetFile(handle)
        for batch in reader.iter_batches(batch_size=ROW_GROUP, columns=[ORDINAL, *columns]):
            if ordinals is not None:
                batch = batch.filter(pc.is_in(batch.column(ORDINAL), _int32s(ordinals)))
            yield from zip(*(column.to_pylist() for column in batch.columns), strict=True)


def _int32s(values: Collection[int]):
    import pyarrow as pa

    return pa.array(list(values), type=pa.int32())


def _schema():
    import pyarrow as pa

    # The column types the table has, so values read back compare equal to the rows'.
    kinds = {
        models.FloatField: pa.float64(),
        models.PositiveSmallIntegerField: pa.int32(),
        models.PositiveIntegerField: pa.int64(),
        models.CharField: pa.string(),
    }
    fields = [pa.field(ORDINAL, pa.int32(), nullable=False)]
    for name in REQUEST_RECORD_FIELDS:
        field = RequestRecord._meta.get_field(name)
        fields.append(pa.field(name, kinds[type(field)], nullable=field.null))
    return pa.schema(fields)


def _parquet_bytes(rows: list[tuple]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _schema()
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(schema)
    table = pa.table(
        [
            pa.array(list(values), type=field.type)
            for values, field in zip(columns, schema, strict=True)
        ],
        schema=schema,
    )
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd", row_group_size=ROW_GROUP)
    return sink.getvalue().to_pybytes()


def _filesystem(location: str):
    """(pyarrow filesystem, path in it) for a stored location."""
    from pyarrow import fs

    if location.startswith("s3://"):
        # "http://minio:9000", or "minio:9000" meaning HTTPS: pyarrow takes the scheme apart.
        raw = settings.RECORDS_ARCHIVE_S3_ENDPOINT
        endpoint = urlsplit(raw if "://" in raw else f"https://{raw}") if raw else None
        s3 = fs.S3FileSystem(
            endpoint_override=endpoint.netloc if endpoint else None,
            scheme=endpoint.scheme if endpoint else "https",
            region=settings.RECORDS_ARCHIVE_S3_REGION or None,
        )
        return s3, location.removeprefix("s3://")
    local, path = fs.FileSystem.from_uri(location)
    return local, path


def _write(location: str, data: bytes) -> None:
    fs, path = _filesystem(location)
    if location.startswith("s3://"):
        # An S3 object appears whole when its upload completes, never half-written.
        with fs.open_output_stream(path) as out:
            out.write(data)
        return
    # A local file is written aside and renamed into place: a reader never sees half of it.
    fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
    with fs.open_output_stream(f"{path}.partial") as out:
        out.write(data)
    fs.move(f"{path}.partial", path)


def _check(location: str, digest: str, count: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    fs, path = _filesystem(location)
    with fs.open_input_file(path) as handle:
        data = handle.read()
    if hashlib.sha256(data).hexdigest() != digest:
        raise ArchiveMismatch(f"{location} reads back with another digest")
    if pq.read_metadata(pa.BufferReader(data)).num_rows != count:
        raise ArchiveMismatch(f"{location} reads back with another number of records")
