"""The answer: one like-for-like comparison of two accelerators at a stated SLO.

Pure functions over measured points (apps/costs/answer_selectors.py reads them). Every page
that compares (the headline, the answer page, /compare/, the story, /costs/) and
`GET /api/v1/compare/answer` call `answer`, so one question gets one answer everywhere.

The rule (docs/methodology.md, "The answer"): each side's answer is its best *measured*
point that meets every bound of the SLO (workers/slo.py's `judge`, through
apps/costs/slo.py's `verdict`) among the configurations matching the asked facts. No
interpolation unless asked for; then only between adjacent measured levels of one
configuration, never across a gap wider than `max_gap` in concurrency, and labelled. A side
with no point meeting the SLO names its nearest point and the bound it fails.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from apps.costs.formulas import usd_per_mtok
from apps.costs.slo import (
    Metric,
    Slo,
    SloBound,
    SloPoint,
    best_throughput_at_slo,
    explain_miss,
    verdict,
)
from workers import figures, significance

ANY = "any"
NONE = "none"
SERVING = ("aggregated", "disaggregated", ANY)
# Interpolation, when asked for, never bridges levels further apart than this factor in
# concurrency (16 -> 32 may be read between; 16 -> 512 may not: nobody measured between).
DEFAULT_MAX_GAP = 2.0
# The facts that may still differ between the two sides' points, in the order shown.
DIFFERING_FACTS = (
    ("precision", "precision"),  # differs only when the question leaves it free
    ("engine", "engine"),
    ("spec", "speculative decoding"),
    ("parallelism", "parallelism"),
    ("serving", "serving"),
    ("engine_version", "engine version"),
    ("image", "image"),
    ("lengths", "lengths"),
    ("gpus", "GPUs"),
)
# The latency each side states beside its throughput, and the one the API's, /answer/'s and
# /compare/'s shorthand ceiling bounds (workers/figures.py names it: TTFT p99).
STATED_LATENCY = figures.figure(figures.ANSWER_LATENCY)


def _slot(figure: figures.Figure) -> tuple[str, str]:
    if figure.slot is None:
        raise ValueError(f"{figure.key} has no (distribution, percentile) slot")
    return figure.slot


STATED_SLOT = _slot(STATED_LATENCY)


def shorthand_ceiling(ceiling_s: float | str) -> dict[str, float | str]:
    """The answer's bounds for the shorthand ceiling (`STATED_LATENCY.ceiling_param`): a TTFT
    ceiling in seconds at the stated latency's percentile."""
    return {"ttft_s_max": ceiling_s, "ttft_percentile": STATED_SLOT[1]}


@dataclass(frozen=True, slots=True)
class Measured:
    """One measured load point of one run, with the facts of its configuration."""

    run_id: int
    deployment_id: int
    deployment: str
    accelerator: str
    gpus: int
    engine: str
    engine_version: str
    image: str
    precision: str
    spec: str  # "" when the configuration has no speculative decoding
    parallelism: str
    serving: Literal["aggregated", "disaggregated"]
    origin: str
    provenance: str
    rules_passed: bool
    rules_failed: tuple[str, ...]
    lengths: str  # "8192/1024" as the scenario states them
    level: str
    concurrency: int | None
    tok_s_per_gpu: float | None  # on the asked basis; the lower reading when unstated
    basis_stated: bool
    usd_per_gpu_hour: float | None
    metrics: dict[str, float] = field(default_factory=dict)  # "ttft_s.p99"-style
    success_rate: float | None = None
    point_id: int = 0  # the stored point, whose request records (if any) give an interval
    # A figure of unstated token kind: its two readings (tok_s_per_gpu is the lower).
    tok_s_range: tuple[float, float] | None = None

    @property
    def interactivity_p50(self) -> float | None:
        return self.metrics.get("interactivity.p50")

    @property
    def latency_s(self) -> float | None:
        """The latency an answer states beside the point's throughput (STATED_LATENCY), s."""
        distribution, percentile = STATED_SLOT
        return self.metrics.get(f"{distribution}_s.{percentile}")

    @property
    def usd_per_mtok(self) -> float | None:
        if not self.usd_per_gpu_hour or not self.tok_s_per_gpu:
            return None
        return usd_per_mtok(self.usd_per_gpu_hour, self.tok_s_per_gpu)

    def slo_point(self) -> SloPoint:
        return SloPoint(self.level, self.tok_s_per_gpu or 0.0, self.metrics, self.success_rate)

    def fact(self, name: str) -> str:
        if name == "spec":
            return self.spec or NONE
        return str(getattr(self, name) or "—")


