"""Batch imports: what follows each landing run (its leaderboard point, the `run_settled`
signal), held back while a batch is open and done once for all of its runs at its end."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from apps.accounts.models import Organization
from apps.runs import summary
from apps.runs.models import Point, Run
from apps.runs.signals import run_settled, runs_settled
from workers import results as doc

SUMMARY_BATCH = 500


@dataclass
class Batch:
    """What a batch (runs_settle_batched) holds back until it ends."""

    settled: list[tuple[int, bool]] = field(default_factory=list)  # (pk, others), in order
    unsummarised: list[int] = field(default_factory=list)  # stored runs without a best point
    # The catalog rows earlier runs of the batch were stored with, by what chose them (the
    # deployment's fingerprint; the organization and the scenario as stated): a batch of
    # 1,500 runs names about 280 deployments and a few scenarios.
    deployments: dict[str, Any] = field(default_factory=dict)
    scenarios: dict[tuple[int | None, str], Any] = field(default_factory=dict)

    def remember(self, parsed: doc.ResultDocument, org: Organization | None, run: Run) -> None:
        """The catalog rows `run` was stored with. Call it only once its savepoint is
        released, so that a row created in one rolled back is never reused."""
        deployment_key, scenario_key = _keys(parsed, org)
        self.deployments[deployment_key] = run.deployment
        if scenario_key is not None:
            self.scenarios[scenario_key] = run.scenario


_open: ContextVar[Batch | None] = ContextVar("runs_settle_batch", default=None)


def current() -> Batch | None:
    """The open batch, or None."""
    return _open.get()


def _keys(
    parsed: doc.ResultDocument, org: Organization | None
) -> tuple[str, tuple[int | None, str] | None]:
    scenario = parsed.scenario
    stated = (org.pk if org else None, scenario.model_dump_json()) if scenario else None
    return parsed.deployment_fingerprint(), stated


def known(parsed: doc.ResultDocument, org: Organization | None) -> tuple[Any, Any]:
    """(deployment, scenario) an earlier run of the open batch was stored with, each None
    when there is no batch or no such run: deployment_upsert and scenario_resolve would
    find the same rows, a query or two each."""
    batch = _open.get()
    if batch is None:
        return None, None
    deployment_key, scenario_key = _keys(parsed, org)
    scenario = batch.scenarios.get(scenario_key) if scenario_key is not None else None
    return batch.deployments.get(deployment_key), scenario


def settled(run: Run, *, others: bool) -> None:
    """`run_settled` for `run`, or, while a batch is open, noted for its end."""
    batch = _open.get()
    if batch is None:
        run_settled.send(sender=Run, run=run, others=others)
    else:
        batch.settled.append((run.pk, others))


@contextmanager
def runs_settle_batched() -> Iterator[None]:
    """Hold back what follows each landing run inside the block (its leaderboard point and
    `run_settled`) and do it for all of them when the block ends without an error: the
    points chosen 500 runs a query, then `runs_settled` sent once. Use it inside the caller's
    transaction; a Run returned inside the block has its best point and rules only after it.

    For a batch import: choosing each run's point as it lands, checking its rules and those
    of the runs its accuracy results can change took well over half of a 1,500-run
    `loadreference` (bench/loadreference.py); nothing reads them while the batch is open. A
    batch opened inside another joins it."""
    if _open.get() is not None:
        yield
        return
    batch = Batch()
    token = _open.set(batch)
    try:
        yield
    finally:
        _open.reset(token)
    _runs_summary_refresh(batch.unsummarised)
    if batch.settled:
        runs_settled.send(
            sender=Run,
            runs=[pk for pk, _ in batch.settled],
            others=[pk for pk, others in batch.settled if others],
        )


# What summary_choose sets on a run, for the callers that save it.
SUMMARY_FIELDS = ("best_point", "best_tput_per_gpu", "best_meets_slo", "levels")


def summary_choose(run: Run, rows: list[dict[str, Any]]) -> None:
    """Set the run's leaderboard point and its count of load levels from its points'
    `values("id", *FIGURE_FIELDS)` rows (apps.runs.services.run_summary_refresh saves it)."""
    figures = summary.run_figures(rows, run.document)
    best = summary.best_point(
        figures,
        summary.default_slo(run.scenario),
        run.deployment.gpus,
        summary.scenario_shape(run.scenario),
    )
    run.best_point_id = best.point_id if best else None
    run.best_tput_per_gpu = best.tput_per_gpu if best else None
    run.best_meets_slo = best.meets_slo if best else None
    run.levels = len(rows)


def _runs_summary_refresh(pks: list[int]) -> None:
    """run_summary_refresh for many runs: a query for each 500 runs' points, one update."""
    for start in range(0, len(pks), SUMMARY_BATCH):
        chunk = Run.objects.filter(pk__in=pks[start : start + SUMMARY_BATCH])
        runs = list(chunk.select_related("deployment", "scenario"))
        rows: dict[int, list[dict[str, Any]]] = {run.pk: [] for run in runs}
        # The order run.points gives each run (Point.Meta.ordering: run, ordinal).
        points = Point.objects.filter(run_id__in=rows).order_by("run_id", "ordinal")
        for row in points.values("run_id", "id", *summary.FIGURE_FIELDS):
            rows[row.pop("run_id")].append(row)
        for run in runs:
            summary_choose(run, rows[run.pk])
        fields = list(SUMMARY_FIELDS)
        Run.objects.bulk_update(runs, fields, batch_size=SUMMARY_BATCH)
