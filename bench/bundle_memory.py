"""Peak memory of one bundle download (/runs/<id>/bundle.zip) of a large run, above the
process's own baseline measured in the same run, streamed as the page sends it and, for
contrast, built whole in memory as the page did before (the document with every record, then
the zip in a buffer).

    python bench/bundle_memory.py [--points 5] [--records 60000]

Ingests one public run of `points` x `records` request records (300,000 by default,
bench/ingest.py's document), then for each way: collects garbage, reads the process's
resident memory (the baseline), resets the kernel's peak counter (/proc/self/clear_refs),
downloads the bundle through Django's test client, discarding each chunk as a server would
after sending it, and reads the peak (VmHWM). Where the peak cannot be reset it falls back to
tracemalloc (Python's allocations only). Uses the PostgreSQL at DATABASE_URL (default:
postgres://postgres@127.0.0.1:5432/inferboard_bench); the database is created and dropped.
Issue 45's target: the streamed download under 100 MiB above the baseline.
"""

import argparse
import gc
import io
import json
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path

from _db import scratch_postgres

MIB = 1024 * 1024


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _measure(download: Callable[[], int]) -> tuple[int, int, int, str]:
    """(baseline bytes, peak bytes above it, bytes downloaded, how it was measured)."""
    gc.collect()
    if _reset_peak():
        baseline = _status("VmRSS")
        size = download()
        return baseline, max(0, _status("VmHWM") - baseline), size, "resident (VmHWM)"
    tracemalloc.start()
    baseline, _ = tracemalloc.get_traced_memory()
    size = download()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return baseline, peak - baseline, size, "tracemalloc"


def _whole_bundle(run) -> bytes:
    """The bundle as the page built it before streaming: every record in one document, each
    file a bytes object, the zip in a buffer."""
    from apps.runs import selectors

    document = selectors.run_document(run=run)
    records = "".join(
        json.dumps({"point": r.pop("point__ordinal"), **r}) + "\n"
        for r in selectors.run_records(run=run)
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("result.json", json.dumps(document, indent=1).encode())
        archive.writestr("requests.jsonl", records.encode())
    return out.getvalue()


def measure(args: argparse.Namespace) -> None:
    from django.conf import settings
    from django.test import Client

    from apps.runs.models import RequestRecord
    from apps.runs.services import run_ingest
    from bench.ingest import build_document

    run = run_ingest(document=build_document(args.points, args.records), org=None).run
    del build_document
    total = RequestRecord.objects.filter(point__run=run).count()
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]  # the test client's
    client = Client()

    def streamed() -> int:
        response = client.get(f"/runs/{run.pk}/bundle.zip")
        assert response.status_code == 200 and response.streaming
        size = 0
        for chunk in response.streaming_content:
            size += len(chunk)  # sent and dropped, as a server does
        response.close()
        return size

    def whole() -> int:
        return len(_whole_bundle(run))

    print(f"one public run of {total:,} request records ({args.points} points)")
    for label, download in (("streamed bundle.zip", streamed), ("built whole (before)", whole)):
        baseline, above, size, how = _measure(download)
        print(
            f"  {label}: {size / MIB:.1f} MiB zip; peak {above / MIB:.1f} MiB above a baseline"
            f" of {baseline / MIB:.1f} MiB ({how})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--points", type=int, default=5)
    parser.add_argument("--records", type=int, default=60_000, help="records per point")
    args = parser.parse_args()
    with scratch_postgres("bundle_memory.py"):
        measure(args)


if __name__ == "__main__":
    main()