@dataclass(frozen=True, slots=True)
class Facts:
    """What both sides must share besides the model and scenario; "any" leaves it free."""

    precision: str = ANY
    spec: str = ANY  # a method ("mtp"), "none" or "any"
    engine: str = ANY
    serving: str = ANY

    def describe(self) -> str:
        return (
            f"precision {self.precision}, speculative decoding {self.spec}, "
            f"engine {self.engine}, serving {self.serving}"
        )


def matches(point: Measured, facts: Facts) -> bool:
    """Whether a point's configuration has the asked facts (names compared case-blind)."""

    def same(asked: str, value: str) -> bool:
        return asked.lower() == ANY or asked.lower() == value.lower()

    spec = facts.spec.lower()
    spec_ok = spec == ANY or (point.spec == "" if spec == NONE else point.spec.lower() == spec)
    return (
        spec_ok
        and same(facts.precision, point.precision)
        and same(facts.engine, point.engine)
        and same(facts.serving, point.serving)
    )


@dataclass(frozen=True, slots=True)
class Side:
    """One accelerator's answer, or (point None) why it has none."""

    sku: str
    point: Measured | None
    tok_s_per_gpu: float | None = None
    usd_per_mtok: float | None = None
    reading: Literal["measured", "interpolated"] | None = None
    upper: Measured | None = None  # the measured level above an interpolated reading
    reason: str = ""
    nearest: Measured | None = None
    failing: tuple[str, ...] = ()
    considered: int = 0  # the side's points that match the asked facts
    # Every run of the answer's configuration measured at its level, the answer's first:
    # repeated runs, whose spread the ratio's interval takes in.
    level_runs: tuple[Measured, ...] = ()

    @property
    def repeats(self) -> int:
        return max(len(self.level_runs), 1)


@dataclass(frozen=True, slots=True)
class RatioInterval:
    """The ratio A over B with its 95% interval (workers/significance.py's bootstrap over
    repeated runs and request records), of the sides' mean at the answer's levels."""

    tok_ratio: float
    tok_low: float
    tok_high: float
    usd_low: float | None
    usd_high: float | None
    runs_a: int
    runs_b: int
    requests_a: int
    requests_b: int
    # B against A as the significance module states each metric; the throughput's first.
    differences: tuple[significance.Difference, ...] = ()


@dataclass(frozen=True, slots=True)
class Answer:
    a: Side
    b: Side
    slo: Slo
    facts: Facts
    differs: tuple[str, ...]  # "engine: sglang / vllm"
    tok_ratio: float | None  # A's tok/s/GPU over B's
    usd_ratio: float | None  # A's $/Mtok over B's
    uncertainty: str
    rule: str
    interval: RatioInterval | None = None


def rule_text(slo: Slo, *, interpolate: bool, max_gap: float) -> str:
    """The rule, in the words every page and the API state it."""
    reading = (
        "interpolated only between adjacent measured levels of one configuration no more than "
        f"{max_gap:g}× apart in concurrency, and labelled"
        if interpolate
        else "no interpolation"
    )
    return (
        "each side's best measured point meeting every bound of the SLO "
        f"({slo.describe()}) among configurations matching the asked facts; {reading}"
    )


def by_accelerator(point: Measured) -> str:
    """A side is an accelerator (the default question): its name, case-blind."""
    return point.accelerator.upper()


