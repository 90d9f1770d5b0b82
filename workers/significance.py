"""Is B faster than A, or is the difference run-to-run noise? Bootstrap intervals on
performance figures from per-request records.

Pure numpy, no Django: the CLI's CI gate (`workers/loadgen/gate.py`) and the server's
/compare/ page both call it, so a pull request and the board say the same thing about the
same runs. The method is written up in docs/methodology.md ("Significance on performance").

Why a bootstrap of our own rather than `scipy.stats.bootstrap`: scipy is not a worker
dependency (GPU hosts install numpy only), and it has no block or hierarchical resampling,
which is what closed-loop runs and repeated runs need:

- Requests of a closed-loop run are not independent: a slow request holds a concurrency
  slot and delays the next one. Resampling whole blocks of time (requests grouped by
  send time) keeps that dependence inside each block. Open-loop arrivals are independent of
  the server, so their requests are resampled one by one.
- Repeated runs of the same configuration differ by more than their requests do (a warm
  cache, another tenant, clocks): with two or more runs on a side, each replicate first
  resamples runs, then requests (or blocks) within each chosen run, and averages the runs.

A comparison is the ratio B/A of the two sides' replicates (each side resampled on its
own: the runs are not paired), read as a percentage change with a 95% percentile interval.
When the interval holds 0 the verdict is "within noise".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from workers import figures

CONFIDENCE = 0.95
REPLICATES = 1000
SEED = 20261201  # fixed: the same runs give the same interval on every page and in CI
# Closed-loop blocks: enough blocks that resampling them varies, enough requests in each
# that a block spans several rounds of the concurrency slots (the dependence to keep).
MIN_BLOCKS = 10
MAX_BLOCKS = 50

Better = Literal["higher", "lower"]


@dataclass(frozen=True)
class Metric:
    name: str  # a stable key: CLI flags, JSON
    label: str  # how a sentence names it
    better: Better
    unit: str


# The figures a comparison states, as the registry (workers/figures.py) names them.
METRICS: dict[str, Metric] = {
    f.name: Metric(f.name, f.label, f.better, f.unit)
    for f in (figures.FIGURES[key] for key in figures.COMPARED)
}


@dataclass(frozen=True)
class Sample:
    """One load level of one run, as its measured (non-warm-up) request records say.

    Arrays are per request; latencies are NaN where a request has none (a failure, or a
    one-token answer for TPOT). `window_s` is the point's measurement window (DESIGN.md:
    max(t_end) - min(t_send)); throughput counts succeeded requests' output tokens over it.
    """

    send_ms: np.ndarray
    n_out: np.ndarray
    n_in: np.ndarray
    ok: np.ndarray
    ttft_ms: np.ndarray
    tpot_ms: np.ndarray
    e2el_ms: np.ndarray
    window_s: float
    gpus: int
    closed_loop: bool

    def __post_init__(self) -> None:
        if self.window_s <= 0 or self.gpus < 1:
            raise ValueError("a sample needs a positive window and at least one GPU")

    @property
    def size(self) -> int:
        return int(self.send_ms.size)


def sample_from_records(
    records: Iterable[Mapping[str, Any]],
    *,
    gpus: int,
    closed_loop: bool,
    window_s: float | None = None,
) -> Sample | None:
    """A sample from record dicts (the document's `RequestRecord` fields, or the server's
    stored rows). None when there is nothing to resample: no records, or no window."""
    rows = [r for r in records if not r.get("warmup")]
    if not rows:
        return None

    def column(name: str) -> np.ndarray:
        return np.array(
            [np.nan if r.get(name) is None else float(r[name]) for r in rows], dtype=float
        )

    send = column("t_send_ms")
    e2el = column("e2el_ms")
    ok = np.array([r.get("status", "ok") == "ok" for r in rows], dtype=bool)
    n_out = np.nan_to_num(column("n_out"), nan=0.0)
    n_in = np.nan_to_num(column("n_in"), nan=0.0)
    if window_s is None:
        ends = send + np.nan_to_num(e2el, nan=0.0)
        window_s = float((np.nanmax(ends) - np.nanmin(send)) / 1000.0)
    if not window_s or window_s <= 0 or not math.isfinite(window_s):
        return None
    # Failures keep their send time (they took a slot) but no latency and no tokens.
    return Sample(
        send_ms=np.nan_to_num(send, nan=0.0),
        n_out=np.where(ok, n_out, 0.0),
        n_in=np.where(ok, n_in, 0.0),
        ok=ok,
        ttft_ms=np.where(ok, column("ttft_ms"), np.nan),
        tpot_ms=np.where(ok, column("tpot_ms"), np.nan),
        e2el_ms=np.where(ok, e2el, np.nan),
        window_s=window_s,
        gpus=gpus,
        closed_loop=closed_loop,
    )


def _blocks(sample: Sample) -> tuple[np.ndarray, np.ndarray]:
    """Each request's block (time blocks for closed loop, one request a block for open
    loop) and the seconds each block spans: from its first send to the next block's (the
    last to the window's end), so a slow stretch weighs what it lasted."""
    n = sample.size
    order = np.argsort(sample.send_ms, kind="stable")
    count = (
        min(n, int(min(MAX_BLOCKS, max(MIN_BLOCKS, math.isqrt(n))))) if sample.closed_loop else n
    )
    bucket = (np.arange(n) * count) // n  # by send order: equal numbers of requests
    block_of = np.empty(n, dtype=np.int64)
    block_of[order] = bucket
    _, first = np.unique(bucket, return_index=True)
    starts = sample.send_ms[order][first] / 1000.0
    ends = np.append(starts[1:], starts[0] + sample.window_s)
    return block_of, np.maximum(ends - starts, 0.0)


