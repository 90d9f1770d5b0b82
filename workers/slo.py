"""One SLO rule for every consumer: goodput, early stop, the leaderboard point, cost at an
SLO, compare and the API all call `judge` (docs/methodology.md, "SLO").

Pure, no Django: GPU hosts import it with the load generator.

An SLO is a set of bounds (metric, percentile, limit, unit) plus a minimum success rate
(default 99%). A point either

- meets it: every bound holds at its percentile and enough requests succeeded;
- misses it: some bound is broken, or too many requests failed (each named); or
- cannot be checked: a bounded percentile was not reported.

A point that states no success rate (a peer's aggregate row) is "success not stated": not a
miss and not unverifiable, it is judged on its bounds and marked (`Verdict.success_unstated`),
so every page can say how many of its points took part that way.

Percentiles are spelled one way everywhere: "p50", "p90", "p95", "p99", "p99.9". The
stored distributions (`workers.results.Distribution`) key p99.9 as "p999"; `stored_key`
is the one mapping between the two.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from workers.figures import DISTRIBUTIONS

Metric = Literal["ttft", "tpot", "e2el", "interactivity"]
METRICS: tuple[Metric, ...] = ("ttft", "tpot", "e2el", "interactivity")
# Latencies are ceilings; interactivity (tok/s/user, higher is better) is a floor. Labels
# and directions are the registry's (workers/figures.py).
CEILINGS = frozenset(m for m in METRICS if DISTRIBUTIONS[m][1] == "lower")
LABELS = {m: DISTRIBUTIONS[m][0] for m in METRICS}
# The unit a bound may be written in, and the factor to the stored unit (ms, tok/s/user).
UNITS: dict[str, tuple[frozenset[str], float]] = {
    "ms": (frozenset(CEILINGS), 1.0),
    "s": (frozenset(CEILINGS), 1000.0),
    "tok/s/user": (frozenset({"interactivity"}), 1.0),
}
DEFAULT_MIN_SUCCESS_RATE = 0.99
# Canonical spelling -> key in a stored distribution. The only such mapping in the project.
PERCENTILES: dict[str, str] = {
    "p50": "p50",
    "p90": "p90",
    "p95": "p95",
    "p99": "p99",
    "p99.9": "p999",
}
_STORED_TO_CANONICAL = {stored: canonical for canonical, stored in PERCENTILES.items()}
# A peer tool's statistic name -> the stored distribution's slot: the summary statistics
# and every percentile above, as the importers read them ("median" is p50).
STAT_SLOTS: dict[str, str] = {
    "mean": "mean",
    "std": "std",
    "min": "min",
    "max": "max",
    "median": "p50",
    **PERCENTILES,
}

Status = Literal["meets", "misses", "cannot_check"]
# How every page marks a point that states no success rate.
SUCCESS_NOT_STATED = "success not stated"


class SloError(ValueError):
    """An SLO that cannot be asked for. `field` names what is wrong."""

    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


# Every spelling percentile_name takes, as a schema states it (the API's OpenAPI document):
# p50, 50, 50.0 ... p99.9, 99.9, 99.90, and the stored key p999; 'P' in either case.
PERCENTILE_PATTERN = r"^(?:[pP]?(?:(?:50|90|95|99)(?:\.0*)?|99\.90*)|[pP]999)$"


def percentile_name(value: str | float | int, field: str = "percentile") -> str:
    """The canonical spelling of a percentile: 99, 99.0, "99", "p99" -> "p99";
    99.9, "p99.9", "p999" (the stored key) -> "p99.9". Anything else (PERCENTILE_PATTERN
    says what) is an SloError naming the percentiles that are stored."""
    if isinstance(value, bool) or not re.fullmatch(PERCENTILE_PATTERN, str(value)):
        raise SloError(field, _unknown(value))
    text = str(value).strip().lower()
    if text in _STORED_TO_CANONICAL:
        return _STORED_TO_CANONICAL[text]
    try:
        number = float(text.removeprefix("p"))
    except ValueError:
        raise SloError(field, _unknown(value)) from None
    spelled = f"p{number:g}"
    if spelled not in PERCENTILES:
        raise SloError(field, _unknown(value))
    return spelled


def stored_key(percentile: str | float | int) -> str:
    """The key under which a stored distribution keeps this percentile ("p99.9" -> "p999")."""
    return PERCENTILES[percentile_name(percentile)]


def _unknown(value: object) -> str:
    return f"percentile {value!r} is not stored; stored percentiles: {', '.join(PERCENTILES)}"


@dataclass(frozen=True, slots=True)
class Bound:
    """One bound, e.g. TTFT p99 <= 2220 ms, or interactivity p50 >= 30 tok/s/user.

    `limit` is in `unit`; `stored_limit` in the stored unit (ms, or tok/s/user)."""

    metric: Metric
    percentile: str
    limit: float
    unit: str = "ms"

    def __post_init__(self) -> None:
        if self.metric not in METRICS:
            raise SloError("metric", f"unknown metric {self.metric!r}; one of {', '.join(METRICS)}")
        object.__setattr__(self, "percentile", percentile_name(self.percentile))
        if self.unit not in UNITS or self.metric not in UNITS[self.unit][0]:
            allowed = [u for u, (metrics, _) in UNITS.items() if self.metric in metrics]
            raise SloError("unit", f"{self.metric} is bounded in {' or '.join(allowed)}")
        if isinstance(self.limit, bool) or not self.limit > 0:
            raise SloError("limit", "must be > 0")

    @property
    def is_ceiling(self) -> bool:
        return self.metric in CEILINGS

    @property
    def stored_limit(self) -> float:
        return self.limit * UNITS[self.unit][1]

    @property
    def stored_key(self) -> str:
        return PERCENTILES[self.percentile]

    def holds(self, stored_value: float) -> bool:
        """Whether a value in the stored unit satisfies this bound."""
        if self.is_ceiling:
            return stored_value <= self.stored_limit
        return stored_value >= self.stored_limit

    def describe(self) -> str:
        sign = "≤" if self.is_ceiling else "≥"
        return f"{LABELS[self.metric]} {self.percentile} {sign} {self.limit:g} {self.unit}"


@dataclass(frozen=True, slots=True)
class Slo:
    bounds: tuple[Bound, ...] = ()
    min_success_rate: float = DEFAULT_MIN_SUCCESS_RATE

    def __post_init__(self) -> None:
        if not 0 <= self.min_success_rate <= 1:
            raise SloError("min_success_rate", "must be between 0 and 1")

    @property
    def any(self) -> bool:
        """An SLO with no latency bound is no SLO (nothing to rank points against)."""
        return bool(self.bounds)

    def describe(self) -> str:
        if not self.bounds:
            return "no SLO"
        parts = [bound.describe() for bound in self.bounds]
        if self.min_success_rate > 0:
            parts.append(f"success ≥ {_percent(self.min_success_rate)}")
        else:
            parts.append("success rate not required")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class Verdict:
    status: Status
    failed: tuple[str, ...] = ()  # "TPOT p99 is 80 ms (needs ≤ 50 ms)", "success 70% < 99%"
    missing: tuple[str, ...] = ()  # "tpot.p75"-style: what the point did not report
    slo: Slo = field(default_factory=Slo)
    # The SLO asks a success rate the point does not state: judged on its bounds, marked.
    success_unstated: bool = False

    @property
    def meets(self) -> bool:
        return self.status == "meets"

    def describe(self) -> str:
        if self.status == "meets":
            unstated = f" ({SUCCESS_NOT_STATED})" if self.success_unstated else ""
            return f"meets {self.slo.describe()}{unstated}"
        if self.status == "misses":
            return "misses: " + "; ".join(self.failed)
        return "cannot check: not reported: " + ", ".join(self.missing)


# What a point is judged on: metric -> {stored percentile key -> value in the stored unit}.
Figures = Mapping[str, Mapping[str, float | None]]


def judge(slo: Slo, figures: Figures, success_rate: float | None) -> Verdict:
    """Does this point meet this SLO? Misses win over cannot-check: a point that breaks a
    bound it reports misses, whatever else it lacks. A point that states no success rate is
    judged on its bounds and marked `success_unstated`, never missed for it."""
    failed: list[str] = []
    missing: list[str] = []
    unstated = False
    for bound in slo.bounds:
        value = (figures.get(bound.metric) or {}).get(bound.stored_key)
        if value is None:
            missing.append(f"{bound.metric}.{bound.percentile}")
        elif not bound.holds(value):
            shown = value / UNITS[bound.unit][1]
            sign = "≤" if bound.is_ceiling else "≥"
            failed.append(
                f"{LABELS[bound.metric]} {bound.percentile} is {shown:.4g} {bound.unit} "
                f"(needs {sign} {bound.limit:g} {bound.unit})"
            )
    # A minimum of 0% asks nothing of the success rate. A point that does not report it
    # (InferenceX's published rows) is judged on its latencies alone, and marked.
    if slo.bounds and slo.min_success_rate > 0:
        if success_rate is None:
            unstated = True
        # The tolerance absorbs float noise in succeeded / total (e.g. 99 / 100 vs 0.99).
        elif success_rate < slo.min_success_rate - 1e-12:
            failed.append(f"success {success_rate:.1%} < {_percent(slo.min_success_rate)}")
    if failed:
        return Verdict("misses", tuple(failed), tuple(missing), slo, unstated)
    if missing:
        return Verdict("cannot_check", (), tuple(missing), slo, unstated)
    return Verdict("meets", (), (), slo, unstated)


def _percent(rate: float) -> str:
    return f"{round(rate * 100, 4):g}%"


def point_figures(
    latency_ms: Mapping[str, Mapping[str, float | None] | None],
    interactivity: Mapping[str, float | None] | None,
) -> dict[str, Mapping[str, float | None]]:
    """Figures from a point's stored distributions (the document's `latency_ms` and
    `interactivity_tok_s_user`, as dicts). Open-loop points carry latencies from the planned
    send time too; those are what a user waited, so TTFT and E2EL are judged on them."""
    figures: dict[str, Mapping[str, float | None]] = {}
    for metric in ("ttft", "tpot", "e2el"):
        figures[metric] = latency_ms.get(f"{metric}_from_sched") or latency_ms.get(metric) or {}
    figures["interactivity"] = interactivity or {}
    return figures


def request_meets(
    slo: Slo,
    *,
    ttft_ms: float | None,
    tpot_ms: float | None,
    e2el_ms: float | None,
) -> bool:
    """Goodput's per-request test: a successful request meets every latency bound's limit
    (a percentile says how many requests may exceed it; one request either does or not).
    A single-token output has no TPOT nor interactivity: those bounds do not apply to it."""
    values = {
        "ttft": ttft_ms,
        "tpot": tpot_ms,
        "e2el": e2el_ms,
        "interactivity": 1000.0 / tpot_ms if tpot_ms else None,
    }
    for bound in slo.bounds:
        value = values[bound.metric]
        if value is None:
            if bound.metric in ("tpot", "interactivity"):
                continue
            return False
        if not bound.holds(value):
            return False
    return True


def from_legacy(
    *,
    ttft_ms: float | None = None,
    ttft_percentile: float | str = 99,
    tpot_ms: float | None = None,
    e2el_ms: float | None = None,
    min_success_rate: float = DEFAULT_MIN_SUCCESS_RATE,
) -> Slo:
    """The SLO an old document (or scenario row) meant: every bound at `ttft_percentile`,
    in ms. That is what the load generator that wrote those documents checked."""
    percentile = percentile_name(ttft_percentile, "ttft_percentile")
    stated: tuple[tuple[Metric, float | None], ...] = (
        ("ttft", ttft_ms),
        ("tpot", tpot_ms),
        ("e2el", e2el_ms),
    )
    bounds = tuple(
        Bound(metric, percentile, limit, "ms") for metric, limit in stated if limit is not None
    )
    return Slo(bounds, min_success_rate)
