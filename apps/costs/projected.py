"""Projected accelerators in the procurement calculator (opt-in): GPUs and $/month with the
band. Pure: a projection and the calculator's inputs in, plans out; never a ranked row.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from apps.costs.capacity import Candidate, CapacityPlan, ScenarioShape, plan_capacity
from apps.costs.formulas import AcceleratorPrices, CostInputError, TokenKind, tier_price
from apps.costs.procurement_inputs import ProcurementInputs
from apps.costs.slo import Metric, Slo

PROJECTED_SKU = "B200"
GPUS_PER_REPLICA = 8


def _value(point: dict[str, float], metric: Metric, output_tokens: int) -> float:
    tpot = 1 / point["interactivity"]
    return {
        Metric.TTFT_S: point["ttft_s"],
        Metric.TPOT_S: tpot,
        Metric.E2EL_S: point["ttft_s"] + output_tokens * tpot,
        Metric.INTERACTIVITY: point["interactivity"],
    }[metric]


def meets(point: dict[str, float], slo: Slo, *, output_tokens: int) -> bool:
    """A projection is of medians: every bound is judged on the projected median, whatever
    its percentile (optimistic for p99 bounds, and the page says so)."""
    return all(b.met_by(_value(point, b.metric, output_tokens)) for b in slo.bounds)


@dataclass(frozen=True)
class ProjectedPlan:
    sku: str
    usd_per_gpu_hour: float
    tok_per_s_per_gpu: float | None  # central, at the SLO
    central: CapacityPlan | None
    optimistic: CapacityPlan | None  # the band's high throughput: fewest GPUs
    pessimistic: CapacityPlan | None  # the band's low throughput: most GPUs
    problem: str = ""


def _tput(point: dict[str, float], kind: TokenKind) -> float:
    """A projected point's tok/s per GPU of `kind` (input: total less output)."""
    if kind == TokenKind.INPUT:
        return point["tput_per_gpu"] - point["output_tput_per_gpu"]
    return point["output_tput_per_gpu" if kind == TokenKind.OUTPUT else "tput_per_gpu"]


def projected_plan(
    projection: dict[str, Any],
    inputs: ProcurementInputs,
    book: Mapping[str, AcceleratorPrices],
) -> ProjectedPlan:
    own = inputs.own_prices.get(PROJECTED_SKU)
    try:
        price = (
            own
            if own is not None
            else tier_price(book, PROJECTED_SKU, inputs.tier).usd_per_gpu_hour
        )
    except CostInputError as error:
        return ProjectedPlan(PROJECTED_SKU, 0, None, None, None, None, f"no price: {error.message}")
    workload = inputs.workload
    output_tokens = int(workload.output_tokens)
    fit = [
        p
        for p in projection["series"][PROJECTED_SKU]["points"]
        if meets(p, inputs.slo, output_tokens=output_tokens)
    ]
    if not fit:
        return ProjectedPlan(
            PROJECTED_SKU, price, None, None, None, None, "no projected point meets the SLO"
        )

    def tput(point: dict[str, float]) -> float:
        return _tput(point, inputs.token_kind)

    best = max(fit, key=tput)
    low, high = projection["band"]
    shape = ScenarioShape(
        workload.input_tokens, workload.output_tokens, workload.cache_hit_rate or 0.0
    )

    def plan(value: float) -> CapacityPlan:
        return plan_capacity(
            workload,
            Candidate(
                label=f"{GPUS_PER_REPLICA}×{PROJECTED_SKU} projected",
                accelerator=PROJECTED_SKU,
                tok_per_s_per_gpu=value,
                token_kind=inputs.token_kind,
                gpus_per_replica=GPUS_PER_REPLICA,
                gpus_per_node=inputs.gpus_per_node,
                usd_per_gpu_hour=price,
                throughput_provenance="projected",
                scenario=shape,
            ),
        )

    central = tput(best)
    return ProjectedPlan(
        sku=PROJECTED_SKU,
        usd_per_gpu_hour=price,
        tok_per_s_per_gpu=central,
        central=plan(central),
        optimistic=plan(central * high),
        pessimistic=plan(central * low),
    )
