"""Leave-one-accelerator-out validation of a point model on the shipped data.

Pure: InferenceX rows and sglang cookbook cells in, held-out points out. For each
accelerator: fit a candidate point model (apps/projections/pointmodels.py) on every other
accelerator's points, project the held-out one's configurations from its specifications
alone, and compare with its measurements at matched interactivity (tok/s/user) and,
separately, at the measured concurrency. The nested evaluation and the conformal bands
built from these held-out errors are in apps/projections/nested.py.
"""

import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from apps.projections.model import (
    Accelerator,
    Architecture,
    Layout,
    Observation,
    Setup,
    Shape,
)
from apps.projections.pointmodels import GRID, Candidate, Curve, Fitted


def observations_from_inferencex(
    rows: Iterable[dict[str, Any]],
    *,
    architectures: dict[str, Architecture],
    accelerators: dict[str, Accelerator],
) -> tuple[list[Observation], dict[str, int]]:
    """The rows the model describes: one instance aggregated (no disaggregated prefill and
    decode pools), no speculative decoding. Returns what was left out and why, counted."""
    kept: list[Observation] = []
    skipped: dict[str, int] = {}

    def skip(reason: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1

    for row in rows:
        metrics = row["metrics"]
        if row["disagg"] or row.get("is_multinode"):
            skip("disaggregated or multi-node")
            continue
        if row.get("spec_method", "none") != "none":
            skip("speculative decoding")
            continue
        arch = architectures.get(row["model"].lower())
        accel = accelerators.get(row["hardware"].upper())
        if arch is None or accel is None:
            skip("no reference specification")
            continue
        if not all(metrics.get(k) for k in ("median_tpot", "median_ttft", "tput_per_gpu")):
            skip("missing metrics")
            continue
        tp = int(row["decode_tp"])
        layout = Layout(
            gpus=tp,
            tp=tp,
            dp_attention=bool(row["decode_dp_attention"]),
            ep=int(row.get("decode_ep") or 1),
        )
        shape = Shape(input_tokens=int(row["isl"]), output_tokens=int(row["osl"]))
        kept.append(
            Observation(
                setup=Setup(arch, accel, row["framework"], row["precision"], layout, shape),
                concurrency=float(row["conc"]),
                tpot_s=float(metrics["median_tpot"]),
                ttft_s=float(metrics["median_ttft"]),
                interactivity=float(metrics["median_intvty"]),
                # single-instance rows: every GPU serves both phases, so InferenceX's
                # per-GPU total is per deployed GPU (disaggregated rows are left out above)
                tput_per_gpu=float(metrics["tput_per_gpu"]),
                date=str(row.get("date") or ""),
            )
        )
    return kept, skipped


def _row_key(row: dict[str, Any]) -> tuple:
    names = (
        *("hardware", "framework", "model", "precision", "spec_method", "disagg"),
        *("decode_tp", "decode_ep", "decode_dp_attention", "isl", "osl", "conc", "date"),
    )
    return tuple(row.get(n) for n in names)


def inferencex_all_rows(
    latest: Iterable[dict[str, Any]], history: Iterable[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The latest snapshot and the history together, each run (configuration, load level
    and date) once: a configuration re-run on another date is another measurement."""
    return list({_row_key(r): r for r in [*history, *latest]}.values())


def observations_from_cookbook(
    data: dict[str, Any],
    *,
    architectures: dict[str, Architecture],
    accelerators: dict[str, Accelerator],
) -> tuple[list[Observation], dict[str, int]]:
    """sglang cookbook cells (p50 TTFT and TPOT, total tok/s per GPU) as observations.
    Speculative decoding is not modelled: those cells are counted out. A level with more
    clients than the server's --max-running-requests runs that many at once; the rest wait,
    so its TTFT is queueing (kept out of the TTFT fit) and its batch is the limit."""
    kept: list[Observation] = []
    skipped: dict[str, int] = {}
    # the cells were published with the cookbook's commit; its date stands for the engine's
    found = re.search(r"\d{4}-\d{2}-\d{2}", data["source"]["citation"])
    published = found.group(0) if found else ""
    arch = architectures.get(str(data["model"]).lower())
    scenario = data["scenario"]
    shape = Shape(input_tokens=scenario["input_tokens"], output_tokens=scenario["output_tokens"])
    for config in data["configurations"]:
        accel = accelerators.get(config["accelerator"].upper())
        points = config["points"]
        if config.get("speculative"):
            skipped["speculative decoding"] = skipped.get("speculative decoding", 0) + len(points)
            continue
        if arch is None or accel is None:
            skipped["no reference specification"] = skipped.get("no reference specification", 0)
            skipped["no reference specification"] += len(points)
            continue
        par = config["parallelism"]
        gpus = int(config["gpus"])
        limit = math.inf
        expert_parallel = int(par.get("ep") or 1)
        for flag in config.get("engine_flags", []):
            if flag.startswith("--max-running-requests"):
                limit = float(flag.split()[-1])
            if flag.startswith("--moe-a2a-backend"):  # sglang: experts spread over the TP group
                expert_parallel = int(par["tp"])
        for p in points:
            running = min(float(p["max_concurrency"]), limit)
            tpot = p["tpot_ms_p50"] / 1000
            layout = Layout(
                gpus=gpus,
                tp=int(par["tp"]),
                dp_attention=bool(par.get("dp_attention")),
                ep=expert_parallel,
            )
            precision = config["quantization"].lower()
            kept.append(
                Observation(
                    setup=Setup(arch, accel, data["engine"], precision, layout, shape),
                    concurrency=running,
                    tpot_s=tpot,
                    ttft_s=p["ttft_ms_p50"] / 1000,
                    interactivity=1 / tpot,
                    tput_per_gpu=float(p["tokens_per_sec_per_gpu"]),
                    ttft_queued=running < p["max_concurrency"],
                    date=published,
                )
            )
    return kept, skipped


@dataclass(frozen=True)
class HeldOutPoint:
    """One measured point of an accelerator left out of the calibration, beside its
    projection from the others."""

    sku: str
    engine: str
    precision: str
    scenario: str
    concurrency: float
    interactivity: float
    measured: float  # total tok/s per GPU
    projected: float | None  # at the same interactivity; None: the curve never reaches it
    projected_at_concurrency: float | None  # at the measured concurrency
    model: str
    # the point's distance to the projected curve in log space, the larger of the two
    # axes' (interactivity, throughput) log ratios at the curve's nearest point: how far
    # the curve must be widened, along both axes, to hold the point (reached or not)
    curve_distance: float
    # "seen": the model in this precision was measured on another accelerator of the same
    # family in the calibration; "extrapolated": it was not (the band is wider there)
    stratum: str
    vendor: str = ""
    fallback: bool = False  # the efficiencies came from a wider group than engine x family

    @property
    def ratio_at_concurrency(self) -> float | None:
        value = self.projected_at_concurrency
        return self.measured / value if value else None

    @property
    def ratio(self) -> float | None:
        return self.measured / self.projected if self.projected else None

    @property
    def abs_pct_error(self) -> float | None:
        return pct_error(self.projected, self.measured) if self.projected else None

    @property
    def abs_pct_error_at_concurrency(self) -> float | None:
        value = self.projected_at_concurrency
        return pct_error(value, self.measured) if value else None


def pct_error(projected: float, measured: float) -> float:
    """Absolute % error of a projected throughput against the measured one."""
    return abs(projected / measured - 1) * 100


def scenario_label(shape: Shape) -> str:
    return f"{shape.input_tokens // 1024}k/{shape.output_tokens // 1024}k"


def stratum_of(obs: Observation, train: Sequence[Observation]) -> str:
    """Whether the projection extrapolates: no calibration point of the same model, in the
    same precision, served by the same engine, on the projected accelerator's family."""
    return stratum(obs.setup, train)


def stratum(setup: Setup, train: Sequence[Observation]) -> str:
    for o in train:
        same = o.arch.name == setup.arch.name and o.precision_name == setup.precision_name
        if same and o.engine == setup.engine and o.accel.family == setup.accel.family:
            return "seen"
    return "extrapolated"


Fit = Callable[[Candidate, Sequence[Observation]], Fitted]


def fit_candidate(candidate: Candidate, train: Sequence[Observation]) -> Fitted:
    return candidate.fit(train)


def runs_of(held: Sequence[Observation]) -> dict[tuple, list[Observation]]:
    """Observations by run: one setup as run on one date, its load levels together."""
    runs: dict[tuple, list[Observation]] = {}
    for obs in held:
        runs.setdefault((obs.setup.key, obs.date), []).append(obs)
    return runs


def curve_with_levels(fitted: Fitted, runs: Sequence[Observation]) -> Curve:
    """One run's projection (as run on its date) at GRID's concurrencies, then at each of
    its measured levels, in its order: split at len(GRID)."""
    levels = np.array([o.concurrency for o in runs])
    return fitted.curve(runs[0].setup, runs[0].date, np.concatenate([GRID, levels]))


def project_held_out(
    fitted: Fitted, held: Sequence[Observation], train: Sequence[Observation]
) -> list[HeldOutPoint]:
    """Each held-out point beside the projection of its setup (as run on its date) by a
    model fitted on `train` only: the curve, and the curve at the point's concurrency."""
    strata: dict[tuple[str, ...], str] = {}
    found: dict[int, HeldOutPoint] = {}
    for runs in runs_of(held).values():
        setup = runs[0].setup
        both = curve_with_levels(fitted, runs)
        n = len(GRID)
        curve = Curve(both.concurrency[:n], both.tpot_s[:n], both.ttft_s[:n], both.tput_per_gpu[:n])
        kind = (setup.arch.name, setup.precision_name, setup.engine, setup.accel.family)
        if kind not in strata:
            strata[kind] = stratum_of(runs[0], train)
        fallback = fitted.efficiency(setup).fallback
        for obs, at_level in zip(runs, both.tput_per_gpu[n:], strict=True):
            found[id(obs)] = HeldOutPoint(
                sku=obs.accel.sku,
                engine=obs.engine,
                precision=obs.precision_name,
                scenario=scenario_label(obs.shape),
                concurrency=obs.concurrency,
                interactivity=obs.interactivity,
                measured=obs.tput_per_gpu,
                projected=curve.tput_at_interactivity(obs.interactivity),
                projected_at_concurrency=float(at_level),
                model=obs.arch.name,
                curve_distance=curve.distance(obs.interactivity, obs.tput_per_gpu),
                stratum=strata[kind],
                vendor=obs.accel.vendor,
                fallback=fallback,
            )
    return [found[id(obs)] for obs in held]


def leave_one_accelerator_out(
    observations: Sequence[Observation],
    candidate: Candidate,
    *,
    only: Iterable[str] | None = None,
    fit: Fit = fit_candidate,
    without_family: bool = False,
) -> list[HeldOutPoint]:
    """Each accelerator (or each of `only`) projected by `candidate` fitted on all the
    others: `fit` only ever sees observations of other accelerators. `without_family`: on
    the other families only, so every point is an extrapolation to a family the
    calibration has never seen (how the extrapolated band is made, nested.py)."""
    points: list[HeldOutPoint] = []
    for held, train in held_out_folds(observations, only=only, without_family=without_family):
        points += project_held_out(fit(candidate, train), held, train)
    return points


def held_out_folds(
    observations: Sequence[Observation],
    *,
    only: Iterable[str] | None = None,
    without_family: bool = False,
) -> Iterator[tuple[list[Observation], list[Observation]]]:
    """Each accelerator's (or each of `only`'s) observations, beside every other
    accelerator's (with `without_family`, only other families'): folds with both."""
    skus = sorted({o.accel.sku for o in observations})
    for sku in skus if only is None else sorted(only):
        held = [o for o in observations if o.accel.sku == sku]
        family = held[0].accel.family if held else None
        train = [
            o
            for o in observations
            if o.accel.sku != sku and not (without_family and o.accel.family == family)
        ]
        if held and train:
            yield held, train
