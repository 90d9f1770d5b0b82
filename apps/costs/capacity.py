"""Capacity planning: GPUs, nodes and $/month a workload needs on each deployment.

Pure functions. A candidate deployment brings its throughput per GPU at the SLO (from
`apps.costs.slo`), which tokens that throughput counts, the GPUs one serving replica
takes, GPUs per node and a price. The plan sizes for the peak, adds headroom, rounds up
to whole replicas and nodes, and prices the GPUs for a month of 730 hours.

Throughput measured at one token shape does not carry over to another; when the
candidate's measured scenario differs from the workload the plan says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from apps.api_params import (
    JSON_NUMBER,
    NotBoolean,
    RequestsPerDay,
    RequestsPerS,
    Share,
    Tokens,
)
from apps.costs.formulas import (
    HOURS_PER_MONTH,
    SECONDS_PER_HOUR,
    TOKENS_PER_MTOK,
    CostInputError,
    TokenKind,
    finite_result,
    require_fraction,
    require_gpus,
    require_non_negative,
    require_positive,
)

SECONDS_PER_DAY = 86_400.0
# Past this a plan is a typo, not a purchase; it also keeps the arithmetic finite.
MAX_GPUS = 1_000_000_000
# Relative difference in token counts or cache hit rate above which we warn.
_SHAPE_TOLERANCE = 0.10


@dataclass(frozen=True, slots=True)
class Workload:
    """What must be served. Give `requests_per_day` or `peak_requests_per_s`.

    `peak_to_average` turns a daily volume into a peak rate; `headroom` is spare capacity
    on top of the peak (0.2 = 20% more than the peak needs).
    """

    # The ranges are the API's schema (POST /api/v1/costs/capacity takes this dataclass).
    input_tokens: Annotated[Tokens, JSON_NUMBER]
    output_tokens: Annotated[Tokens, JSON_NUMBER]
    requests_per_day: Annotated[RequestsPerDay, JSON_NUMBER] | None = None
    peak_requests_per_s: Annotated[RequestsPerS, JSON_NUMBER] | None = None
    peak_to_average: Annotated[float, Field(ge=1, le=1e6), JSON_NUMBER, NotBoolean] = 1.0
    cache_hit_rate: Annotated[Share, JSON_NUMBER] = 0.0
    headroom: Annotated[float, Field(ge=0, le=100), JSON_NUMBER, NotBoolean] = 0.2


@dataclass(frozen=True, slots=True)
class ScenarioShape:
    """The token shape a candidate's throughput was measured at."""

    input_tokens: float
    output_tokens: float
    cache_hit_rate: float


@dataclass(frozen=True, slots=True)
class Candidate:
    """A deployment able to serve the workload. `tok_per_s_per_gpu` None: cannot meet the SLO."""

    label: str
    accelerator: str
    tok_per_s_per_gpu: float | None
    token_kind: TokenKind
    gpus_per_replica: int
    gpus_per_node: int
    usd_per_gpu_hour: float
    price_label: str = ""
    throughput_provenance: str = "measured"
    scenario: ScenarioShape | None = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class CapacityPlan:
    candidate: Candidate
    feasible: bool
    peak_requests_per_s: float
    requests_per_s_per_gpu: float | None = None
    replicas: int | None = None
    gpus: int | None = None
    nodes: int | None = None
    peak_utilization: float | None = None
    usd_per_month: float | None = None
    usd_per_mtok_served: float | None = None
    warnings: tuple[str, ...] = ()
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Load:
    peak_requests_per_s: float
    average_requests_per_s: float


def workload_load(workload: Workload) -> Load:
    """Peak and average requests per second of a workload."""
    require_positive("input_tokens", workload.input_tokens)
    require_positive("output_tokens", workload.output_tokens)
    require_fraction("cache_hit_rate", workload.cache_hit_rate)
    require_non_negative("headroom", workload.headroom)
    factor = require_positive("peak_to_average", workload.peak_to_average)
    if factor < 1:
        raise CostInputError("peak_to_average", f"must be at least 1 (got {factor:g})")
    if workload.requests_per_day is not None and workload.peak_requests_per_s is not None:
        raise CostInputError(
            "requests_per_day", "give requests per day or peak requests/s, not both"
        )
    if workload.requests_per_day is not None:
        average = require_positive("requests_per_day", workload.requests_per_day) / SECONDS_PER_DAY
        return Load(peak_requests_per_s=average * factor, average_requests_per_s=average)
    if workload.peak_requests_per_s is not None:
        peak = require_positive("peak_requests_per_s", workload.peak_requests_per_s)
        return Load(peak_requests_per_s=peak, average_requests_per_s=peak / factor)
    raise CostInputError("requests_per_day", "give requests per day or peak requests/s")