# A bootstrap of a tail percentile needs requests beyond it in every replicate: with fewer
# than this many past the percentile, resampling cannot move it and the interval would lie.
MIN_TAIL_REQUESTS = 5


def _too_few(metric: str, requests: int) -> str | None:
    """Why this metric gets no interval from this few requests; None when it can."""
    if metric.endswith("_tok_s_gpu"):
        return None
    q = float(metric.removesuffix("_ms").rsplit("_p", 1)[1])
    tail = 1 - max(q, 100 - q) / 100
    need = math.ceil(MIN_TAIL_REQUESTS / tail) if tail > 0 else requests + 1
    if requests < need:
        return f"p{q:g} needs at least {need} requests a run for an interval"
    return None


def _percentile(values: np.ndarray, q: float) -> float:
    finite = values[np.isfinite(values)]
    return float(np.percentile(finite, q)) if finite.size else math.nan


def _values(metric: str, sample: Sample) -> tuple[np.ndarray, float]:
    """Per-request values of a percentile metric, and the percentile."""
    slot = figures.by_name(metric).slot
    assert slot is not None, metric
    name, percentile = slot
    q = float(percentile.removeprefix("p"))
    if name == "interactivity":  # per request: 1 / TPOT, never 1000 / a percentile of TPOT
        with np.errstate(divide="ignore"):
            return np.where(sample.tpot_ms > 0, 1000.0 / sample.tpot_ms, np.nan), q
    values = {"ttft": sample.ttft_ms, "tpot": sample.tpot_ms, "e2el": sample.e2el_ms}[name]
    return values, q


def _tokens(metric: str, sample: Sample) -> np.ndarray:
    kind = metric.removesuffix("_tok_s_gpu")
    if kind == "output":
        return sample.n_out
    return sample.n_in if kind == "input" else sample.n_out + sample.n_in


def estimate(metric: str, sample: Sample) -> float:
    """The figure itself, from every record (what the point's own aggregate says)."""
    if metric.endswith("_tok_s_gpu"):
        return float(_tokens(metric, sample).sum()) / sample.window_s / sample.gpus
    values, q = _values(metric, sample)
    return _percentile(values, q)


def _weighted(
    metric: str, sample: Sample, block_of: np.ndarray, spans: np.ndarray, counts: np.ndarray
) -> np.ndarray:
    """The metric for each row of `counts` (how often each block was drawn): the same
    number as concatenating the drawn blocks' requests, without building them."""
    blocks = counts.shape[1]
    if metric.endswith("_tok_s_gpu"):
        per_block = np.bincount(block_of, weights=_tokens(metric, sample), minlength=blocks)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (counts @ per_block) / (counts @ spans) / sample.gpus
    values, q = _values(metric, sample)
    finite = np.isfinite(values)
    order = np.argsort(values[finite], kind="stable")
    ranked = values[finite][order]
    if ranked.size == 0:
        return np.full(counts.shape[0], np.nan)
    weights = counts[:, block_of[finite][order]]
    cumulative = np.cumsum(weights, axis=1)
    total = cumulative[:, -1]
    # numpy's linear percentile on the repeated values: position h = (N - 1) q, between the
    # elements of rank floor(h) and floor(h) + 1 (0-based), found on the cumulative weights.
    h = (total - 1) * q / 100.0
    low = np.floor(h)
    at_low = (cumulative <= low[:, None]).sum(axis=1)
    at_high = (cumulative <= np.minimum(low + 1, total - 1)[:, None]).sum(axis=1)
    at_low = np.minimum(at_low, ranked.size - 1)
    at_high = np.minimum(at_high, ranked.size - 1)
    result = ranked[at_low] + (h - low) * (ranked[at_high] - ranked[at_low])
    return np.where(total > 0, result, np.nan)


