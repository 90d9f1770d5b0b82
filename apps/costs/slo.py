"""Cost at an SLO: the most throughput per GPU a deployment gives while meeting an SLO.

Pure functions over plain dataclasses. A deployment is described by its measured load
points (one per concurrency or rate), each with throughput per GPU and latency
percentiles. The answer is:

- the best measured point that meets every bound of the SLO, or
- a point interpolated linearly between two neighbouring points of the Pareto front, the
  lower one measured and meeting the SLO, the upper one measured and missing it, taken
  as far towards the upper one as the SLO allows.

It never goes above the throughput of the upper neighbour nor below the lower one, never
extrapolates beyond the measured points, and says `interpolated` whenever it is not a
measured point. Points that lack a metric the SLO bounds are left out and listed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from apps.costs.formulas import (
    CostInputError,
    require_non_negative,
    require_positive,
    usd_per_mtok,
)
from workers import slo as slo_rule


class Metric(StrEnum):
    TTFT_S = "ttft_s"
    TPOT_S = "tpot_s"
    E2EL_S = "e2el_s"
    INTERACTIVITY = "interactivity"  # tok/s/user, higher is better


# Each metric as workers/slo.py names it, and the unit its bounds are written in here.
_RULE_METRICS: dict[Metric, tuple[slo_rule.Metric, str]] = {
    Metric.TTFT_S: ("ttft", "s"),
    Metric.TPOT_S: ("tpot", "s"),
    Metric.E2EL_S: ("e2el", "s"),
    Metric.INTERACTIVITY: ("interactivity", "tok/s/user"),
}


@dataclass(frozen=True, slots=True)
class SloBound:
    """One bound: e.g. TTFT p99 <= 2.22 s, or interactivity p50 >= 30 tok/s/user.

    A bound in this module's units (s, tok/s/user); workers/slo.py's `Bound`, which
    `rule()` gives, is the one definition of ceilings, labels and what holds."""

    metric: Metric
    percentile: str
    limit: float

    @property
    def is_ceiling(self) -> bool:
        return _RULE_METRICS[self.metric][0] in slo_rule.CEILINGS

    @property
    def label(self) -> str:
        """The metric's one label and the percentile: "TTFT p99"."""
        return f"{slo_rule.LABELS[_RULE_METRICS[self.metric][0]]} {self.percentile}"

    @property
    def unit(self) -> str:
        return _RULE_METRICS[self.metric][1]

    @property
    def key(self) -> str:
        """The point-metrics key, under the stored percentile name ("ttft_s.p999")."""
        return f"{self.metric.value}.{slo_rule.stored_key(self.percentile)}"

    def rule(self) -> slo_rule.Bound:
        """This bound as workers/slo.py judges it."""
        metric, unit = _RULE_METRICS[self.metric]
        return slo_rule.Bound(metric, self.percentile, self.limit, unit)

    def met_by(self, value: float) -> bool:
        """Whether `value`, in this bound's unit, holds (by the rule `verdict` applies)."""
        return self.rule().holds(value * slo_rule.UNITS[self.unit][1])

    def describe(self) -> str:
        return self.rule().describe()


@dataclass(frozen=True, slots=True)
class Slo:
    bounds: tuple[SloBound, ...]
    min_success_rate: float = slo_rule.DEFAULT_MIN_SUCCESS_RATE

    @classmethod
    def of(
        cls,
        *,
        ttft_s_max: float | None = None,
        ttft_percentile: str = "p99",
        interactivity_min: float | None = None,
        interactivity_percentile: str = "p50",
        tpot_s_max: float | None = None,
        tpot_percentile: str = "p50",
        e2el_s_max: float | None = None,
        e2el_percentile: str = "p99",
        min_success_rate: float = slo_rule.DEFAULT_MIN_SUCCESS_RATE,
    ) -> Slo:
        """An SLO from the usual bounds; `None` leaves a metric unbounded."""
        wanted = [
            (Metric.TTFT_S, ttft_percentile, ttft_s_max, "ttft_s_max"),
            (
                Metric.INTERACTIVITY,
                interactivity_percentile,
                interactivity_min,
                "interactivity_min",
            ),
            (Metric.TPOT_S, tpot_percentile, tpot_s_max, "tpot_s_max"),
            (Metric.E2EL_S, e2el_percentile, e2el_s_max, "e2el_s_max"),
        ]
        bounds = tuple(
            SloBound(
                metric,
                _percentile(
                    name.removesuffix("_s_max").removesuffix("_min") + "_percentile", percentile
                ),
                require_positive(name, limit),
            )
            for metric, percentile, limit, name in wanted
            if limit is not None
        )
        if not 0 <= min_success_rate <= 1:
            raise CostInputError("min_success_rate", "must be between 0 and 1")
        return cls(bounds, min_success_rate)

    def rule(self) -> slo_rule.Slo:
        return slo_rule.Slo(tuple(b.rule() for b in self.bounds), self.min_success_rate)

    def describe(self) -> str:
        return self.rule().describe()