def by_deployment(point: Measured) -> str:
    """A side is one deployment (/compare/'s columns): "#<id>"."""
    return f"#{point.deployment_id}"


def best_side(
    points: Sequence[Measured],
    sku: str,
    slo: Slo,
    *,
    interpolate: bool = False,
    max_gap: float = DEFAULT_MAX_GAP,
    side_of: Callable[[Measured], str] = by_accelerator,
) -> Side:
    """The side's best measured point meeting `slo` (ties: the lighter load, then the
    lower run id, so the answer does not depend on the order points were read)."""
    own = [p for p in points if side_of(p) == sku.upper() and p.tok_s_per_gpu]
    meeting = [p for p in own if verdict(p.slo_point(), slo).meets]
    if not meeting:
        return _no_point(own, sku, slo)
    best = max(meeting, key=lambda p: (p.tok_s_per_gpu, -(p.concurrency or 0), -p.run_id))
    side = Side(
        sku=sku,
        point=best,
        tok_s_per_gpu=best.tok_s_per_gpu,
        usd_per_mtok=best.usd_per_mtok,
        reading="measured",
        reason=f"measured point {best.level} of run {best.run_id} meets {slo.describe()}",
        considered=len(own),
        level_runs=(
            best,
            *(
                p
                for p in own
                if p is not best
                and p.deployment_id == best.deployment_id
                and (p.concurrency, p.level) == (best.concurrency, best.level)
            ),
        ),
    )
    if interpolate:
        side = _interpolated(own, side, slo, max_gap)
    return side


def _interpolated(own: Sequence[Measured], side: Side, slo: Slo, max_gap: float) -> Side:
    """A reading between a level that meets and the next one of the same run that misses,
    when it beats the measured answer and the levels are close enough to read between."""
    by_run: dict[int, list[Measured]] = {}
    for point in own:
        if point.concurrency:
            by_run.setdefault(point.run_id, []).append(point)
    for levels in by_run.values():
        levels.sort(key=lambda p: p.concurrency or 0)
        for lower, upper in zip(levels, levels[1:], strict=False):
            if (upper.concurrency or 0) > max_gap * (lower.concurrency or 0):
                continue  # refused: nothing was measured across so wide a gap
            result = best_throughput_at_slo([lower.slo_point(), upper.slo_point()], slo)
            if result.provenance != "interpolated" or result.lower is None:
                continue
            if (result.tok_per_s_per_gpu or 0.0) <= (side.tok_s_per_gpu or 0.0):
                continue
            tok = result.tok_per_s_per_gpu
            side = replace(
                side,
                point=lower,
                tok_s_per_gpu=tok,
                usd_per_mtok=usd_per_mtok(lower.usd_per_gpu_hour, tok)
                if lower.usd_per_gpu_hour and tok
                else None,
                reading="interpolated",
                upper=upper,
                reason=f"interpolated (labelled): run {lower.run_id}, {result.reason}",
            )
    return side


def _no_point(own: Sequence[Measured], sku: str, slo: Slo) -> Side:
    if not own:
        return Side(sku=sku, point=None, reason=f"no {sku} point matches the asked facts")
    miss = explain_miss([p.slo_point() for p in own], slo)
    nearest = next((p for p in own if miss.nearest is not None and _same(p, miss.nearest)), None)
    return Side(
        sku=sku,
        point=None,
        reason=f"no {sku} point meets {slo.describe()}"
        + (f"; nearest: run {nearest.run_id} {nearest.level}" if nearest else "")
        + (f" ({'; '.join(miss.failing)})" if miss.failing else "")
        + (f"; {'; '.join(miss.unstated)}" if miss.unstated else ""),
        nearest=nearest,
        failing=miss.failing or miss.unstated,
        considered=len(own),
    )


def _same(point: Measured, slo_point: SloPoint) -> bool:
    return (
        point.level == slo_point.label
        and point.tok_s_per_gpu == slo_point.tok_per_s_per_gpu
        and point.metrics == slo_point.metrics
    )


