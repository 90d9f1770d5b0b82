"""Ingestion throughput and memory: the service against a naive save() loop and raw COPY.

    python bench/ingest.py [--points 10] [--records 10000]

Each variant runs in a fresh subprocess so its peak memory (max RSS) is its own. Uses the
PostgreSQL at DATABASE_URL (default: postgres://postgres@127.0.0.1:5432/inferboard_bench);
the database is created and dropped by the run.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/inferboard_bench"


def build_document(points: int, records: int) -> bytes:
    example = json.loads((ROOT / "tests" / "examples" / "measured-run.json").read_text())
    template = example["points"][0]
    example["idempotency_key"] = str(uuid.uuid4())
    example["accuracy"] = []
    example["points"] = []
    for level in range(points):
        point = {**template, "concurrency": 2**level, "records": []}
        point["requests"] = {"total": records, "succeeded": records, "failed": 0}
        for i in range(records):
            point["records"].append(
                {
                    "i": i,
                    "t_sched_ms": i * 10.0,
                    "t_send_ms": i * 10.0 + 0.05,
                    "ttft_ms": 400.0 + i % 97,
                    "ttfo_ms": 400.0 + i % 97,
                    "e2el_ms": 5100.0 + i % 89,
                    "tpot_ms": 4.7,
                    "n_in": 20000,
                    "n_out": 1000,
                    "cached": 12000,
                    "chunks": 1000,
                    "status": "ok",
                }
            )
        example["points"].append(point)
    return json.dumps(example).encode()


def run_variant(variant: str, points: int, records: int) -> dict:
    """Runs inside the child process, against the prepared test database."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "apps.settings")
    django.setup()
    from django.db import transaction

    from apps.accounts.services import organization_get_or_create
    from apps.runs.models import Point, RequestRecord
    from apps.runs.services import run_ingest
    from workers.results import parse_document

    body = build_document(points, records)
    org = organization_get_or_create(slug="bench")
    if variant in ("copy", "binary copy"):
        return copy_ceiling(body, org, binary=variant == "binary copy")
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    if variant == "service":
        run = run_ingest(document=body, org=org).run
    else:
        parsed = parse_document(body)
        per_point = [point.records or [] for point in parsed.points]
        for point in parsed.points:
            point.records = None
        with transaction.atomic():
            run = run_ingest(document=parsed, org=org).run
            for records_of, stored in zip(per_point, run.points.order_by("ordinal"), strict=True):
                for r in records_of:
                    RequestRecord(point=stored, **r.model_dump(exclude_none=True)).save()
    elapsed = time.perf_counter() - start
    stored = RequestRecord.objects.filter(point__run=run).count()
    assert Point.objects.filter(run=run).count() == points
    return {
        "variant": variant,
        "records": stored,
        "seconds": elapsed,
        "records_per_s": stored / elapsed,
        "document_mb": len(body) / 1e6,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "rss_growth_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024,
    }


def copy_ceiling(body: bytes, org, *, binary: bool) -> dict:
    """The ceiling: the same rows, already Python tuples, written by one raw COPY (text, or
    binary as the service writes them). Parsing, validation and the run's other rows are
    outside the timer."""
    from django.db import connection, transaction

    from apps.runs.models import REQUEST_RECORD_FIELDS, RequestRecord
    from apps.runs.services import _record_column_types, run_ingest
    from workers.results import parse_document

    data = json.loads(body)
    parsed = parse_document(body)
    for point in parsed.points:
        point.records = None
    run = run_ingest(document=parsed, org=org).run
    point_ids = list(run.points.order_by("ordinal").values_list("id", flat=True))
    rows = [
        (point_id, *(record.get(field, "" if field == "error" else None)
                     for field in REQUEST_RECORD_FIELDS))
        for point_id, point in zip(point_ids, data["points"], strict=True)
        for record in point["records"]
    ]  # fmt: skip
    columns = ", ".join(("point_id", *REQUEST_RECORD_FIELDS))
    table = RequestRecord._meta.db_table
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    with (
        transaction.atomic(),
        connection.cursor() as cursor,
        cursor.copy(f"COPY {table} ({columns}) FROM STDIN{' (FORMAT BINARY)' * binary}") as copy,
    ):
        if binary:
            copy.set_types(_record_column_types())
        for row in rows:
            copy.write_row(row)
    elapsed = time.perf_counter() - start
    return {
        "variant": "raw binary COPY" if binary else "raw COPY",
        "records": len(rows),
        "seconds": elapsed,
        "records_per_s": len(rows) / elapsed,
        "document_mb": len(body) / 1e6,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "rss_growth_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024,
    }


def child(variant: str, points: int, records: int, env: dict) -> dict:
    command = [sys.executable, __file__, "--child", variant]
    command += ["--points", str(points), "--records", str(records)]
    out = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"{variant} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--points", type=int, default=10)
    parser.add_argument("--records", type=int, default=10_000, help="records per point")
    parser.add_argument(
        "--naive-records", type=int, default=1_000, help="records per point for the save() loop"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    if args.child:
        print(json.dumps(run_variant(args.child, args.points, args.records)))
        return

    env = {**os.environ, "DATABASE_URL": os.environ.get("DATABASE_URL", DEFAULT_DB)}
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "apps.settings")
    import django

    django.setup()
    from django.db import connection

    if connection.vendor != "postgresql":
        sys.exit("bench/ingest.py measures PostgreSQL: set DATABASE_URL to a postgres:// URL")
    test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    env["DATABASE_URL"] = env["DATABASE_URL"].rsplit("/", 1)[0] + "/" + test_name
    try:
        small = child("service", args.points, args.records // 4, env)
        service = child("service", args.points, args.records, env)
        naive = child("naive", args.points, args.naive_records, env)
        ceiling = child("copy", args.points, args.records, env)
        binary = child("binary copy", args.points, args.records, env)
    finally:
        connection.creation.destroy_test_db(test_name, verbosity=0)

    print(f"ingestion of {args.points} points x {args.records:,} request records (PostgreSQL)")
    for row in (service, small, naive, ceiling, binary):
        print(
            f"  {row['variant']:15} {row['records']:>8,} records  {row['seconds']:7.2f} s  "
            f"{row['records_per_s']:>9,.0f} records/s  document {row['document_mb']:6.1f} MB  "
            f"peak RSS {row['peak_rss_mb']:6.0f} MB (+{row['rss_growth_mb']:.0f} MB ingesting)"
        )
    print(f"service / naive save() loop: {service['records_per_s'] / naive['records_per_s']:.1f}x")
    ratio = service["records_per_s"] / ceiling["records_per_s"]
    print(f"service / raw COPY of the same rows from Python tuples: {ratio:.2f}x")
    ratio = service["records_per_s"] / binary["records_per_s"]
    print(f"service / raw binary COPY of the same rows (the service's own format): {ratio:.2f}x")
    grow_doc = service["document_mb"] / small["document_mb"]
    grow_mem = service["rss_growth_mb"] / max(small["rss_growth_mb"], 1e-9)
    print(f"document grew {grow_doc:.1f}x, ingest memory grew {grow_mem:.1f}x")
    # The aim is ~2x: records held compactly (apps/runs/lean.py), not as pydantic models.
    memory = service["rss_growth_mb"] / service["document_mb"]
    print(f"memory ratio (RSS growth while ingesting / document size): {memory:.1f}x")


if __name__ == "__main__":
    main()