def _percentile(field_name: str, percentile: str) -> str:
    """The one spelling (workers/slo.py); an unstored percentile names the stored ones."""
    try:
        return slo_rule.percentile_name(percentile, field_name)
    except slo_rule.SloError as exc:
        raise CostInputError(field_name, exc.message) from None


@dataclass(frozen=True, slots=True)
class SloPoint:
    """One measured load point. `metrics` maps "ttft_s.p99"-style keys to values."""

    label: str
    tok_per_s_per_gpu: float
    metrics: dict[str, float] = field(default_factory=dict)
    success_rate: float | None = None  # None: not reported, so the SLO cannot be checked


@dataclass(frozen=True, slots=True)
class SloResult:
    """The answer, or (meets False) only the reason there is none."""

    meets: bool
    reason: str
    tok_per_s_per_gpu: float | None = None
    provenance: Literal["measured", "interpolated"] | None = None
    lower: SloPoint | None = None  # measured point at or below the answer
    upper: SloPoint | None = None  # measured neighbour above an interpolated answer
    binding: SloBound | None = None  # the bound that stopped the interpolation
    metrics: dict[str, float] = field(default_factory=dict)  # bounded metrics at the answer
    skipped: tuple[str, ...] = ()


def best_throughput_at_slo(points: Sequence[SloPoint], slo: Slo) -> SloResult:
    """The highest throughput per GPU that still meets `slo`, measured or interpolated."""
    usable, skipped = _usable_points(points, slo)
    if not usable:
        if not points:
            return _no_point("no measured points", skipped)
        missing = sorted(
            {
                bound.key
                for point in points
                for bound in slo.bounds
                if bound.key not in point.metrics
            }
            | {"success_rate" for point in points if point.success_rate is None}
        )
        return _no_point(f"no point reports {', '.join(missing)}, which the SLO bounds", skipped)

    front = pareto_front(usable, slo)
    candidates: list[SloResult] = []
    for index, point in enumerate(front):
        if not _meets(point, slo):
            continue
        upper = front[index + 1] if index + 1 < len(front) else None
        if upper is not None and not _meets(upper, slo):
            candidates.append(_interpolate(point, upper, slo, skipped))
        else:
            candidates.append(_measured(point, slo, skipped))
    if not candidates:
        return _no_point(_closest_miss(front, slo), skipped)
    # Ties go to the first (lowest-load) candidate, so the answer does not depend on luck.
    return max(candidates, key=lambda result: result.tok_per_s_per_gpu or 0.0)


def pareto_front(points: Sequence[SloPoint], slo: Slo) -> list[SloPoint]:
    """Points no other point beats on throughput and on every bounded metric, by throughput.

    A point is dropped when another has at least its throughput and is at least as good
    on every metric the SLO bounds, and strictly better somewhere.
    """
    front = [
        point
        for index, point in enumerate(points)
        if not any(
            _dominates(other, point, slo) for other in [*points[:index], *points[index + 1 :]]
        )
    ]
    unique: dict[tuple[float, ...], SloPoint] = {}
    for point in front:  # identical points: keep the first
        unique.setdefault(_signature(point, slo), point)
    return sorted(unique.values(), key=lambda point: point.tok_per_s_per_gpu)


def _signature(point: SloPoint, slo: Slo) -> tuple[float, ...]:
    return (
        point.tok_per_s_per_gpu,
        point.success_rate or 0.0,
        *(point.metrics[bound.key] for bound in slo.bounds),
    )


def _dominates(a: SloPoint, b: SloPoint, slo: Slo) -> bool:
    if a.tok_per_s_per_gpu < b.tok_per_s_per_gpu:
        return False
    strictly = a.tok_per_s_per_gpu > b.tok_per_s_per_gpu
    # Success counts like a bounded metric: a flakier point never hides a steadier one.
    if (a.success_rate or 0.0) < (b.success_rate or 0.0):
        return False
    strictly = strictly or (a.success_rate or 0.0) > (b.success_rate or 0.0)
    for bound in slo.bounds:
        va, vb = a.metrics[bound.key], b.metrics[bound.key]
        better, worse = (va < vb, va > vb) if bound.is_ceiling else (va > vb, va < vb)
        if worse:
            return False
        strictly = strictly or better
    return strictly


