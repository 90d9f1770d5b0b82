"""Reads for significance on performance: stored request records as `workers.significance`
samples, and cached comparisons between runs' leaderboard points.

The statistics live in `workers/significance.py` (pure numpy) so that the CLI's CI gate and
/compare/ state the same interval for the same runs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from django.core.cache import cache

from apps.accounts.models import Organization
from apps.runs.models import Point, Run
from apps.runs.selectors import point_record_rows, points_record_rows, runs_visible
from workers import significance

# A leaderboard point's run plus up to this many earlier official runs of the same
# deployment in the same scenario at the same load level: repeated runs, so the interval
# covers run-to-run noise where the history has it.
REPEATED_RUNS = 5
# Records never change once stored, so a comparison of the same points is the same forever.
CACHE_SECONDS = 24 * 3600
RECORD_COLUMNS = ("t_send_ms", "ttft_ms", "tpot_ms", "e2el_ms", "n_in", "n_out", "status")


def _sample(point: Point, run: Run) -> significance.Sample | None:
    rows = point_record_rows(run=run, columns=RECORD_COLUMNS, ordinals=[point.ordinal])
    return _sample_of(point, run, (row[1:] for row in rows))


def _sample_of(point: Point, run: Run, rows: Iterable[tuple]) -> significance.Sample | None:
    """The point's records (RECORD_COLUMNS, in request order) as a sample."""
    closed = run.scenario is None or run.scenario.arrival == "closed"
    return significance.sample_from_records(
        (dict(zip(RECORD_COLUMNS, row, strict=True)) for row in rows),
        gpus=run.deployment.gpus,
        closed_loop=closed,
        window_s=point.window_s,
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


def _run_points(*, run_id: int, org: Organization | None) -> list[tuple[Point, Run]]:
    run = (
        runs_visible(org=org)
        .select_related("best_point", "deployment", "scenario")
        .filter(pk=run_id)
        .first()
    )
    return [] if run is None else _repeated_points(run=run, org=org)


def _samples(points: list[tuple[Point, Run]]) -> list[significance.Sample]:
    """Samples of the points that have request records (imported summaries and published
    figures have none and are left out)."""
    found = (_sample(point, run) for point, run in points)
    return [sample for sample in found if sample is not None]


def compare_runs(
    *, baseline_run: int, other_runs: list[int | None], metrics: list[str], org: Organization | None
) -> list[list[significance.Difference] | None]:
    """For each of `other_runs`, its differences from `baseline_run` on each metric, or None
    where either side has no request records. Cached by the points compared, so a page
    view reads records only for a comparison it has not made before."""
    base_points = _run_points(run_id=baseline_run, org=org)
    base: list[significance.Sample] | None = None
    out: list[list[significance.Difference] | None] = []
    for run_id in other_runs:
        points = _run_points(run_id=run_id, org=org) if run_id is not None else []
        if not points or not base_points:
            out.append(None)
            continue
        ids = ([p.pk for p, _ in base_points], [p.pk for p, _ in points], metrics)
        key = "significance:v1:" + hashlib.sha256(repr(ids).encode()).hexdigest()
        found = cache.get(key)
        if found is None:
            base = _samples(base_points) if base is None else base
            samples = _samples(points)
            found = (
                [significance.compare(m, base, samples) for m in metrics]
                if base and samples
                else "none"
            )
            cache.set(key, found, CACHE_SECONDS)
        out.append(None if found == "none" else found)
    return out


def point_samples(*, point_ids: list[int]) -> dict[int, significance.Sample]:
    """Point id -> its request records as a sample, for the points that have records (the
    answer's interval, apps/costs/answer.py). The ids come from a visibility-checked read.
    The records of every point come in one read (apps.runs.selectors.points_record_rows)."""
    points = list(
        Point.objects.filter(pk__in=point_ids).select_related("run__deployment", "run__scenario")
    )
    rows = points_record_rows(points=points, columns=RECORD_COLUMNS)
    found = {point.pk: _sample_of(point, point.run, rows.get(point.pk, [])) for point in points}
    return {pk: sample for pk, sample in found.items() if sample is not None}
