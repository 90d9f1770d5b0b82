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
import uuid
import zipfile
from collections.abc import Iterable, Iterator
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


# A piece of the zip is handed to the response once this much is written: the response then
# holds one chunk at a time, never the bundle.
CHUNK_BYTES = 256 * 1024


class _Sink(io.RawIOBase):
    """Where the zip writes: kept only until the next chunk is taken. It tells its offset and
    cannot seek, so zipfile writes each member's sizes after its data (a data descriptor)."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._held = 0
        self._offset = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        piece = bytes(data)
        self._parts.append(piece)
        self._held += len(piece)
        self._offset += len(piece)
        return len(piece)

    def tell(self) -> int:
        return self._offset

    def flush(self) -> None:
        pass

    @property
    def held(self) -> int:
        return self._held

    def take(self) -> bytes:
        data = b"".join(self._parts)
        self._parts, self._held = [], 0
        return data


def _split(text: str, token: str) -> tuple[str, str]:
    before, _, after = text.partition(f'"{token}"')
    return before, after


def _result_json(run: Run, document: dict[str, Any]) -> Iterator[bytes]:
    """The stored document with each point's records read from the table as they are written
    (selectors.run_document's content, one point's records at a time, never all at once)."""
    token = f"records-of-{uuid.uuid4().hex}"
    points = list(document.get("points") or [])
    head, tail = _split(json.dumps({**document, "points": token}, indent=1), token)
    yield head.encode()
    records = selectors.run_records(run=run)
    pending: dict[str, Any] | None = next(records, None)
    yield b"["
    for ordinal, point in enumerate(points):
        # Records of an ordinal no point has are left out, as run_document leaves them.
        while pending is not None and pending["point__ordinal"] < ordinal:
            pending = next(records, None)
        # A point with records in the table gets those; one without keeps what was stored.
        owned = pending is not None and pending["point__ordinal"] == ordinal
        text = json.dumps({**point, "records": token} if owned else point, indent=1)
        before, after = _split(text, token) if owned else (text, "")
        yield (",\n" if ordinal else "\n").encode() + before.encode()
        if owned:
            yield b"[\n"
            first = True
            while pending is not None and pending["point__ordinal"] == ordinal:
                pending.pop("point__ordinal")
                yield (b"" if first else b",\n") + json.dumps(pending).encode()
                first = False
                pending = next(records, None)
            yield b"\n]" + after.encode()
    yield b"\n]" + tail.encode()


def _requests_jsonl(run: Run) -> Iterator[bytes]:
    batch: list[str] = []
    for r in selectors.run_records(run=run):
        batch.append(json.dumps({"point": r.pop("point__ordinal"), **r}) + "\n")
        if len(batch) >= 1000:
            yield "".join(batch).encode()
            batch = []
    yield "".join(batch).encode()


def _small_files(run: Run, document: dict[str, Any]) -> dict[str, bytes]:
    files: dict[str, bytes] = {
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
    return files


def bundle_chunks(*, run: Run) -> Iterator[bytes]:
    """The bundle's zip, in pieces of about CHUNK_BYTES as it is written: the records are read
    from the database (or the run's archive) while the zip is sent, so memory stays near one
    chunk plus the stored document, whatever the run's size."""
    document = dict(run.document)
    environment = document.get("environment") or {}
    loadgen = environment.get("loadgen_version") or "unknown worker version"
    streamed: dict[str, Iterable[bytes]] = {
        "result.json": _result_json(run, document),
        "requests.jsonl": _requests_jsonl(run),
        **{name: [body] for name, body in _small_files(run, document).items()},
    }
    hashes: dict[str, str] = {}
    sink = _Sink()
    with zipfile.ZipFile(sink, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, pieces in streamed.items():
            digest = hashlib.sha256()
            with archive.open(f"run-{run.pk}/{name}", "w", force_zip64=True) as member:
                for piece in pieces:
                    digest.update(piece)
                    member.write(piece)
                    if sink.held >= CHUNK_BYTES:
                        yield sink.take()
            hashes[name] = digest.hexdigest()
        scenario = dict(document.get("scenario") or {})
        scenario_json = json.dumps(
            {
                "scenario": scenario,
                "scenario_id": run.scenario_id,
                "scenario_slug": run.scenario.slug if run.scenario_id else None,
                "dataset": scenario.get("dataset"),
                "dataset_sha256": (environment.get("extra") or {}).get("dataset_sha256"),
                "deployment_fingerprint": run.deployment.fingerprint,
                "files_sha256": hashes,
            },
            indent=1,
        ).encode()
        archive.writestr(f"run-{run.pk}/scenario.json", scenario_json)
        readme = BUNDLE_README.format(
            run_id=run.pk, loadgen=loadgen, origin=run.origin, provenance=run.provenance
        )
        archive.writestr(f"run-{run.pk}/README.txt", readme.encode())
    yield sink.take()
