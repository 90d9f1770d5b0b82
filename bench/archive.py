"""Request records on disk and in the archive: table size per 100,000 records, archive
throughput, and a run's requests.jsonl export read from the table and from its Parquet file.

    python bench/archive.py [--runs 4] [--points 5] [--records 20000]

Ingests `runs` runs of `points` x `records` request records through the service
(bench/ingest.py's document with random latencies and token counts), measures the
partitioned table (heap and indexes, after VACUUM ANALYZE), archives every run with
apps.runs.archive.records_archive into a temporary folder, and times one run's
requests.jsonl export before and after. Uses the PostgreSQL at DATABASE_URL (default:
postgres://postgres@127.0.0.1:5432/inferboard_bench); the database is created and
dropped by the run.
"""

import argparse
import json
import random
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path

from _db import scratch_postgres


def _sizes(cursor) -> tuple[int, int, int]:
    """(partitions, heap bytes, index bytes) of the record table's partitions."""
    cursor.execute(
        "SELECT count(*), COALESCE(sum(pg_table_size(inhrelid)), 0),"
        " COALESCE(sum(pg_indexes_size(inhrelid)), 0) FROM pg_inherits"
        " WHERE inhparent = 'runs_requestrecord'::regclass"
    )
    partitions, heap, index = cursor.fetchone()
    return int(partitions), int(heap), int(index)


def _export_seconds(run, repeat: int = 3) -> tuple[float, int]:
    """Seconds to build the run's requests.jsonl body as the API does (the fastest of
    `repeat`, so that importing pyarrow once is not counted), and its bytes."""
    from apps.runs import selectors

    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        body = "".join(
            json.dumps({"point": r.pop("point__ordinal"), **r}) + "\n"
            for r in selectors.run_records(run=run)
        ).encode()
        best = min(best, time.perf_counter() - start)
    return best, len(body)


def _document(points: int, records: int, seed: int) -> bytes:
    """bench/ingest.py's document with measured-looking latencies: random, not the repeating
    patterns there, which would flatter the compression."""
    from bench.ingest import build_document

    rng = random.Random(seed)
    data = json.loads(build_document(points, records, str(uuid.uuid4())))
    for point in data["points"]:
        send = 0.0
        for record in point["records"]:
            send += rng.expovariate(1 / 12.0)
            ttft = rng.lognormvariate(6.0, 0.4)
            tpot = rng.uniform(3.5, 6.5)
            n_out = rng.randint(200, 1200)
            record |= {"t_sched_ms": send, "t_send_ms": send + rng.uniform(0.01, 0.2)}
            record |= {"ttft_ms": ttft, "ttfo_ms": ttft, "tpot_ms": tpot, "n_out": n_out}
            record |= {"e2el_ms": ttft + tpot * (n_out - 1), "chunks": n_out}
    return json.dumps(data).encode()


def measure(args: argparse.Namespace, archive_dir: Path) -> None:
    from django.conf import settings
    from django.db import connection
    from django.utils import timezone

    from apps.accounts.services import organization_get_or_create
    from apps.runs.archive import records_archive
    from apps.runs.models import RequestRecord, Run
    from apps.runs.services import run_ingest

    settings.RECORDS_ARCHIVE_DIR = archive_dir
    settings.RECORDS_ARCHIVE_S3_BUCKET = ""
    org = organization_get_or_create(slug="bench")
    documents = [_document(args.points, args.records, seed) for seed in range(args.runs)]
    start = time.perf_counter()
    for document in documents:
        run_ingest(document=document, org=org)
    ingest_s = time.perf_counter() - start
    total = RequestRecord.objects.count()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE runs_requestrecord")
        partitions, heap, index = _sizes(cursor)
    per = 100_000 / total
    print(
        f"{args.runs} runs x {args.points} points x {args.records:,} records = {total:,} records,"
        f" ingested in {ingest_s:.1f} s ({total / ingest_s:,.0f} records/s), {partitions}"
        " partition(s)"
    )
    print(
        f"  table per 100,000 records: heap {heap * per / 1e6:.1f} MB + indexes"
        f" {index * per / 1e6:.1f} MB = {(heap + index) * per / 1e6:.1f} MB"
        f" ({(heap + index) / total:.0f} bytes/record)"
    )
    run = Run.objects.order_by("id").first()
    table_s, table_bytes = _export_seconds(run)

    Run.objects.update(created_at=timezone.now() - timedelta(days=400))
    start = time.perf_counter()
    outcomes = records_archive(older_than=timezone.now())
    archive_s = time.perf_counter() - start
    archived = sum(o.records for o in outcomes)
    stored = sum(o.size_bytes for o in outcomes)
    assert archived == total and RequestRecord.objects.count() == 0
    print(
        f"  archived {archived:,} records of {len(outcomes)} runs in {archive_s:.1f} s"
        f" ({archived / archive_s:,.0f} records/s, read + write + read back + delete)"
    )
    print(
        f"  Parquet (zstd) per 100,000 records: {stored * 100_000 / archived / 1e6:.2f} MB"
        f" ({stored / archived:.1f} bytes/record; {(heap + index) / stored:.0f}x smaller than"
        " the table with its indexes)"
    )
    parquet_s, parquet_bytes = _export_seconds(run)
    assert parquet_bytes == table_bytes
    records = archived // len(outcomes)
    print(
        f"  one run's requests.jsonl ({records:,} records, {table_bytes / 1e6:.1f} MB):"
        f" {table_s:.2f} s from the table, {parquet_s:.2f} s from its Parquet file"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--points", type=int, default=5)
    parser.add_argument("--records", type=int, default=20_000, help="records per point")
    args = parser.parse_args()
    with scratch_postgres("archive.py"), tempfile.TemporaryDirectory() as folder:
        measure(args, Path(folder))


if __name__ == "__main__":
    main()
