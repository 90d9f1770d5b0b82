"""The measured point's one owner: which figures a point has, which points count, what
throughput a point states, and a run's status from its request counts.

Pure, no Django: the load generator, the importers and the server read the same registry,
so a figure has one key, one label, one direction and one validity rule everywhere
(issue 41). Before, five tables spelt TTFT p99 five ways and three modules decided which
point counts, and drifted: /costs/ priced points the board called invalid.

- `FIGURES`: every figure a point is compared, sorted, charted or watched by.
- `PointView.invalid_reason()`: why a point may not describe its deployment (client-bound,
  prompts off their length, too few successes, simulated), or None.
- `throughput()`: tok/s of one kind, stated or, when the source did not say which tokens it
  counted, the range of both readings.
- `run_status()`: a run's status from its points' request counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, overload

Better = Literal["higher", "lower"]
Kind = Literal["input", "output", "total"]
KINDS: tuple[Kind, ...] = ("input", "output", "total")

# Per-request distributions a point stores (Point.latency_ms / Point.interactivity), their
# label and which way is better. workers/slo.py reads its labels and ceilings from here.
DISTRIBUTIONS: dict[str, tuple[str, Better]] = {
    "ttft": ("TTFT", "lower"),
    "tpot": ("TPOT", "lower"),
    "e2el": ("E2EL", "lower"),
    "interactivity": ("interactivity", "higher"),
}


@dataclass(frozen=True, slots=True)
class Figure:
    """One figure of a point.

    `column` is where it is stored on a Point (or, for a per-request statistic with no column
    of its own, the name it goes by in comparisons and the CI gate's flags); `slot` is the
    (distribution, percentile) it is read from; `per_gpu` divides the column by the GPUs.
    """

    key: str
    label: str
    unit: str
    better: Better
    log: bool
    column: str
    slot: tuple[str, str] | None = None
    per_gpu: bool = False

    @property
    def higher(self) -> bool:
        return self.better == "higher"

    @property
    def name(self) -> str:
        """The key a comparison (workers/significance.py, the CI gate) uses."""
        return f"{self.column}_gpu" if self.per_gpu else self.column

    @property
    def seconds_name(self) -> str:
        """The figure in seconds, as the answer's JSON names it ("ttft_p99_s")."""
        return f"{self.key}_s"

    @property
    def ceiling_param(self) -> str:
        """The query parameter of a ceiling on the figure in seconds ("ttft_p99_s_max"): the
        API's, /answer/'s and /compare/'s shorthand for a bound at the figure's percentile."""
        return f"{self.seconds_name}_max"

    @property
    def titled(self) -> str:
        """Label with unit, as a table heading or a choice says it: "TTFT p99 (ms)"."""
        return (
            f"{self.label} ({self.unit})"
            if self.unit and self.unit not in self.label
            else self.label
        )


FIGURES: dict[str, Figure] = {
    f.key: f
    for f in (
        Figure(
            "tput_per_gpu",
            "output tok/s/GPU",
            "tok/s",
            "higher",
            True,
            "output_tok_s",
            per_gpu=True,
        ),
        Figure(
            "input_tput_per_gpu",
            "input tok/s/GPU",
            "tok/s",
            "higher",
            True,
            "input_tok_s",
            per_gpu=True,
        ),
        Figure(
            "total_tput_per_gpu",
            "total tok/s/GPU",
            "tok/s",
            "higher",
            True,
            "total_tok_s",
            per_gpu=True,
        ),
        Figure("ttft_p50", "TTFT p50", "ms", "lower", True, "ttft_p50_ms", ("ttft", "p50")),
        Figure("ttft_p99", "TTFT p99", "ms", "lower", True, "ttft_p99_ms", ("ttft", "p99")),
        Figure("tpot_p50", "TPOT p50", "ms", "lower", True, "tpot_p50_ms", ("tpot", "p50")),
        Figure("tpot_p99", "TPOT p99", "ms", "lower", True, "tpot_p99_ms", ("tpot", "p99")),
        Figure("e2el_p50", "E2E latency p50", "ms", "lower", True, "e2el_p50_ms", ("e2el", "p50")),
        Figure("e2el_p99", "E2E latency p99", "ms", "lower", True, "e2el_p99_ms", ("e2el", "p99")),
        Figure(
            "interactivity_p50",
            "interactivity p50",
            "tok/s/user",
            "higher",
            True,
            "interactivity_p50",
            ("interactivity", "p50"),
        ),
        Figure("success_rate", "success rate", "", "higher", False, "success_rate"),
    )
}
# Which figures each reader takes, in the order it shows them.
# A comparison (workers/significance.py, the CI gate): throughput per GPU first.
COMPARED = (
    "tput_per_gpu",
    "input_tput_per_gpu",
    "total_tput_per_gpu",
    "ttft_p50",
    "ttft_p99",
    "tpot_p50",
    "tpot_p99",
    "e2el_p99",
    "interactivity_p50",
)
# A change-point series (apps/regressions): these keys are stored in ChangePoint.metric.
WATCHED = (
    "tput_per_gpu",
    "interactivity_p50",
    "ttft_p50",
    "ttft_p99",
    "tpot_p50",
    "tpot_p99",
    "success_rate",
)
# What /compare/ states with an interval beside throughput (apps/leaderboard/views/compare.py).
COMPARE_PAGE = ("interactivity_p50", "ttft_p99")
# Figures kept as Point columns of their own (apps/runs/models.py), read from their slot at
# ingestion: what the board's rows and the data dumps read without the distributions.
POINT_COLUMNS = ("ttft_p50", "ttft_p99", "tpot_p50", "e2el_p50", "e2el_p99", "interactivity_p50")
# The latency an answer states beside its throughput and the one its shorthand ceiling bounds
# (apps/costs/answer.py; the API's, /answer/'s and /compare/'s TTFT p99).
ANSWER_LATENCY = "ttft_p99"
# The board's latency cell ("TTFT p50 / p99 ms"), in the order it shows them: the board's
# rows, the run page's points and their downloads.
BOARD_LATENCY = ("ttft_p50", "ttft_p99")
# The run page's points download: its figure columns, in order (apps/leaderboard/views/run.py).
RUN_POINTS = ("ttft_p50", "ttft_p99", "tpot_p50", "e2el_p99", "interactivity_p50")
# The public points dump's figure columns, in order (apps/trust, docs/data-dumps.md).
DUMPED = ("ttft_p50", "ttft_p99", "tpot_p50", "e2el_p99")
# The throughput figure of each token kind.
THROUGHPUT = {
    "output": "tput_per_gpu",
    "input": "input_tput_per_gpu",
    "total": "total_tput_per_gpu",
}


def figure(key: str) -> Figure:
    """The figure of a key; a KeyError names the keys there are."""
    try:
        return FIGURES[key]
    except KeyError:
        raise KeyError(f"unknown figure {key!r}; one of {', '.join(FIGURES)}") from None


def by_name(name: str) -> Figure:
    """The figure a comparison calls `name` ("ttft_p99_ms", "output_tok_s_gpu")."""
    for f in FIGURES.values():
        if f.name == name:
            return f
    raise KeyError(f"unknown figure {name!r}")


# --- which points count -------------------------------------------------------------------

CLIENT_BOUND = "client-bound"
LENGTH_MISMATCH = "prompt length mismatch"
SUCCESS_BELOW_FLOOR = "success below the SLO's minimum"
SIMULATED = "simulated"


@dataclass(frozen=True, slots=True)
class PointView:
    """What decides whether a point describes its deployment under its scenario's label."""

    client_bound: bool | None = None
    prompt_length_mismatch_rate: float | None = None
    success_rate: float | None = None
    simulated: bool = False

    @classmethod
    def of(cls, row: Mapping[str, Any] | object, *, simulated: bool = False) -> PointView:
        """From a Point, a values() row or a document point (attributes or keys)."""

        def read(name: str) -> Any:
            if isinstance(row, Mapping):
                return row.get(name)
            return getattr(row, name, None)

        return cls(
            client_bound=read("client_bound"),
            prompt_length_mismatch_rate=read("prompt_length_mismatch_rate"),
            success_rate=read("success_rate"),
            simulated=simulated,
        )

    def invalid_reason(
        self, *, min_success_rate: float | None = None, exclude_simulated: bool = True
    ) -> str | None:
        """Why the point may not stand for its deployment, or None when it may.

        - client-bound: the load generator, not the server, was the limit;
        - prompt length mismatch: the server counted prompts off the scenario's length, so
          the scenario's label is not true of it;
        - success below the floor, when a floor is given (the board instead ranks such a
          point as missing its SLO, by the SLO rule, and names why);
        - simulated, where the reader excludes simulated runs (they never rank with measured).
        """
        if self.client_bound:
            return CLIENT_BOUND
        if (self.prompt_length_mismatch_rate or 0) > 0:
            return LENGTH_MISMATCH
        if (
            min_success_rate is not None
            and self.success_rate is not None
            and self.success_rate < min_success_rate
        ):
            return SUCCESS_BELOW_FLOOR
        if exclude_simulated and self.simulated:
            return SIMULATED
        return None


# --- throughput of a kind -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reading:
    """tok/s of one kind. `stated` False: the source did not say which tokens it counted, and
    `low`/`high` are its two readings (as output tokens, as total tokens); `value` is the
    lower, so a claim is never read up. All None when nothing can be read."""

    kind: Kind
    value: float | None
    stated: bool = True
    low: float | None = None
    high: float | None = None


@overload
def per_gpu(tok_s: float, gpus: int) -> float: ...
@overload
def per_gpu(tok_s: float | None, gpus: int) -> float | None: ...
def per_gpu(tok_s: float | None, gpus: int) -> float | None:
    """A deployment's tok/s per GPU: over ALL the GPUs it deployed (a disaggregated one's
    prefill and decode pools both), whatever the basis (output, input, total). The one
    per-GPU division every page and the answer use (issue 51): a source's per-pool rates
    (InferenceX's output per decode GPU) are converted to whole-deployment totals when
    imported and never read as per-GPU figures."""
    if tok_s is None:
        return None
    return tok_s / max(gpus, 1)


def throughput(
    kind: Kind,
    *,
    input_tok_s: float | None = None,
    output_tok_s: float | None = None,
    total_tok_s: float | None = None,
    unlabelled_tok_s: float | None = None,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
) -> Reading:
    """The one reading of a point's tok/s of `kind`: stated, or a figure of unstated kind read
    both ways through the scenario's shape (none when the shape is unknown)."""
    if kind not in KINDS:
        raise ValueError(f"unknown token kind {kind!r}; one of {', '.join(KINDS)}")
    stated = {"input": input_tok_s, "output": output_tok_s, "total": total_tok_s}[kind]
    if stated is not None or unlabelled_tok_s is None:
        return Reading(kind, stated)
    if not input_tokens or not output_tokens or input_tokens < 0 or output_tokens < 0:
        return Reading(kind, None, stated=False)
    low, high = sorted(unstated_readings(unlabelled_tok_s, kind, input_tokens, output_tokens))
    return Reading(kind, low, stated=False, low=low, high=high)


def unstated_readings(
    unlabelled_tok_s: float, kind: Kind, input_tokens: int, output_tokens: int
) -> tuple[float, float]:
    """A tok/s whose kind the source does not state, as `kind` tok/s under both readings:
    (read as output tokens, read as total tokens), through the scenario's shape (positive
    token counts)."""
    whole = input_tokens + output_tokens
    share = {"input": input_tokens / whole, "output": output_tokens / whole, "total": 1.0}[kind]
    return unlabelled_tok_s * share / (output_tokens / whole), unlabelled_tok_s * share


# --- a run's status -----------------------------------------------------------------------

RunStatus = Literal["succeeded", "partial", "failed"]


def run_status(
    requests: Iterable[Mapping[str, Any] | object | None],
    stated: RunStatus = "succeeded",
    *,
    stopped_early: bool = False,
) -> RunStatus:
    """A run's status from its points' request counts: none succeeded -> failed; some failed
    -> partial; none failed -> succeeded. When no point counts its failures (a source that
    counts successes only), the counts cannot say, and the stated status stands.

    A run that stopped before its planned end (cancelled, interrupted) measured only part of
    what it set out to: partial however its counts read, failed when none succeeded."""
    if stopped_early:
        stated = "partial"
    succeeded = failed = 0
    counted = False
    for counts in requests:
        if counts is None:
            continue
        ok = _count(counts, "succeeded")
        bad = _count(counts, "failed")
        if ok is None or bad is None:
            continue
        counted = True
        succeeded += ok
        failed += bad
    if not counted:
        return stated
    if succeeded == 0:
        return "failed"
    return "partial" if failed or stopped_early else "succeeded"


def _count(counts: Mapping[str, Any] | object, name: str) -> int | None:
    value = counts.get(name) if isinstance(counts, Mapping) else getattr(counts, name, None)
    return None if value is None else int(value)
