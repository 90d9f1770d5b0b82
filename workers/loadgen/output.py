"""A finished sweep as output: the result document, and the request records written beside it."""

from __future__ import annotations

import json
import platform
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from workers.figures import run_status
from workers.loadgen.metrics import to_record
from workers.loadgen.runner import SweepResult
from workers.result_facts import Deployment, Environment, ModelInfo, Scenario
from workers.results import ResultDocument

LOADGEN_VERSION = "0.1.0"


def make_document(
    *,
    model: ModelInfo,
    deployment: Deployment,
    scenario: Scenario,
    result: SweepResult,
    started_at: datetime,
    interrupted: bool = False,
    extra: dict[str, Any] | None = None,
) -> ResultDocument:
    if not result.points:
        raise ValueError("no load level finished: nothing to report")
    # The one status rule from request counts (workers/figures.py); a sweep cut short is
    # partial whatever its counts say: the levels it never reached are missing.
    status = run_status(p.requests for p in result.points)
    if interrupted and status == "succeeded":
        status = "partial"
    environment_extra = dict(extra or {})
    if result.stop_reason:
        environment_extra["stop_reason"] = result.stop_reason
    if result.start_skew_ms:
        environment_extra["client_start_skew_ms"] = result.start_skew_ms
    return ResultDocument.measured(
        status=status,
        model=model,
        deployment=deployment,
        scenario=scenario,
        environment=Environment(
            host=platform.node() or None,
            loadgen_version=f"inferboard-loadgen {LOADGEN_VERSION}",
            started_at=started_at,
            finished_at=datetime.now(UTC),
            extra=environment_extra,
        ),
        points=result.points,
    )


def request_lines(result: SweepResult) -> Iterator[dict[str, Any]]:
    """Every request of every level, warm-up included (flagged), as JSON-ready dicts."""
    for point_index, (level, timings) in enumerate(zip(result.levels, result.timings, strict=True)):
        origin = min((t.t_send_ns for t in timings if not t.warmup), default=0)
        for timing in timings:
            line = {"point": point_index, "level": level.label, "warmup": timing.warmup}
            line.update(to_record(timing, origin).model_dump(mode="json", exclude_none=True))
            line["n_out_source"] = timing.n_out_source
            if timing.target_n_in is not None:
                line["target_n_in"] = timing.target_n_in
            if timing.chunk_tokens is not None:
                line["chunk_tokens"] = timing.chunk_tokens
            yield line


def write_outputs(document: ResultDocument, result: SweepResult, path: Path) -> Path:
    """Write the document to `path` and the per-request JSONL beside it; return the JSONL path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document.to_json_dict(), indent=1) + "\n")
    jsonl = path.with_name(path.stem + ".requests.jsonl")
    with jsonl.open("w") as out:
        for line in request_lines(result):
            out.write(json.dumps(line, separators=(",", ":")) + "\n")
    return jsonl