def _usable_points(points: Sequence[SloPoint], slo: Slo) -> tuple[list[SloPoint], tuple[str, ...]]:
    usable: list[SloPoint] = []
    skipped: list[str] = []
    for index, point in enumerate(points):
        require_positive(f"points[{index}].tok_per_s_per_gpu", point.tok_per_s_per_gpu)
        for key, value in point.metrics.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise CostInputError(f"points[{index}].metrics.{key}", "must be a number")
            if not math.isfinite(value) or value < 0:
                raise CostInputError(f"points[{index}].metrics.{key}", "must be finite, >= 0")
        checkable = point.success_rate is not None or not slo.bounds or not slo.min_success_rate
        if checkable and all(bound.key in point.metrics for bound in slo.bounds):
            usable.append(point)
        else:
            skipped.append(point.label)
    return usable, tuple(skipped)


def verdict(point: SloPoint, slo: Slo) -> slo_rule.Verdict:
    """The one SLO rule's verdict on a point (metrics here are in s; stored ones in ms)."""
    figures: dict[str, dict[str, float]] = {}
    for key, value in point.metrics.items():
        name, _, percentile = key.partition(".")
        metric = name.removesuffix("_s")
        figures.setdefault(metric, {})[percentile] = value * 1000 if name != metric else value
    return slo_rule.judge(slo.rule(), figures, point.success_rate)


def _meets(point: SloPoint, slo: Slo) -> bool:
    return verdict(point, slo).meets


def _bounded_metrics(point: SloPoint, slo: Slo) -> dict[str, float]:
    return {bound.key: point.metrics[bound.key] for bound in slo.bounds}


def _measured(point: SloPoint, slo: Slo, skipped: tuple[str, ...]) -> SloResult:
    return SloResult(
        meets=True,
        tok_per_s_per_gpu=point.tok_per_s_per_gpu,
        provenance="measured",
        lower=point,
        metrics=_bounded_metrics(point, slo),
        reason=f"measured point {point.label} meets {slo.describe()}",
        skipped=skipped,
    )


def _interpolate(lower: SloPoint, upper: SloPoint, slo: Slo, skipped: tuple[str, ...]) -> SloResult:
    """Walk from `lower` (meets) towards `upper` (misses) while every bound still holds."""
    if (upper.success_rate or 0.0) < slo.min_success_rate:
        # Too many failures at the upper point: nothing between is known to succeed enough.
        return _measured(lower, slo, skipped)
    reach = 1.0
    binding: SloBound | None = None
    for bound in slo.bounds:
        start, end = lower.metrics[bound.key], upper.metrics[bound.key]
        if bound.met_by(end):
            continue  # holds along the whole segment, the metric being linear in it
        # start meets and end misses, so start != end and the fraction is in [0, 1).
        fraction = (bound.limit - start) / (end - start)
        if fraction < reach:
            reach, binding = fraction, bound
    reach = min(max(reach, 0.0), 1.0)
    if reach == 0.0:
        return _measured(lower, slo, skipped)
    low, high = lower.tok_per_s_per_gpu, upper.tok_per_s_per_gpu
    throughput = min(max(low + reach * (high - low), low), high)
    metrics = {
        bound.key: lower.metrics[bound.key]
        + reach * (upper.metrics[bound.key] - lower.metrics[bound.key])
        for bound in slo.bounds
    }
    return SloResult(
        meets=True,
        tok_per_s_per_gpu=throughput,
        provenance="interpolated",
        lower=lower,
        upper=upper,
        binding=binding,
        metrics=metrics,
        reason=(
            f"interpolated between measured points {lower.label} and {upper.label}, "
            f"limited by {binding.describe() if binding else slo.describe()}"
        ),
        skipped=skipped,
    )


def _closest_miss(front: Sequence[SloPoint], slo: Slo) -> str:
    """Say how the point with the fewest broken bounds (the lightest load) misses."""
    candidate = min(
        front,
        key=lambda p: (
            sum(not b.met_by(p.metrics[b.key]) for b in slo.bounds),
            p.tok_per_s_per_gpu,
        ),
    )
    misses = verdict(candidate, slo).failed
    return f"no measured point meets {slo.describe()}; closest, {candidate.label}: " + "; ".join(
        misses
    )


def _no_point(reason: str, skipped: tuple[str, ...]) -> SloResult:
    return SloResult(meets=False, reason=reason, skipped=skipped)


