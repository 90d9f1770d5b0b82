"""A run's reproducibility bundle: one zip with everything needed to measure it again.

The zip holds the result document (records included), the per-request records as JSON lines,
the scenario with its dataset and file hashes, the engine facts as a `--deployment` file, the
scraped server metrics, and `reproduce.sh`: the exact `inferboard-worker bench` command, with
the worker version that measured it. The endpoint's URL is the one thing it cannot hold (an
organization's business): the command reads it from $ENDPOINT.
"""

from __future__ import annotations

import hashlib
import io
import json
import shlex
import zipfile
from typing import Any

import yaml

from apps.runs import selectors
from apps.runs.models import Run

BUNDLE_README = """Reproducibility bundle of inferboard run {run_id}

  result.json          the result document as stored, per-request records included
  requests.jsonl       one JSON object per request, `point` = the point's ordinal
  scenario.json        the scenario, its dataset, and the sha256 of every file here
  deployment.yaml      the engine facts (the worker's --deployment file)
  server_metrics.json  the server's metrics scraped during each point (empty: not scraped)
  reproduce.sh         the command that measures it again: ENDPOINT=http://host:port sh reproduce.sh

Measured by: {loadgen}. Origin: {origin}. Provenance: {provenance}.
The command writes reproduced.json; its scenario and deployment fingerprint equal this run's.
"""


def _levels(points: list[dict[str, Any]]) -> list[str]:
    rates = [p["request_rate"] for p in points if p.get("request_rate")]
    if rates:
        return ["--rate", ",".join(_number(r) for r in rates)]
    levels = [str(p["concurrency"]) for p in points if p.get("concurrency")]
    return ["--concurrency", ",".join(levels or ["1"])]


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def reproduce_command(document: dict[str, Any]) -> list[str]:
    """The `inferboard-worker bench` arguments that measure this document's scenario again
    on the same deployment facts (deployment.yaml); $ENDPOINT is left to the shell."""
    scenario = document.get("scenario") or {}
    environment = document.get("environment") or {}
    extra = environment.get("extra") or {}
    model = document.get("model") or {}
    points = document.get("points") or []
    command = ["inferboard-worker", "bench", "--endpoint", "$ENDPOINT", "--model", model["name"]]
    if model.get("family"):
        command += ["--model-family", model["family"]]
    command += ["--api", extra.get("api") or "completions"]
    if scenario.get("preset"):
        command += ["--scenario", scenario["preset"]]
    command += [
        "--input-tokens",
        str(scenario["input_tokens"]),
        "--output-tokens",
        str(scenario["output_tokens"]),
        "--prefix-hit-rate",
        _number(scenario.get("prefix_cache_hit_rate") or 0),
        "--length-spread",
        _number(scenario.get("length_spread") or 0),
    ]
    if extra.get("seed") is not None:
        command += ["--seed", str(extra["seed"])]
    command += _levels(points)
    requests = scenario.get("request_count") or next(
        ((p.get("requests") or {}).get("total") for p in points if p.get("requests")), None
    )
    if scenario.get("duration_s"):
        command += ["--duration", _number(scenario["duration_s"])]
    elif requests:
        command += ["--requests", str(requests)]
    if scenario.get("warmup_requests"):
        command += ["--warmup", str(scenario["warmup_requests"])]
    command += ["--deployment", "deployment.yaml", "--out", "reproduced.json"]
    return command


def _shell(command: list[str]) -> str:
    # $ENDPOINT must expand; everything else is quoted as a literal.
    return " ".join('"$ENDPOINT"' if part == "$ENDPOINT" else shlex.quote(part) for part in command)


def run_bundle(*, run: Run) -> bytes:
    document = selectors.run_document(run=run)
    records = "".join(
        json.dumps({"point": r.pop("point__ordinal"), **r}) + "\n"
        for r in selectors.run_records(run=run)
    )
    files: dict[str, bytes] = {
        "result.json": json.dumps(document, indent=1).encode(),
        "requests.jsonl": records.encode(),
        "deployment.yaml": yaml.safe_dump(
            document.get("deployment") or {}, sort_keys=True
        ).encode(),
        "server_metrics.json": json.dumps(
            {
                p.get("label") or str(i): p.get("server_metrics")
                for i, p in enumerate(document.get("points") or [])
            },
            indent=1,
        ).encode(),
    }
    environment = document.get("environment") or {}
    loadgen = environment.get("loadgen_version") or "unknown worker version"
    if document.get("scenario") and document.get("model"):
        command = _shell(reproduce_command(document))
        files["reproduce.sh"] = (
            "#!/bin/sh\n"
            f"# Measured by {loadgen}; install the same inferboard-worker version to compare.\n"
            ': "${ENDPOINT:?set ENDPOINT to the server URL, e.g. http://127.0.0.1:8000}"\n'
            f"{command}\n"
        ).encode()
    scenario = dict(document.get("scenario") or {})
    files["scenario.json"] = json.dumps(
        {
            "scenario": scenario,
            "scenario_id": run.scenario_id,
            "scenario_slug": run.scenario.slug if run.scenario_id else None,
            "dataset": scenario.get("dataset"),
            "dataset_sha256": (environment.get("extra") or {}).get("dataset_sha256"),
            "deployment_fingerprint": run.deployment.fingerprint,
            "files_sha256": {
                name: hashlib.sha256(body).hexdigest() for name, body in files.items()
            },
        },
        indent=1,
    ).encode()
    files["README.txt"] = BUNDLE_README.format(
        run_id=run.pk, loadgen=loadgen, origin=run.origin, provenance=run.provenance
    ).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in files.items():
            archive.writestr(f"run-{run.pk}/{name}", body)
    return out.getvalue()