def tokens_per_request(workload: Workload, kind: TokenKind) -> float:
    if kind is TokenKind.INPUT:
        return workload.input_tokens
    if kind is TokenKind.OUTPUT:
        return workload.output_tokens
    return workload.input_tokens + workload.output_tokens


def plan_capacity(workload: Workload, candidate: Candidate) -> CapacityPlan:
    """GPUs, replicas, nodes and $/month for `candidate` to serve `workload` at its peak."""
    load = workload_load(workload)
    replica_gpus = require_gpus(candidate.gpus_per_replica)
    node_gpus = require_gpus(candidate.gpus_per_node)
    price = require_non_negative("usd_per_gpu_hour", candidate.usd_per_gpu_hour)
    warnings = _shape_warnings(workload, candidate.scenario)
    if candidate.throughput_provenance == "interpolated":
        warnings += ("throughput at the SLO is interpolated between measured points",)
    if candidate.tok_per_s_per_gpu is None:
        return CapacityPlan(
            candidate=candidate,
            feasible=False,
            peak_requests_per_s=load.peak_requests_per_s,
            warnings=warnings,
            reason=candidate.note or "no measured point meets the SLO",
        )
    per_gpu = require_positive("tok_per_s_per_gpu", candidate.tok_per_s_per_gpu)
    rps_per_gpu = per_gpu / tokens_per_request(workload, candidate.token_kind)
    needed = load.peak_requests_per_s * (1.0 + workload.headroom)
    exact_replicas = needed / (rps_per_gpu * replica_gpus)
    load_field = (
        "requests_per_day" if workload.requests_per_day is not None else "peak_requests_per_s"
    )
    if not exact_replicas * replica_gpus <= MAX_GPUS:
        raise CostInputError(
            load_field, f"needs more than {MAX_GPUS:,} GPUs; check the load and the throughput"
        )
    # A tiny tolerance keeps 8.000000001 replicas from becoming 9 through float noise.
    replicas = max(1, math.ceil(exact_replicas - 1e-9))
    gpus = replicas * replica_gpus
    nodes = math.ceil(gpus / node_gpus)
    usd_per_month = finite_result("usd_per_gpu_hour", gpus * price * HOURS_PER_MONTH)
    tokens_per_month = (
        load.average_requests_per_s
        * (workload.input_tokens + workload.output_tokens)
        * SECONDS_PER_HOUR
        * HOURS_PER_MONTH
    )
    if not tokens_per_month > 0:  # a load so small it rounds to no tokens at all
        raise CostInputError(load_field, "is out of range: too small to price")
    return CapacityPlan(
        candidate=candidate,
        feasible=True,
        peak_requests_per_s=load.peak_requests_per_s,
        requests_per_s_per_gpu=rps_per_gpu,
        replicas=replicas,
        gpus=gpus,
        nodes=nodes,
        peak_utilization=load.peak_requests_per_s / (gpus * rps_per_gpu),
        usd_per_month=usd_per_month,
        usd_per_mtok_served=usd_per_month / (tokens_per_month / TOKENS_PER_MTOK),
        warnings=warnings,
        reason=f"{replicas} x {replica_gpus} GPUs on {nodes} node(s)",
    )


def rank_plans(workload: Workload, candidates: Sequence[Candidate]) -> list[CapacityPlan]:
    """Plans cheapest first (then fewest GPUs); candidates that cannot meet the SLO last."""
    plans = [plan_capacity(workload, candidate) for candidate in candidates]
    return sorted(
        plans,
        key=lambda plan: (
            not plan.feasible,
            plan.usd_per_month if plan.usd_per_month is not None else math.inf,
            plan.gpus if plan.gpus is not None else math.inf,
            plan.candidate.label,
        ),
    )


def _shape_warnings(workload: Workload, shape: ScenarioShape | None) -> tuple[str, ...]:
    if shape is None:
        return ("the scenario the throughput was measured at is unknown",)
    warnings: list[str] = []
    for name, measured, wanted in (
        ("input tokens", shape.input_tokens, workload.input_tokens),
        ("output tokens", shape.output_tokens, workload.output_tokens),
    ):
        if abs(measured - wanted) > _SHAPE_TOLERANCE * wanted:
            warnings.append(f"measured at {measured:g} {name}/request, workload has {wanted:g}")
    if abs(shape.cache_hit_rate - workload.cache_hit_rate) > _SHAPE_TOLERANCE:
        warnings.append(
            f"measured at {shape.cache_hit_rate:.0%} prefix-cache hits, "
            f"workload has {workload.cache_hit_rate:.0%}"
        )
    return tuple(warnings)