@dataclass(frozen=True, slots=True)
class SloCost:
    result: SloResult
    usd_per_gpu_hour: float
    usd_per_mtok: float | None


def cost_at_slo(points: Sequence[SloPoint], slo: Slo, usd_per_gpu_hour: float) -> SloCost:
    """$/Mtok at the best throughput that meets `slo`; None when no point meets it."""
    price = require_non_negative("usd_per_gpu_hour", usd_per_gpu_hour)
    result = best_throughput_at_slo(points, slo)
    cost = (
        usd_per_mtok(price, result.tok_per_s_per_gpu)
        if result.tok_per_s_per_gpu is not None
        else None
    )
    return SloCost(result=result, usd_per_gpu_hour=price, usd_per_mtok=cost)


# --- why an SLO cannot be met -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SloMiss:
    """Why no point meets an SLO: what the data does not state, which bound fails at the
    nearest point and by how much, and the nearest SLO that point does meet."""

    unstated: tuple[str, ...]
    nearest: SloPoint | None
    failing: tuple[str, ...]
    relaxed: Slo | None

    def describe(self) -> str:
        parts = [f"not stated by the data: {u}" for u in self.unstated]
        if self.nearest is not None and self.failing:
            parts.append(f"nearest point {self.nearest.label}: " + "; ".join(self.failing))
        return "; ".join(parts)


def _excess(bound: SloBound, value: float) -> float:
    """How far past the bound a value is, as a share of the bound (0 when it holds)."""
    over = value - bound.limit if bound.is_ceiling else bound.limit - value
    return max(over, 0.0) / bound.limit


def _round_past(value: float, *, up: bool) -> float:
    """`value` to 3 significant figures, rounded away from the bound it must now meet."""
    if value <= 0:
        return value
    step = 10 ** (math.floor(math.log10(value)) - 2)
    steps = math.ceil(value / step - 1e-9) if up else math.floor(value / step + 1e-9)
    return round(steps * step, 12)


def explain_miss(points: Sequence[SloPoint], slo: Slo) -> SloMiss:
    """Name every bounded percentile no point states, the nearest point (smallest worst
    shortfall, as a share of each bound) and by how much each bound fails there."""
    unstated: list[str] = []
    for bound in slo.bounds:
        if any(bound.key in p.metrics for p in points):
            continue
        prefix = f"{bound.metric.value}."
        stated = sorted(
            {k.removeprefix(prefix) for p in points for k in p.metrics if k.startswith(prefix)}
        )
        label = bound.label
        unstated.append(
            f"{label} (it states {', '.join(stated)})"
            if stated
            else f"{label} (no percentile of it)"
        )
    success_needed = slo.bounds and slo.min_success_rate > 0
    if success_needed and points and all(p.success_rate is None for p in points):
        unstated.append(f"success rate (the SLO needs ≥ {slo.min_success_rate:.0%})")
    candidates = [p for p in points if all(b.key in p.metrics for b in slo.bounds)]
    if not candidates:
        return SloMiss(tuple(unstated), None, (), None)

    def shortfall(point: SloPoint) -> tuple[float, float]:
        worst = max((_excess(b, point.metrics[b.key]) for b in slo.bounds), default=0.0)
        success = point.success_rate
        missed = success is not None and success_needed and success < slo.min_success_rate
        return (
            worst + (slo.min_success_rate - success if missed and success is not None else 0.0),
            -point.tok_per_s_per_gpu,
        )

    nearest = min(candidates, key=shortfall)
    failing = []
    bounds = []
    for bound in slo.bounds:
        value = nearest.metrics[bound.key]
        unit = bound.unit
        if bound.met_by(value):
            bounds.append(bound)
            continue
        gap = abs(value - bound.limit)
        word = "over" if bound.is_ceiling else "under"
        failing.append(
            f"{bound.label} is {value:.3g} {unit}, "
            f"{gap:.3g} {unit} ({gap / bound.limit:.0%}) {word} the bound {bound.rule().describe()}"
        )
        bounds.append(
            SloBound(bound.metric, bound.percentile, _round_past(value, up=bound.is_ceiling))
        )
    min_success = slo.min_success_rate
    if nearest.success_rate is None:
        min_success = 0.0
    elif nearest.success_rate < min_success:
        failing.append(f"success is {nearest.success_rate:.1%} (needs ≥ {min_success:.0%})")
        min_success = math.floor(nearest.success_rate * 1000) / 1000
    return SloMiss(tuple(unstated), nearest, tuple(failing), Slo(tuple(bounds), min_success))
