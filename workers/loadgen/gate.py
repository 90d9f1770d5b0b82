"""CI gates for `inferboard-worker bench`: labels, a baseline, and a verdict a pull request
can fail on.

    inferboard-worker bench ... --label branch=my-fix --label unofficial \\
        --baseline run:1234 --fail-on-regression 5 --summary gate.md

The baseline is a run on the server (`run:ID`, or a bare ID), a deployment's latest runs
in the same scenario (`deployment:FINGERPRINT` or `deployment:ID`: repeated runs, so the
interval covers run-to-run noise too), or a result document file written earlier. Each load
level of this run is compared with the baseline's level of the same concurrency (or rate)
by `workers.significance`; the gate fails (exit code 4) only on a regression that is both
significant and beyond the threshold, so noise alone never fails a build.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from pydantic import ValidationError

from workers import significance
from workers.result_fields import LABEL_KEY_PATTERN, MAX_LABEL_VALUE, MAX_LABELS
from workers.results import Point, ResultDocument, parse_document
from workers.submit import server_base

EXIT_REGRESSION = 4
LABEL_KEY = re.compile(LABEL_KEY_PATTERN)
UNOFFICIAL = "unofficial"


class GateError(Exception):
    """A bad gate flag, or a baseline that cannot be read: exit code 2, one message."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("labels and CI gate")
    g.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a free label stored with the run (repeat): branch=..., commit=..., pr=..., or "
        "'unofficial' (a run the board shows beside official ones, never ranked with them)",
    )
    g.add_argument(
        "--baseline",
        metavar="RUN|DEPLOYMENT|FILE",
        help="compare with run:ID (or ID), deployment:FINGERPRINT|ID (its latest runs in this "
        "scenario), or a result document file; writes a Markdown summary",
    )
    g.add_argument(
        "--fail-on-regression",
        type=float,
        metavar="PCT",
        help="exit 4 when a gate metric is significantly worse than the baseline by more "
        "than PCT percent",
    )
    g.add_argument(
        "--gate-metric",
        action="append",
        choices=list(significance.METRICS),
        help="metric the gate fails on (repeat; default output_tok_s_gpu)",
    )
    g.add_argument(
        "--summary",
        type=Path,
        help="Markdown summary for a pull-request comment (default: <out>.gate.md)",
    )
    g.add_argument(
        "--server",
        help="inferboard server for --baseline run:/deployment: (default: --submit, else env "
        "INFERBOARD_SERVER_URL); --token (or INFERBOARD_TOKEN) reads private runs",
    )
    g.add_argument(
        "--baseline-runs",
        type=int,
        default=3,
        help="deployment baseline: how many of its latest matching runs",
    )


def labels(args: argparse.Namespace) -> dict[str, str] | None:
    """`--label` flags as the document's labels; a bare KEY means 'true' (e.g. unofficial)."""
    out: dict[str, str] = {}
    for text in args.label or []:
        key, sep, value = text.partition("=")
        key = key.strip()
        if not LABEL_KEY.match(key):
            raise GateError(
                f"--label {text!r}: the key must be 1-50 letters, digits or _.:/- "
                "(e.g. branch=main)"
            )
        value = value.strip() if sep else "true"
        if not value or len(value) > MAX_LABEL_VALUE:
            raise GateError(f"--label {text!r}: the value must be 1-{MAX_LABEL_VALUE} characters")
        out[key] = value
    if len(out) > MAX_LABELS:
        raise GateError(f"--label: at most {MAX_LABELS} labels")
    return out or None


@dataclass
class Baseline:
    """What this run is compared with: one or more result documents and their records."""

    name: str
    documents: list[ResultDocument]
    records: list[dict[int, list[dict[str, Any]]]] = field(default_factory=list)
    # A deployment baseline: its runs, newest first, read once this run's scenario is known
    # (only runs of the same scenario count).
    pending: list[int] = field(default_factory=list)
    api: _Api | None = None
    want: int = 0

    def resolve(self, current: ResultDocument) -> None:
        if not self.pending or self.api is None:
            return
        names = []
        for run_id in self.pending:
            document = self.api.document(run_id)
            # A baseline is what the official runs say, never another branch's trial.
            if UNOFFICIAL in (document.labels or {}) or _scenario_differences(document, current):
                continue
            self.documents.append(document)
            self.records.append(_records_from(document, None))
            names.append(str(run_id))
            if len(self.documents) >= self.want:
                break
        self.pending = []
        if not self.documents:
            raise GateError(
                f"{self.name}: no official run of it in this scenario on {self.api.base}"
            )
        self.name += f" (runs {', '.join(names)})"