def differences(a: Measured | None, b: Measured | None) -> tuple[str, ...]:
    if a is None or b is None:
        return ()
    return tuple(
        f"{label}: {a.fact(name)} / {b.fact(name)}"
        for name, label in DIFFERING_FACTS
        if a.fact(name) != b.fact(name)
    )


def answer(
    points: Sequence[Measured],
    *,
    a: str,
    b: str,
    facts: Facts,
    slo: Slo,
    interpolate: bool = False,
    max_gap: float = DEFAULT_MAX_GAP,
    side_of: Callable[[Measured], str] = by_accelerator,
) -> Answer:
    """The one comparison: A's and B's answers at `slo` among points matching `facts`.
    The uncertainty is "single measurement" until `with_interval` reads the records."""
    matching = [p for p in points if matches(p, facts)]
    side_a, side_b = (
        best_side(matching, sku, slo, interpolate=interpolate, max_gap=max_gap, side_of=side_of)
        for sku in (a, b)
    )
    tok_a, tok_b = side_a.tok_s_per_gpu, side_b.tok_s_per_gpu
    usd_a, usd_b = side_a.usd_per_mtok, side_b.usd_per_mtok
    return Answer(
        a=side_a,
        b=side_b,
        slo=slo,
        facts=facts,
        differs=differences(side_a.point, side_b.point),
        tok_ratio=tok_a / tok_b if tok_a and tok_b else None,
        usd_ratio=usd_a / usd_b if usd_a and usd_b else None,
        uncertainty=SINGLE,
        rule=rule_text(slo, interpolate=interpolate, max_gap=max_gap),
    )


SINGLE = "single measurement"


def with_interval(
    result: Answer,
    records: Mapping[int, significance.Sample],
    *,
    basis: str,
    metrics: Sequence[str] = (),
) -> Answer:
    """`result` with the ratio's interval when either side has repeated runs at its level
    or request records (`records`, by point id): workers/significance.py's bootstrap over
    the runs, and the requests within each, of each side's mean at its level. Else, and for
    an interpolated reading, the ratio stays a single measurement.

    `metrics` (latency and interactivity, as the significance module names them) are
    stated too when every run on both sides has records."""
    a, b = result.a, result.b
    if a.point is None or b.point is None or "interpolated" in (a.reading, b.reading):
        return result
    runs_a, runs_b = (
        [records.get(p.point_id, p.tok_s_per_gpu or 0.0) for p in side.level_runs]
        for side in (a, b)
    )
    recorded = [r for r in (*runs_a, *runs_b) if isinstance(r, significance.Sample)]
    if len(runs_a) == len(runs_b) == 1 and not recorded:
        return result
    # B against A in the module's words, with the sides swapped: its change is A/B - 1.
    first = significance.compare(f"{basis}_tok_s_gpu", runs_b, runs_a)
    if first.change is None or first.low is None or first.high is None:
        why = "; ".join(first.notes) or "no interval"
        return replace(result, uncertainty=f"{SINGLE} ({why})")
    found = [first]
    if len(recorded) == len(runs_a) + len(runs_b):
        found += [significance.compare(m, runs_b, runs_a) for m in metrics]
    tok, low, high = 1 + first.change, 1 + first.low, 1 + first.high
    prices = a.point.usd_per_gpu_hour, b.point.usd_per_gpu_hour
    factor = prices[0] / prices[1] if prices[0] and prices[1] else None
    interval = RatioInterval(
        tok_ratio=tok,
        tok_low=low,
        tok_high=high,
        # $/Mtok A/B = (price A / price B) / (tok/s A / tok/s B): the bounds swap.
        usd_low=factor / high if factor and high > 0 else None,
        usd_high=factor / low if factor and low > 0 else None,
        runs_a=first.runs_b,
        runs_b=first.runs_a,
        requests_a=first.requests_b,
        requests_b=first.requests_a,
        differences=tuple(found),
    )
    return replace(result, interval=interval, uncertainty=interval_text(interval))


