"""Reads for significance on performance: stored request records as `workers.significance`
samples, and cached comparisons between runs' leaderboard points.

The statistics live in `workers/significance.py` (pure numpy) so that the CLI's CI gate and
/compare/ state the same interval for the same runs.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.core.cache import cache

from apps.accounts.models import Organization
from apps.runs.models import Point, RequestRecord, Run
from apps.runs.selectors import runs_visible
from workers import significance

# A leaderboard point's run plus up to this many earlier official runs of the same
# deployment in the same scenario at the same load level: repeated runs, so the interval
# covers run-to-run noise where the history has it.
REPEATED_RUNS = 5
# Records never change once stored, so a comparison of the same points is the same forever.
CACHE_SECONDS = 24 * 3600
RECORD_COLUMNS = ("t_send_ms", "ttft_ms", "tpot_ms", "e2el_ms", "n_in", "n_out", "status")


def _sample(point: Point, run: Run) -> significance.Sample | None:
    rows = RequestRecord.objects.filter(point_id=point.pk).values(*RECORD_COLUMNS)
    closed = run.scenario is None or run.scenario.arrival == "closed"
    return significance.sample_from_records(
        rows, gpus=run.deployment.gpus, closed_loop=closed, window_s=point.window_s
    )


def _repeated_points(*, run: Run, org: Organization | None) -> list[tuple[Point, Run]]:
    """The run's leaderboard point, then the same level of earlier runs of its deployment
    and scenario (same provenance, not labelled unofficial, visible to the viewer)."""
    point = run.best_point
    if point is None:
        return []
    found = [(point, run)]
    level = (
        {"concurrency": point.concurrency}
        if point.concurrency is not None
        else {"request_rate": point.request_rate}
    )
    earlier = (
        runs_visible(org=org)
        .filter(
            deployment_id=run.deployment_id,
            scenario_id=run.scenario_id,
            provenance=run.provenance,
            created_at__lte=run.created_at,
        )
        .exclude(pk=run.pk)
        .exclude(labels__has_key="unofficial")
        .order_by("-created_at", "-id")[: REPEATED_RUNS - 1]
    )
    for other in earlier.select_related("deployment", "scenario"):
        match = Point.objects.filter(run=other, **level).order_by("ordinal").first()
        if match is not None:
            found.append((match, other))
    return found


def run_samples(*, run_id: int, org: Organization | None) -> tuple[list[int], list[Any]]:
    """(the point IDs, their samples) for a run's leaderboard point and its repeats; points
    without request records (imported summaries, published figures) are left out."""
    run = (
        runs_visible(org=org)
        .select_related("best_point", "deployment", "scenario")
        .filter(pk=run_id)
        .first()
    )
    if run is None:
        return [], []
    ids, samples = [], []
    for point, owner in _repeated_points(run=run, org=org):
        sample = _sample(point, owner)
        if sample is not None:
            ids.append(point.pk)
            samples.append(sample)
    return ids, samples


def compare_runs(
    *, baseline_run: int, other_runs: list[int | None], metrics: list[str], org: Organization | None
) -> list[list[significance.Difference] | None]:
    """For each of `other_runs`, its differences from `baseline_run` on each metric, or None
    where either side has no request records."""
    base_ids, base = run_samples(run_id=baseline_run, org=org)
    out: list[list[significance.Difference] | None] = []
    for run_id in other_runs:
        if run_id is None or not base:
            out.append(None)
            continue
        ids, samples = run_samples(run_id=run_id, org=org)
        if not samples:
            out.append(None)
            continue
        key = (
            "significance:v1:" + hashlib.sha256(repr((base_ids, ids, metrics)).encode()).hexdigest()
        )
        cached = cache.get(key)
        if cached is None:
            cached = [significance.compare(m, base, samples) for m in metrics]
            cache.set(key, cached, CACHE_SECONDS)
        out.append(cached)
    return out