def prepare(args: argparse.Namespace) -> Baseline | None:
    """Check the gate's flags and read the baseline before anything is measured, so a typo
    or an unreachable server fails in a second instead of after the run."""
    labels(args)
    if args.fail_on_regression is not None and not args.baseline:
        raise GateError("--fail-on-regression needs --baseline")
    if args.fail_on_regression is not None and not (
        math.isfinite(args.fail_on_regression) and args.fail_on_regression >= 0
    ):
        raise GateError("--fail-on-regression must be a percentage of 0 or more")
    if not args.baseline:
        if args.gate_metric or args.summary:
            raise GateError("--gate-metric and --summary need --baseline")
        return None
    if args.baseline_runs < 1:
        raise GateError("--baseline-runs must be positive")
    spec: str = args.baseline.strip()
    path = Path(spec)
    if path.is_file():
        document = _read_file(path)
        return Baseline(f"`{path.name}`", [document], [_records_from(document, path)])
    kind, _, ident = spec.rpartition(":")
    if not kind and ident.isdigit():
        kind = "run"
    if kind not in ("run", "deployment") or not ident:
        raise GateError(
            f"--baseline {spec!r}: no such file, and not run:ID or deployment:FINGERPRINT|ID"
        )
    if kind == "run" and not ident.isdigit():
        raise GateError(f"--baseline {spec!r}: a run ID is a number")
    client = _Api(args)
    if kind == "run":
        document = client.document(int(ident))
        return Baseline(f"run {ident}", [document], [_records_from(document, None)])
    return client.deployment_baseline(ident, args)


def finish(args: argparse.Namespace, baseline: Baseline | None, code: int) -> int:
    """After the run: compare, write the summary, and give the gate's exit code."""
    if baseline is None or code != 0:
        return code
    current = _read_file(args.out)
    baseline.resolve(current)
    result = evaluate(
        current,
        _records_from(current, args.out),
        baseline,
        metrics=args.gate_metric or ["output_tok_s_gpu"],
        threshold_pct=args.fail_on_regression,
    )
    summary = args.summary or args.out.with_name(args.out.stem + ".gate.md")
    summary.parent.mkdir(parents=True, exist_ok=True)
    summary.write_text(result.markdown)
    for line in result.lines:
        print(line, file=sys.stderr)
    print(f"wrote the gate's summary to {summary}", file=sys.stderr)
    if result.failed:
        print(
            f"inferboard-worker bench: performance regression beyond "
            f"{args.fail_on_regression:g}% against {baseline.name}",
            file=sys.stderr,
        )
        return EXIT_REGRESSION
    return 0


@dataclass
class GateResult:
    failed: bool
    lines: list[str]
    markdown: str


def _level_key(point: Point) -> tuple[str, float] | None:
    if point.concurrency is not None:
        return ("concurrency", float(point.concurrency))
    if point.request_rate is not None:
        return ("rate", float(point.request_rate))
    return None


def _level_name(key: tuple[str, float]) -> str:
    kind, value = key
    return f"c={value:g}" if kind == "concurrency" else f"{value:g} req/s"


def _sample(document: ResultDocument, index: int, records: dict[int, list[dict[str, Any]]]):
    point = document.points[index]
    rows = records.get(index, [])
    closed = document.scenario is None or document.scenario.arrival == "closed"
    return significance.sample_from_records(
        rows, gpus=document.deployment.gpus, closed_loop=closed, window_s=point.window_s
    )


SCENARIO_FIELDS = ("input_tokens", "output_tokens", "prefix_cache_hit_rate", "arrival", "dataset")


def _scenario_differences(a: ResultDocument, b: ResultDocument) -> list[str]:
    if a.scenario is None or b.scenario is None:
        return ["a scenario is missing"]
    return [
        f"{name} {getattr(a.scenario, name)} vs {getattr(b.scenario, name)}"
        for name in SCENARIO_FIELDS
        if getattr(a.scenario, name) != getattr(b.scenario, name)
    ]