def interval_text(interval: RatioInterval) -> str:
    """'mean over 3 and 1 run(s) at these levels: 1.12× [0.95×, 1.30×] the tok/s/GPU, ...'."""
    sources = f"{interval.runs_a} and {interval.runs_b} run(s) at these levels"
    if interval.requests_a or interval.requests_b:
        sources += f", {interval.requests_a} and {interval.requests_b} request records"
    text = (
        f"mean over {sources}: {interval.tok_ratio:.2f}× "
        f"[{interval.tok_low:.2f}×, {interval.tok_high:.2f}×] the tok/s/GPU"
    )
    if interval.usd_low is not None and interval.usd_high is not None:
        text += f", [{interval.usd_low:.2f}×, {interval.usd_high:.2f}×] the $/Mtok"
    return text + " (95% bootstrap interval)"


# --- the swing: the answer against the interactivity floor --------------------------------


@dataclass(frozen=True, slots=True)
class SwingRow:
    floor: float
    a: Side
    b: Side
    tok_ratio: float | None
    usd_ratio: float | None


@dataclass(frozen=True, slots=True)
class Swing:
    rows: tuple[SwingRow, ...]
    crossover: str  # "MI355X is cheaper below 45 tok/s/user, B200 above", or why none


def with_floor(slo: Slo, floor: float) -> Slo:
    """`slo` with its interactivity floor set to `floor` (other bounds kept)."""
    bounds = tuple(b for b in slo.bounds if b.metric != Metric.INTERACTIVITY)
    old = next((b for b in slo.bounds if b.metric == Metric.INTERACTIVITY), None)
    percentile = old.percentile if old else "p50"
    floor_bound = SloBound(Metric.INTERACTIVITY, percentile, floor)
    return Slo((floor_bound, *bounds), slo.min_success_rate)


def swing(
    points: Sequence[Measured],
    *,
    a: str,
    b: str,
    facts: Facts,
    slo: Slo,
    limit: int = 40,
    side_of: Callable[[Measured], str] = by_accelerator,
) -> Swing:
    """The measured answer at each interactivity floor where it can change (each matching
    point's own interactivity p50), with the floor at which the cheaper side changes named.
    Interactivity floors only; the other bounds of `slo` hold throughout."""
    matching = [p for p in points if matches(p, facts)]
    floors = sorted({round(p.interactivity_p50, 1) for p in matching if p.interactivity_p50})
    if len(floors) > limit:  # evenly thinned, keeping both ends
        step = (len(floors) - 1) / (limit - 1)
        floors = sorted({floors[round(i * step)] for i in range(limit)})
    rows = []
    for floor in floors:
        result = answer(points, a=a, b=b, facts=facts, slo=with_floor(slo, floor), side_of=side_of)
        rows.append(SwingRow(floor, result.a, result.b, result.tok_ratio, result.usd_ratio))
    return Swing(tuple(rows), _crossover(rows, a, b))


def _crossover(rows: Sequence[SwingRow], a: str, b: str) -> str:
    """Where the cheaper side (lower $/Mtok; by tok/s/GPU when unpriced) changes."""
    leaders: list[tuple[float, str]] = []
    for row in rows:
        ratio = row.usd_ratio if row.usd_ratio is not None else _inverse(row.tok_ratio)
        if ratio is None or ratio == 1:
            continue
        leaders.append((row.floor, a if ratio < 1 else b))
    if not leaders:
        return "no floor where both sides have a measured point meeting the SLO"
    changes = [
        (prev, cur) for prev, cur in zip(leaders, leaders[1:], strict=False) if prev[1] != cur[1]
    ]
    if not changes:
        low, high = leaders[0][0], leaders[-1][0]
        return f"{leaders[0][1]} is cheaper at every floor measured ({low:g}-{high:g} tok/s/user)"
    parts = [
        f"{prev[1]} is cheaper up to {prev[0]:g} tok/s/user, {cur[1]} from {cur[0]:g}"
        for prev, cur in changes
    ]
    return "; ".join(parts)


def _inverse(value: float | None) -> float | None:
    return 1 / value if value else None
