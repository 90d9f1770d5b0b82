"""Public bulk dumps: every public run's document (JSONL) and every point (CSV, Parquet).

Each dump is a file named by the runs version (apps.runs.services.runs_version), which
changes whenever a run lands, changes visibility or is reviewed: the first request after a
change rebuilds it, later ones are served from disk, and `manage.py dumps_build` (cron or
beat) builds them ahead of visitors. Old versions are removed once a new one is written.
Columns are documented in docs/data-dumps.md.
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

from django.conf import settings

from apps.csv_safe import safe_rows
from apps.runs.services import runs_version
from apps.trust import selectors

KINDS = {"runs.jsonl": "documents", "points.csv": "points", "points.parquet": "points"}


def dump_dir() -> Path:
    return Path(settings.INFERBOARD_DUMP_DIR)


def _write_documents(out: IO[bytes]) -> None:
    for document in selectors.public_documents():
        out.write(json.dumps(document).encode() + b"\n")


def _write_points_csv(out: IO[bytes]) -> None:
    import io

    text = io.TextIOWrapper(out, encoding="utf-8", newline="")
    writer = csv.writer(text)
    writer.writerow(selectors.POINT_COLUMNS)
    for row in safe_rows(selectors.public_points()):
        writer.writerow([row[c] for c in selectors.POINT_COLUMNS])
    text.flush()
    text.detach()


PARQUET_BATCH = 50_000


def _write_points_parquet(out: IO[bytes]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(name, kind) for name, kind in _parquet_types().items()])
    with pq.ParquetWriter(out, schema, compression="zstd") as writer:
        batch: list[dict] = []
        for row in selectors.public_points():
            batch.append(row)
            if len(batch) >= PARQUET_BATCH:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                batch.clear()
        writer.write_table(pa.Table.from_pylist(batch, schema=schema))


def _parquet_types() -> dict:
    import pyarrow as pa

    text, number, whole = pa.string(), pa.float64(), pa.int64()
    types = {name: number for name in selectors.POINT_COLUMNS}
    for name in ("run_id", "gpus", "ordinal", "concurrency"):
        types[name] = whole
    for name in (
        "origin",
        "provenance",
        "model",
        "accelerator",
        "engine",
        "engine_version",
        "quantization",
        "deployment_fingerprint",
        "scenario",
    ):
        types[name] = text
    types["rules_passed"] = pa.bool_()
    types["run_created_at"] = pa.timestamp("us", tz="UTC")
    return types


WRITERS: dict[str, Callable[[IO[bytes]], None]] = {
    "runs.jsonl": _write_documents,
    "points.csv": _write_points_csv,
    "points.parquet": _write_points_parquet,
}


def _version() -> str:
    # The runs version, plus what public runs there are: a cache that lost the version (and
    # started it again) must not name an old file as current.
    from django.db.models import Count, Max

    from apps.runs.models import Run

    public = Run.objects.filter(is_public=True).aggregate(n=Count("id"), last=Max("id"))
    return f"{runs_version()}.{public['n']}.{public['last'] or 0}"


def dump_path(name: str) -> Path:
    """The current dump `name` (a key of WRITERS), built now if the runs changed since."""
    version = _version()
    folder = dump_dir()
    path = folder / f"{version}-{name}"
    if path.exists():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    # Written beside its final name and renamed: a reader never sees half a file, and two
    # builders racing each write their own temporary file.
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            WRITERS[name](out)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    for old in folder.glob(f"*-{name}"):
        if old != path:
            old.unlink(missing_ok=True)
    return path


def dumps_build() -> list[Path]:
    return [dump_path(name) for name in WRITERS]
