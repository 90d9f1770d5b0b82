"""Ingestion throughput and memory: the service against a naive save() loop and raw COPY.

    python bench/ingest.py [--points 10] [--records 10000] [--repeat 3]

Each variant runs in a fresh subprocess so its peak memory (max RSS) is its own; the document
is built once by this process and read from a file by each child, so a child's peak before it
ingests is its interpreter, Django and the document's bytes, and its RSS growth is what
ingesting cost. `--repeat N` runs the service and the raw COPYs N times each, taking turns
(fresh children, fresh idempotency keys), and keeps the fastest of each, the same rule on
both sides of a ratio (on a shared machine the slowest runs mostly measure the neighbours);
memory is the largest growth seen. Uses the PostgreSQL at DATABASE_URL (default:
postgres://postgres@127.0.0.1:5432/inferboard_bench); the database is created and dropped by
the run.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/inferboard_bench"


KEY_PLACEHOLDER = "00000000-0000-4000-8000-000000000000"  # as long as a UUID


def build_document(points: int, records: int, key: str | None = None) -> bytes:
    example = json.loads((ROOT / "tests" / "examples" / "measured-run.json").read_text())
    template = example["points"][0]
    example["idempotency_key"] = key or str(uuid.uuid4())
    example["accuracy"] = []
    example["points"] = []
    for level in range(points):
        concurrency = 2**level
        point = {**template, "concurrency": concurrency, "records": []}
        point["requests"] = {"total": records, "succeeded": records, "failed": 0}
        if records:
            # Figures that agree with the records (the row audit refuses a document that
            # contradicts itself): 20,000 in, 1,000 out each, over the window a closed loop
            # of this size needs at ~5.1 s a request (Little's law).
            window = records * 5.15 / concurrency
            tokens = {"input": 20000 * records, "output": 1000 * records}
            point["window_s"] = window
            point["tokens"] = {**template["tokens"], **tokens, "cached": 12000 * records}
            point["throughput"] = {
                "requests_per_s": records / window,
                "input_tok_s": tokens["input"] / window,
                "output_tok_s": tokens["output"] / window,
                "total_tok_s": (tokens["input"] + tokens["output"]) / window,
            }
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


def _status_kb(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def peak_reset() -> int:
    """Start measuring peak memory now; returns the RSS (KB) it starts from. On Linux the peak
    (VmHWM) is reset to the current RSS: a child's ru_maxrss would otherwise start from its
    parent's RSS at fork time, and from the interpreter's start-up."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return _status_kb("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def peak_kb() -> int:
    return _status_kb("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def run_variant(variant: str, points: int, records: int, document: Path) -> dict:
    """Runs inside the child process, against the prepared test database."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "apps.settings")
    django.setup()
    from django.db import transaction

    from apps.accounts.services import organization_get_or_create
    from apps.runs.models import Point, RequestRecord
    from apps.runs.services import run_ingest
    from workers.results import parse_document

    body = document.read_bytes()
    org = organization_get_or_create(slug="bench")
    if variant in ("copy", "binary copy"):
        return copy_ceiling(body, org, binary=variant == "binary copy")
    rss_before = peak_reset()
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
    peak = peak_kb()
    stored = RequestRecord.objects.filter(point__run=run).count()
    assert Point.objects.filter(run=run).count() == points
    return {
        "variant": variant,
        "records": stored,
        "seconds": elapsed,
        "records_per_s": stored / elapsed,
        "document_mb": len(body) / 1e6,
        "peak_rss_mb": peak / 1024,
        "rss_growth_mb": (peak - rss_before) / 1024,
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
    rss_before = peak_reset()
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
    peak = peak_kb()
    return {
        "variant": "raw binary COPY" if binary else "raw COPY",
        "records": len(rows),
        "seconds": elapsed,
        "records_per_s": len(rows) / elapsed,
        "document_mb": len(body) / 1e6,
        "peak_rss_mb": peak / 1024,
        "rss_growth_mb": (peak - rss_before) / 1024,
    }


def child(variant: str, points: int, records: int, env: dict, template: bytes) -> dict:
    """One variant in a fresh process, on the document `template` under a new key."""
    with tempfile.NamedTemporaryFile(suffix=".json") as document:
        document.write(template.replace(KEY_PLACEHOLDER.encode(), str(uuid.uuid4()).encode(), 1))
        document.flush()
        command = [sys.executable, __file__, "--child", variant, "--document", document.name]
        command += ["--points", str(points), "--records", str(records)]
        out = subprocess.run(
            command, env=env, cwd=ROOT, capture_output=True, text=True, check=False
        )
    if out.returncode != 0:
        sys.exit(f"{variant} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def best_of(repeat: int, variants: list[tuple], env: dict) -> list[dict]:
    """Each (variant, points, records, document) `repeat` times, taking turns so that each sees
    the same neighbours on a shared machine: the fastest run of each, with the largest memory
    growth any of its runs had."""
    runs: list[list[dict]] = [[] for _ in variants]
    for _ in range(repeat):
        for done, (variant, points, records, document) in zip(runs, variants, strict=True):
            done.append(child(variant, points, records, env, document))
    best = []
    for done in runs:
        fastest = max(done, key=lambda row: row["records_per_s"])
        best.append({**fastest, "rss_growth_mb": max(row["rss_growth_mb"] for row in done)})
    return best


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--points", type=int, default=10)
    parser.add_argument("--records", type=int, default=10_000, help="records per point")
    parser.add_argument(
        "--naive-records", type=int, default=1_000, help="records per point for the save() loop"
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of the service and raw COPYs; fastest kept"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--document", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    if args.child:
        print(json.dumps(run_variant(args.child, args.points, args.records, args.document)))
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
    full = build_document(args.points, args.records, KEY_PLACEHOLDER)
    quarter = build_document(args.points, args.records // 4, KEY_PLACEHOLDER)
    few = build_document(args.points, args.naive_records, KEY_PLACEHOLDER)
    n, repeat = args.points, max(args.repeat, 1)
    try:
        naive = child("naive", n, args.naive_records, env, few)
        small, service, ceiling, binary = best_of(
            repeat,
            [
                ("service", n, args.records // 4, quarter),
                ("service", n, args.records, full),
                ("copy", n, args.records, full),
                ("binary copy", n, args.records, full),
            ],
            env,
        )
    finally:
        connection.creation.destroy_test_db(test_name, verbosity=0)

    runs = f", fastest of {repeat} runs" if repeat > 1 else ""
    print(
        f"ingestion of {args.points} points x {args.records:,} request records (PostgreSQL{runs})"
    )
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
    # The aim is 0.7x or more: validation overlaps the COPY (apps/runs/pipeline.py).
    print(
        f"service / raw binary COPY of the same rows (the service's own format), "
        f"measured in this run: {ratio:.2f}x (aim >= 0.7x)"
    )
    grow_doc = service["document_mb"] / small["document_mb"]
    grow_mem = service["rss_growth_mb"] / max(small["rss_growth_mb"], 1e-9)
    print(f"document grew {grow_doc:.1f}x, ingest memory grew {grow_mem:.1f}x")
    # The aim is under 2x: records held a chunk at a time, never all as Python objects.
    memory = service["rss_growth_mb"] / service["document_mb"]
    print(
        f"peak memory while ingesting (RSS growth over the document's bytes already read) / "
        f"document size: {memory:.1f}x (aim < 2x)"
    )


if __name__ == "__main__":
    main()