# Cells per chunk of replicates (replicates x blocks, or x requests): bounds the memory.
CHUNK_CELLS = 2_000_000


# A percentile's bootstrap costs replicates x requests. Past this many requests a point's
# latency percentiles are resampled on every k-th request in send order: the interval comes
# out wider than all requests would give (never narrower), and a page stays fast.
MAX_PERCENTILE_REQUESTS = 10_000


def _thinned(sample: Sample) -> Sample:
    step = math.ceil(sample.size / MAX_PERCENTILE_REQUESTS)
    keep = np.argsort(sample.send_ms, kind="stable")[::step]
    arrays = {
        name: getattr(sample, name)[keep]
        for name in ("send_ms", "n_out", "n_in", "ok", "ttft_ms", "tpot_ms", "e2el_ms")
    }
    return Sample(
        **arrays, window_s=sample.window_s, gpus=sample.gpus, closed_loop=sample.closed_loop
    )


def _run_replicates(metric: str, sample: Sample, rng: np.random.Generator, reps: int) -> np.ndarray:
    if not metric.endswith("_tok_s_gpu") and sample.size > MAX_PERCENTILE_REQUESTS:
        sample = _thinned(sample)
    block_of, spans = _blocks(sample)
    blocks = spans.size
    width = blocks if metric.endswith("_tok_s_gpu") else max(blocks, sample.size)
    chunk = max(1, CHUNK_CELLS // width)
    out = np.empty(reps)
    for start in range(0, reps, chunk):
        rows = min(chunk, reps - start)
        picks = rng.integers(0, blocks, (rows, blocks))
        flat = (np.arange(rows)[:, None] * blocks + picks).ravel()
        counts = np.bincount(flat, minlength=rows * blocks).reshape(rows, blocks)
        out[start : start + rows] = _weighted(metric, sample, block_of, spans, counts)
    return out


# A run may come as its one figure alone (an imported or published throughput with no
# request records): it takes part in the resampling of runs, with no noise within it.
Run = Sample | float


def _figure(metric: str, run: Run) -> float:
    return float(run) if isinstance(run, float | int) else estimate(metric, run)


def _replicates(
    metric: str, runs: Sequence[Run], rng: np.random.Generator, reps: int
) -> np.ndarray:
    """`reps` bootstrap values of the side's figure: the mean over resampled runs of a
    resample within each (a run drawn twice takes two different within-run draws)."""
    within = [
        np.full(reps, float(s))
        if isinstance(s, float | int)
        else _run_replicates(metric, s, rng, reps)
        for s in runs
    ]
    if len(runs) == 1:
        return within[0]
    chosen = rng.integers(0, len(runs), (reps, len(runs)))
    draws = np.stack(within)  # runs x reps
    columns = np.stack([rng.permutation(reps) for _ in range(len(runs))], axis=1)
    return draws[chosen, columns].mean(axis=1)


def side_replicates(
    metric: str, runs: Sequence[Run], *, rng: np.random.Generator, replicates: int = REPLICATES
) -> np.ndarray:
    """`replicates` bootstrap values of one side's figure, resampled as `compare` resamples
    it (runs, then requests or blocks within each drawn run; a run without records at its
    figure): for a statistic other than the ratio's interval (apps/costs/odds.py)."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; one of {', '.join(METRICS)}")
    if not runs:
        raise ValueError("a side needs at least one sample")
    return _replicates(metric, runs, rng, replicates)


@dataclass(frozen=True)
class Difference:
    """B against A on one metric: B/A - 1 with its interval, and what that means."""

    metric: Metric
    a: float
    b: float
    change: float | None  # B/A - 1; None when either side has no figure
    low: float | None
    high: float | None
    runs_a: int
    runs_b: int
    requests_a: int
    requests_b: int
    confidence: float = CONFIDENCE
    notes: tuple[str, ...] = field(default=())

    @property
    def significant(self) -> bool:
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)

    @property
    def worse(self) -> bool:
        """B is significantly worse than A (lower throughput, higher latency)."""
        if not self.significant or self.change is None:
            return False
        return self.change < 0 if self.metric.better == "higher" else self.change > 0

    @property
    def verdict(self) -> Literal["better", "worse", "within noise", "unknown"]:
        if self.change is None or self.low is None:
            return "unknown"
        if not self.significant:
            return "within noise"
        return "worse" if self.worse else "better"

    def sentence(self, a_name: str = "A", b_name: str = "B") -> str:
        """'B's output tok/s/GPU is 12% higher [8%, 16%]', or '... within noise ...'."""
        if self.change is None:
            return f"{b_name}'s {self.metric.label}: no figure to compare"
        if self.low is None or self.high is None:
            why = "; ".join(self.notes) or "no interval"
            return (
                f"{b_name}'s {self.metric.label} is {_pct(self.change)} against {a_name}'s, "
                f"with no interval ({why})"
            )
        if not self.significant:
            return (
                f"{b_name}'s {self.metric.label} is within noise of {a_name}'s "
                f"({_pct(self.change)} [{_pct(self.low)}, {_pct(self.high)}])"
            )
        # The interval in the sentence's own direction: "12% lower [8%, 16%]".
        word = "higher" if self.change > 0 else "lower"
        low, high = sorted((abs(self.low), abs(self.high)))
        return (
            f"{b_name}'s {self.metric.label} is {_mag(self.change)} {word} "
            f"[{_mag(low)}, {_mag(high)}]"
        )


def _pct(x: float) -> str:
    return f"{x:+.0%}" if abs(x) >= 0.01 else f"{x:+.1%}"


def _mag(x: float) -> str:
    return f"{abs(x):.0%}" if abs(x) >= 0.01 else f"{abs(x):.1%}"


def compare(
    metric: str,
    a: Sequence[Run],
    b: Sequence[Run],
    *,
    replicates: int = REPLICATES,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> Difference:
    """B against A on `metric`; each side is one or more runs of one configuration, each
    run its request records (a `Sample`) or, for throughput only, its one figure."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; one of {', '.join(METRICS)}")
    if not a or not b:
        raise ValueError("each side needs at least one sample")
    figures = [s for s in (*a, *b) if not isinstance(s, Sample)]
    if figures and not metric.endswith("_tok_s_gpu"):
        raise ValueError("a run without request records has a throughput figure only")
    spec = METRICS[metric]
    samples = [s for s in (*a, *b) if isinstance(s, Sample)]
    thin = _too_few(metric, min(s.size for s in samples)) if samples else None
    value_a = float(np.mean([_figure(metric, s) for s in a]))
    value_b = float(np.mean([_figure(metric, s) for s in b]))
    sizes = (
        sum(s.size for s in a if isinstance(s, Sample)),
        sum(s.size for s in b if isinstance(s, Sample)),
    )
    if not (math.isfinite(value_a) and math.isfinite(value_b)) or value_a == 0:
        return Difference(spec, value_a, value_b, None, None, None, len(a), len(b), *sizes)
    if not samples and len(a) == len(b) == 1:
        thin = "single measurement: one figure a side, nothing to resample"
    if thin:
        change = value_b / value_a - 1.0
        return Difference(
            spec, value_a, value_b, change, None, None, len(a), len(b), *sizes, confidence, (thin,)
        )
    rng = np.random.default_rng(seed)
    rep_a = _replicates(metric, a, rng, replicates)
    rep_b = _replicates(metric, b, rng, replicates)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = rep_b / rep_a - 1.0
    ratios = ratios[np.isfinite(ratios)]
    notes = []
    if len(a) == 1 and len(b) == 1:
        notes.append("one run a side: the interval covers request-to-request noise only")
    if figures:
        notes.append(
            f"{len(figures)} run(s) without request records: each taken at its figure, "
            "with no noise within it"
        )
    if ratios.size < replicates // 2:
        return Difference(
            spec,
            value_a,
            value_b,
            value_b / value_a - 1,
            None,
            None,
            len(a),
            len(b),
            *sizes,
            confidence,
            ("too few requests with this figure",),
        )
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return Difference(
        spec,
        value_a,
        value_b,
        value_b / value_a - 1.0,
        float(low),
        float(high),
        len(a),
        len(b),
        *sizes,
        confidence,
        tuple(notes),
    )