def _deployment_changes(a: ResultDocument, b: ResultDocument) -> list[str]:
    """What was served differently (engine version, image, flags ...): the likely cause."""
    before = _flat(a.deployment.model_dump(mode="json", exclude={"notes"}))
    after = _flat(b.deployment.model_dump(mode="json", exclude={"notes"}))
    return [
        f"{key}: {before.get(key, '—')} → {after.get(key, '—')}"
        for key in sorted(set(before) | set(after))
        if before.get(key) != after.get(key)
    ]


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, child in value.items():
            out.update(_flat(child, f"{prefix}{key}."))
        return out
    return {} if value is None else {prefix.rstrip("."): value}


def evaluate(
    current: ResultDocument,
    current_records: dict[int, list[dict[str, Any]]],
    baseline: Baseline,
    *,
    metrics: list[str],
    threshold_pct: float | None,
) -> GateResult:
    """Compare every level both sides measured; fail on a significant regression of a gate
    metric beyond the threshold (no threshold: report only)."""
    # Only like for like: a deployment's other scenarios are not this run's baseline.
    same = [
        (document, records)
        for document, records in zip(baseline.documents, baseline.records, strict=True)
        if not _scenario_differences(document, current)
    ]
    if not same:
        mismatch = _scenario_differences(baseline.documents[0], current)
        raise GateError(
            f"the baseline ({baseline.name}) ran another scenario: {'; '.join(mismatch)}"
        )
    base_levels: dict[tuple[str, float], list[significance.Sample]] = {}
    for document, records in same:
        for index, point in enumerate(document.points):
            key = _level_key(point)
            sample = _sample(document, index, records) if key else None
            if key and sample is not None:
                base_levels.setdefault(key, []).append(sample)
    rows: list[tuple[str, significance.Difference, bool]] = []
    for index, point in enumerate(current.points):
        key = _level_key(point)
        if key is None or key not in base_levels:
            continue
        sample = _sample(current, index, current_records)
        if sample is None:
            continue
        for name in significance.METRICS:
            diff = significance.compare(name, base_levels[key], [sample])
            gated = name in metrics
            rows.append((_level_name(key), diff, gated))
    if not rows:
        raise GateError(
            f"no load level of this run has request records at a level the baseline "
            f"({baseline.name}) measured: run the same --concurrency or --rate"
        )
    threshold = None if threshold_pct is None else threshold_pct / 100.0
    failures = [
        (level, d)
        for level, d, gated in rows
        if gated
        and threshold is not None
        and d.worse
        and d.change is not None
        and abs(d.change) > threshold
    ]
    lines = [
        f"{level:>10}  {d.sentence('the baseline', 'this run')}"
        for level, d, gated in rows
        if gated
    ]
    markdown = _markdown(
        current, baseline, rows, failures, threshold_pct=threshold_pct, metrics=metrics
    )
    return GateResult(failed=bool(failures), lines=lines, markdown=markdown)


def _cell(value: float, metric: significance.Metric) -> str:
    if not math.isfinite(value):
        return "—"
    return f"{value:,.1f} {metric.unit}" if value >= 10 else f"{value:,.2f} {metric.unit}"


def _markdown(
    current: ResultDocument,
    baseline: Baseline,
    rows: list[tuple[str, significance.Difference, bool]],
    failures: list[tuple[str, significance.Difference]],
    *,
    threshold_pct: float | None,
    metrics: list[str],
) -> str:
    verdict = "REPORT" if threshold_pct is None else "FAIL" if failures else "PASS"
    runs = len(baseline.documents)
    scenario = current.scenario
    gate_names = ", ".join(significance.METRICS[m].label for m in metrics)
    out = [
        f"## inferboard performance gate: {verdict}",
        "",
        f"- **Baseline**: {baseline.name}"
        + (f" ({runs} runs: the interval covers run-to-run noise)" if runs > 1 else ""),
        f"- **Model**: {current.model.name} on {current.deployment.gpus}× "
        f"{current.deployment.accelerator}, {current.deployment.engine.name} "
        f"{current.deployment.engine.version or ''}".rstrip(),
    ]
    if scenario is not None:
        out.append(
            f"- **Scenario**: {scenario.input_tokens} in / {scenario.output_tokens} out, "
            f"{scenario.arrival} loop"
        )
    if threshold_pct is not None:
        out.append(
            f"- **Rule**: fail on a significant regression (95% interval excludes 0) beyond "
            f"{threshold_pct:g}% in {gate_names}"
        )
    if current.labels:
        out.append(
            "- **Labels**: " + ", ".join(f"`{k}={v}`" for k, v in sorted(current.labels.items()))
        )
    out.append("")
    for level, d in failures:
        out.append(f"> **Regression at {level}**: {d.sentence('the baseline', 'this run')}.")
    if failures:
        out.append("")
    out += [
        "| Level | Metric | Baseline | This run | Change [95% interval] | Verdict |",
        "|---|---|---:|---:|---:|---|",
    ]
    for level, d, gated in rows:
        if d.change is None:
            change = "—"
        elif d.low is None or d.high is None:
            change = f"{d.change:+.1%} (no interval: {'; '.join(d.notes) or 'too few requests'})"
        else:
            change = f"{d.change:+.1%} [{d.low:+.1%}, {d.high:+.1%}]"
        name = f"**{d.metric.label}**" if gated else d.metric.label
        out.append(
            f"| {level} | {name} | {_cell(d.a, d.metric)} | {_cell(d.b, d.metric)} | "
            f"{change} | {d.verdict} |"
        )
    changes = _deployment_changes(baseline.documents[0], current)
    out += ["", "**What changed in the deployment**: " + ("; ".join(changes) or "nothing")]
    out += [
        "",
        "<sub>Bootstrap over per-request records (blocks of time for closed-loop runs; runs, "
        "then requests, when the baseline has several runs); 95% percentile intervals on "
        "this run / baseline − 1. See docs/methodology.md, 'Significance on performance'."
        "</sub>",
        "",
    ]
    return "\n".join(out)


def _read_file(path: Path) -> ResultDocument:
    try:
        return parse_document(path.read_text())
    except OSError as exc:
        raise GateError(f"{path}: {exc.strerror or exc}") from None
    except ValueError as exc:  # DocumentError: not a valid result document
        raise GateError(f"{path}: not a result document ({exc})") from None


def _records_from(document: ResultDocument, path: Path | None) -> dict[int, list[dict[str, Any]]]:
    """Each point's measured records: in the document, else in the JSONL the CLI wrote
    beside it (`--no-records`)."""
    records: dict[int, list[dict[str, Any]]] = {}
    for index, point in enumerate(document.points):
        if point.records:
            records[index] = [r.model_dump() for r in point.records]
    if records or path is None:
        return records
    jsonl = path.with_name(path.stem + ".requests.jsonl")
    if not jsonl.is_file():
        return records
    with jsonl.open() as lines:
        for line in lines:
            row = json.loads(line)
            if not row.get("warmup"):
                records.setdefault(int(row["point"]), []).append(row)
    return records


class _Api:
    """The server's REST API, read with the token when one is given (private runs)."""

    def __init__(self, args: argparse.Namespace) -> None:
        url = args.server or args.submit or os.environ.get("INFERBOARD_SERVER_URL")
        if not url:
            raise GateError(
                "--baseline run:/deployment: needs the server: --server URL (or --submit, or "
                "env INFERBOARD_SERVER_URL)"
            )
        self.base = server_base(url)
        token = args.token or os.environ.get("INFERBOARD_TOKEN")
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}

    def _get(self, path: str, params: dict[str, Any] | None = None) -> httpx.Response:
        try:
            response = httpx.get(
                self.base + path, params=params, headers=self.headers, timeout=120.0
            )
        except httpx.HTTPError as exc:
            raise GateError(f"cannot reach {self.base}: {exc}") from None
        if response.status_code == 404:
            raise GateError(f"{path}: not found (or private: give --token)")
        if response.status_code >= 400:
            raise GateError(f"{path}: HTTP {response.status_code}: {response.text[:300]}")
        return response

    def document(self, run_id: int) -> ResultDocument:
        response = self._get(f"/api/v1/runs/{run_id}/document")
        try:
            return ResultDocument.model_validate_json(response.content)
        except ValidationError as exc:
            raise GateError(f"run {run_id}: the server's document does not parse ({exc})") from None

    def deployment_baseline(self, ident: str, args: argparse.Namespace) -> Baseline:
        page = self._get(
            "/api/v1/runs", {"deployment": ident, "provenance": "measured", "limit": 200}
        ).json()
        runs = [int(i["id"]) for i in page.get("items", []) if i.get("status") == "succeeded"]
        if not runs:
            raise GateError(
                f"--baseline deployment:{ident}: no succeeded measured run of it on {self.base}"
            )
        return Baseline(
            f"deployment {ident[:12]}", [], [], pending=runs, api=self, want=args.baseline_runs
        )
