"""The row audit: checks of one result document against itself (issues 51 and 53).

A document's figures and facts are tied to each other by arithmetic (output is part of total,
the first token comes before the last, a closed loop holds as many requests as arrive times
how long each stays) and by physics (workers/ceiling.py). A document that breaks one of those
ties says something that cannot be true of one measurement, whatever its source meant. Each
failure is a Reason with a stable code, the JSON paths of the figures involved and a sentence.

What happens to a failing document is the server's choice (apps/runs/services.py): a measured
or submitted one is refused, an imported or published one is stored flagged and not ranked.

Pure: no Django, no I/O beyond the shipped datasheets workers/ceiling.py reads. The tolerances
below are stated once and quoted by docs/methodology.md ("Row audit").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from workers import ceiling as physical
from workers.results import Distribution, Point, ResultDocument

# total_tok_s = input_tok_s + output_tok_s, up to this fraction of the total: sources round
# each figure on its own (InferenceX states per-GPU rates to a few significant digits).
THROUGHPUT_IDENTITY_TOLERANCE = 0.02
# The input:output token rate against the scenario's input:output lengths, within this factor
# either way: both lengths are drawn with the same spread, so their ratio holds on average; a
# factor this wide leaves room for early stops (shorter outputs) and tokenizer differences.
TOKEN_RATIO_FACTOR = 1.5
# E2EL >= TTFT + (N - 1) x TPOT holds per request (TPOT is (E2EL - TTFT) / (N - 1)); over a
# point's means it holds with N the mean output length, up to how lengths and TPOTs co-vary.
# Where the document counts its output tokens, N is their mean and the sum may exceed E2EL
# by this fraction; where N is the scenario's length (a source that counts none), outputs may
# stop short of it: the shipped InferenceX rows sit down to 0.887 of the sum at the means
# (their outputs average ~0.9 of the length), so 15% below.
DECODE_TIME_TOLERANCE = 0.05
DECODE_TIME_TOLERANCE_STATED_LENGTH = 0.15
# Interactivity's p50 is 1000 / TPOT's p50 (a decreasing map keeps the median), up to the
# interpolation between two middle requests: within this factor either way.
INTERACTIVITY_FACTOR = 1.25
# Little's law on a closed loop: concurrency = request rate x mean E2EL. A window that
# includes the ramp-up and drain, and requests still in flight at its end, pull the ratio
# below 1 (0.88 on the shipped InferenceX rows, docs/methodology.md); a ratio outside
# [1 / LITTLE_FACTOR, LITTLE_FACTOR] is no measurement of a loop of that size.
LITTLE_FACTOR = 2.0
# Tokens a window can produce: its completed requests and the ones in flight at its end, each
# at most its scenario's length (with the stated spread), and this much slack for rounding.
PRODUCIBLE_SLACK = 0.05
PERCENTILES = ("p50", "p90", "p95", "p99", "p999")

CODES: dict[str, str] = {
    "throughput_identity": "total tok/s is not output + input tok/s",
    "output_above_total": "output tok/s above total tok/s",
    "token_ratio": "input:output tok/s far from the scenario's input:output lengths",
    "percentile_order": "a latency's percentiles do not rise",
    "ttft_above_e2el": "time to first token above end-to-end latency",
    "e2el_below_decode": "end-to-end latency below TTFT + (N - 1) x TPOT",
    "interactivity_tpot": "interactivity is not 1000 / TPOT",
    "littles_law": "concurrency far from request rate x mean E2EL (Little's law)",
    "throughput_unreachable": "more tokens per second than the requests and window produce",
    "not_finite": "a figure is not a finite, non-negative number",
    "parallelism_above_gpus": "the parallelism needs more GPUs than the deployment has",
    "nodes_above_gpus": "more nodes than GPUs",
    "accuracy_empty": "an accuracy result scored on no items",
    "physical_ceiling": "above the accelerator's physical ceiling for the model",
    "document_invalid": "the stored document no longer validates",
}


@dataclass(frozen=True)
class Reason:
    code: str
    paths: tuple[str, ...]
    message: str

    def as_json(self) -> dict[str, Any]:
        return {"code": self.code, "paths": list(self.paths), "message": self.message}


def _g(value: float) -> str:
    return f"{value:,.6g}"


def audit(document: ResultDocument) -> list[Reason]:
    """Every check the document fails, facts first, then each point in order; empty: none."""
    reasons = list(_facts(document))
    for index, point in enumerate(document.points):
        reasons.extend(_point(document, index, point))
    for index, result in enumerate(document.accuracy):
        if result.n == 0:
            reasons.append(
                Reason(
                    "accuracy_empty",
                    (f"accuracy[{index}].n", f"accuracy[{index}].score"),
                    f"{result.task}: a score of {_g(result.score)} over n = 0 items scores nothing",
                )
            )
    return reasons


def _facts(document: ResultDocument) -> Iterator[Reason]:
    deployment = document.deployment
    gpus = deployment.gpus
    par = deployment.parallelism
    # Data parallelism inside attention (DP-attention) runs on the TP group's own GPUs.
    dp = 1 if par.dp_attention else (par.dp or 1)
    needed = (par.tp or 1) * (par.pp or 1) * dp
    if needed > gpus:
        named = [
            f"deployment.parallelism.{k}"
            for k, v in (("tp", par.tp), ("pp", par.pp), ("dp", None if par.dp_attention else dp))
            if v and v > 1
        ]
        shape = " × ".join(
            f"{k.upper()}{v}"
            for k, v in (("tp", par.tp), ("pp", par.pp), ("dp", dp))
            if v and v > 1
        )
        yield Reason(
            "parallelism_above_gpus",
            ("deployment.gpus", *named),
            f"{shape} needs {needed} GPUs; the deployment states {gpus}",
        )
    split = deployment.disaggregation
    if split is not None:
        for side, pool_gpus, pool in (
            ("prefill", split.prefill_gpus, split.prefill),
            ("decode", split.decode_gpus, split.decode),
        ):
            if pool is None or not pool.tp:
                continue
            workers = pool.workers or 1
            if pool.tp * workers > pool_gpus:
                yield Reason(
                    "parallelism_above_gpus",
                    (
                        f"deployment.disaggregation.{side}_gpus",
                        f"deployment.disaggregation.{side}.tp",
                    ),
                    f"the {side} pool's {workers} × TP{pool.tp} needs {pool.tp * workers} "
                    f"GPUs; the pool states {pool_gpus}",
                )
    if deployment.nodes > gpus:
        yield Reason(
            "nodes_above_gpus",
            ("deployment.nodes", "deployment.gpus"),
            f"{deployment.nodes} nodes for {gpus} GPUs: every node serves at least one GPU",
        )


def _dists(point: Point, where: str) -> Iterator[tuple[str, str, Distribution]]:
    for name in type(point.latency_ms).model_fields:
        dist = getattr(point.latency_ms, name)
        if dist is not None:
            yield f"{where}.latency_ms.{name}", name, dist
    if point.interactivity_tok_s_user is not None:
        yield f"{where}.interactivity_tok_s_user", "interactivity", point.interactivity_tok_s_user


def _numbers(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _numbers(child, f"{path}.{key}")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield path, value


def _point(document: ResultDocument, index: int, point: Point) -> Iterator[Reason]:
    where = f"points[{index}]"
    tput = point.throughput
    # Finite and non-negative: the schema refuses NaN, infinities and negatives as they
    # arrive; a stored document read back (or one built in code) is checked here too.
    figures = point.model_dump(
        mode="python", include={"throughput", "latency_ms", "interactivity_tok_s_user"}
    )
    bad = [p for p, v in _numbers(figures, where) if not (math.isfinite(v) and v >= 0)]
    if bad:
        yield Reason("not_finite", tuple(bad), f"not a finite, non-negative number: {bad[0]}")
        return
    out, inp, total = tput.output_tok_s, tput.input_tok_s, tput.total_tok_s
    t = f"{where}.throughput"
    if out is not None and total is not None and out > total * (1 + 1e-9):
        yield Reason(
            "output_above_total",
            (f"{t}.output_tok_s", f"{t}.total_tok_s"),
            f"output {_g(out)} tok/s is above the total {_g(total)} tok/s it is part of",
        )
    elif out is not None and inp is not None and total is not None:
        summed = out + inp
        if abs(total - summed) > THROUGHPUT_IDENTITY_TOLERANCE * max(total, summed):
            yield Reason(
                "throughput_identity",
                (f"{t}.total_tok_s", f"{t}.output_tok_s", f"{t}.input_tok_s"),
                f"total {_g(total)} tok/s is not output {_g(out)} + input {_g(inp)} = "
                f"{_g(summed)} tok/s (tolerance {THROUGHPUT_IDENTITY_TOLERANCE:.0%})",
            )
    yield from _token_ratio(document, where, point)
    yield from _latencies(document, where, point)
    yield from _littles_law(document, where, point)
    yield from _producible(document, where, point)
    yield from _ceiling(document, where, point)


def _token_ratio(document: ResultDocument, where: str, point: Point) -> Iterator[Reason]:
    scenario = document.scenario
    out, inp = point.throughput.output_tok_s, point.throughput.input_tok_s
    if scenario is None or scenario.sessions or scenario.trace or not out or not inp:
        return  # sessions and traces have no one input length
    expected = scenario.input_tokens / scenario.output_tokens
    stated = inp / out
    if not 1 / TOKEN_RATIO_FACTOR <= stated / expected <= TOKEN_RATIO_FACTOR:
        yield Reason(
            "token_ratio",
            (
                f"{where}.throughput.input_tok_s",
                f"{where}.throughput.output_tok_s",
                "scenario.input_tokens",
                "scenario.output_tokens",
            ),
            f"input:output tok/s is {stated:,.3g}, the scenario's lengths "
            f"{scenario.input_tokens}:{scenario.output_tokens} give {expected:,.3g} "
            f"(allowed within {TOKEN_RATIO_FACTOR:g}× either way)",
        )


def _latencies(document: ResultDocument, where: str, point: Point) -> Iterator[Reason]:
    for path, _, dist in _dists(point, where):
        stated = [(n, getattr(dist, n)) for n in PERCENTILES if getattr(dist, n) is not None]
        for (low_name, low), (high_name, high) in zip(stated, stated[1:], strict=False):
            if high < low * (1 - 1e-9):
                yield Reason(
                    "percentile_order",
                    (f"{path}.{low_name}", f"{path}.{high_name}"),
                    f"{high_name} {_g(high)} is below {low_name} {_g(low)}",
                )
    lat = point.latency_ms
    ttft, e2el, tpot = lat.ttft, lat.e2el, lat.tpot
    if ttft is not None and e2el is not None:
        for name in ("mean", *PERCENTILES):
            first, last = getattr(ttft, name), getattr(e2el, name)
            if first is not None and last is not None and first > last * (1 + 1e-9):
                yield Reason(
                    "ttft_above_e2el",
                    (f"{where}.latency_ms.ttft.{name}", f"{where}.latency_ms.e2el.{name}"),
                    f"TTFT {name} {_g(first)} ms is above E2EL {name} {_g(last)} ms: the first "
                    "token cannot come after the last",
                )
    yield from _decode_time(document, where, point)
    inter = point.interactivity_tok_s_user
    if inter is not None and tpot is not None and inter.p50 and tpot.p50:
        implied = 1000 / tpot.p50
        # The median of 1/TPOT and 1/(TPOT's median) differ by the interpolation between the
        # two middle requests: at most TPOT's own spread (max / min) where it is stated.
        factor = INTERACTIVITY_FACTOR
        if tpot.max and tpot.min:
            factor = max(factor, tpot.max / tpot.min)
        if not 1 / factor <= inter.p50 / implied <= factor:
            yield Reason(
                "interactivity_tpot",
                (f"{where}.interactivity_tok_s_user.p50", f"{where}.latency_ms.tpot.p50"),
                f"interactivity p50 {_g(inter.p50)} tok/s/user is not 1000 / TPOT p50 "
                f"{_g(tpot.p50)} ms = {_g(implied)} (allowed within {factor:,.3g}×)",
            )


def _decode_time(document: ResultDocument, where: str, point: Point) -> Iterator[Reason]:
    """E2EL >= TTFT + (N - 1) x TPOT. Where the distributions state their extremes (our
    load generator's do), they may cover different requests (TPOT only those that streamed
    more than one chunk): then only what holds across subsets is asked, that the slowest
    request ends no sooner than the request with the largest TPOT could, E2EL max >= TTFT
    min + (N - 1) x TPOT max, N the scenario's shortest length. Else at the mean (or p50)."""
    lat = point.latency_ms
    ttft, e2el, tpot = lat.ttft, lat.e2el, lat.tpot
    if ttft is None or e2el is None or tpot is None:
        return
    scenario = document.scenario
    extremes = e2el.max is not None and ttft.min is not None and tpot.max is not None
    if extremes and scenario is not None and not scenario.sessions and not scenario.trace:
        shortest = scenario.output_tokens * (1 - (scenario.length_spread or 0))
        pairs = [("max", "min", "max", shortest, DECODE_TIME_TOLERANCE)]
    elif extremes:
        return
    else:
        n = _output_length(document, point)
        counted = point.tokens is not None and bool(point.tokens.output)
        slack = DECODE_TIME_TOLERANCE if counted else DECODE_TIME_TOLERANCE_STATED_LENGTH
        pairs = [(name, name, name, n, slack) for name in ("mean", "p50") if n is not None]
    for e_name, t_name, s_name, n, slack in pairs:
        first, last, step = getattr(ttft, t_name), getattr(e2el, e_name), getattr(tpot, s_name)
        if first is None or last is None or step is None or n is None or n <= 1:
            continue
        floor = first + (n - 1) * step
        if last < floor * (1 - slack):
            yield Reason(
                "e2el_below_decode",
                (
                    f"{where}.latency_ms.e2el.{e_name}",
                    f"{where}.latency_ms.ttft.{t_name}",
                    f"{where}.latency_ms.tpot.{s_name}",
                ),
                f"E2EL {e_name} {_g(last)} ms is below TTFT {t_name} {_g(first)} + "
                f"({_g(n)} - 1) × TPOT {s_name} {_g(step)} = {_g(floor)} ms (allowed "
                f"{slack:.0%} below)",
            )
            return


def _output_length(document: ResultDocument, point: Point) -> float | None:
    """The mean output length of the point's requests: counted where the document counts
    them, else the scenario's length at the low end of its stated spread (None: unknown)."""
    tokens, requests = point.tokens, point.requests
    if tokens is not None and tokens.output and requests is not None and requests.succeeded:
        return tokens.output / requests.succeeded
    scenario = document.scenario
    if scenario is None or scenario.sessions or scenario.trace:
        return None
    return scenario.output_tokens * (1 - (scenario.length_spread or 0))


def _littles_law(document: ResultDocument, where: str, point: Point) -> Iterator[Reason]:
    found = littles_ratio(document, point)
    if found is None:
        return
    ratio, rate, rate_path = found
    e2el_mean = point.latency_ms.e2el.mean if point.latency_ms.e2el else 0.0
    if not 1 / LITTLE_FACTOR <= ratio <= LITTLE_FACTOR:
        yield Reason(
            "littles_law",
            (f"{where}.concurrency", f"{where}.{rate_path}", f"{where}.latency_ms.e2el.mean"),
            f"{_g(rate)} req/s × mean E2EL {_g(e2el_mean or 0)} ms keeps "
            f"{_g(ratio * (point.concurrency or 0))} requests in flight, {ratio:,.3g}× the "
            f"stated concurrency {point.concurrency} (allowed within {LITTLE_FACTOR:g}×)",
        )


def littles_ratio(document: ResultDocument, point: Point) -> tuple[float, float, str] | None:
    """(request rate × mean E2EL / concurrency, the rate, the path it was read from) of a
    closed-loop point; None where it cannot be derived. The rate is the stated requests/s,
    else output tok/s over the mean output length (_output_length): a source that states
    no request rate (InferenceX) still has one."""
    e2el = point.latency_ms.e2el
    if point.concurrency is None or point.request_rate is not None or e2el is None:
        return None  # an open loop's concurrency is an outcome, not a setting
    if not e2el.mean:
        return None
    rate, path = point.throughput.requests_per_s, "throughput.requests_per_s"
    if not rate:
        length = _output_length(document, point)
        if not length or not point.throughput.output_tok_s:
            return None
        rate, path = point.throughput.output_tok_s / length, "throughput.output_tok_s"
    return rate * e2el.mean / 1000 / point.concurrency, rate, path


def _producible(document: ResultDocument, where: str, point: Point) -> Iterator[Reason]:
    out, window = point.throughput.output_tok_s, point.window_s
    if not out or not window:
        return
    tokens, requests = point.tokens, point.requests
    if tokens is not None and tokens.output is not None:
        most, basis = float(tokens.output), f"{tokens.output:,} output tokens counted"
        paths: tuple[str, ...] = (f"{where}.tokens.output",)
    elif requests is not None and document.scenario and not document.scenario.sessions:
        scenario = document.scenario
        count = (requests.total or requests.succeeded) + (point.concurrency or 0)
        length = scenario.output_tokens * (1 + (scenario.length_spread or 0))
        most = count * length
        basis = f"{count:,} requests (finished and in flight) of at most {_g(length)} output tokens"
        paths = (f"{where}.requests", "scenario.output_tokens")
    else:
        return
    bound = most / window * (1 + PRODUCIBLE_SLACK)
    if out > bound:
        yield Reason(
            "throughput_unreachable",
            (f"{where}.throughput.output_tok_s", *paths, f"{where}.window_s"),
            f"output {_g(out)} tok/s over {_g(window)} s is {_g(out * window)} tokens; "
            f"{basis} make at most {_g(bound)} tok/s",
        )


def _ceiling(document: ResultDocument, where: str, point: Point) -> Iterator[Reason]:
    deployment = document.deployment
    gpus = deployment.gpus
    facts: dict[str, Any] = {
        "accelerator": deployment.accelerator,
        "model": document.model.name,
        "weights": deployment.quantization.weights,
        "activations": deployment.quantization.activations,
    }
    tput = point.throughput
    figures: Iterable[tuple[physical.Figure, str, float | None]] = (
        ("total", "total_tok_s", tput.total_tok_s),
        ("output", "output_tok_s", tput.output_tok_s),
    )
    for figure, field, value in figures:
        if value is None:
            continue
        extra: dict[str, Any] = {}
        if figure == "output":
            extra = {"gpus": gpus, **_batch_facts(document, point)}
        bound = physical.ceiling_for(**facts, figure=figure, **extra)
        if bound is not None and bound.refuses(value / gpus):
            yield Reason(
                "physical_ceiling",
                (f"{where}.throughput.{field}", "deployment.gpus", "deployment.accelerator"),
                f"{_g(value / gpus)} {figure} tok/s per GPU is above the physical ceiling: "
                f"{bound.sentence}",
            )
            return


def _batch_facts(document: ResultDocument, point: Point) -> dict[str, Any]:
    """What bounds the decode batch, as the memory ceiling reads it: the sequences in flight
    and their context, and tokens per step. With speculative decoding whose draft length is
    unstated, nothing (each step's tokens are unknown, so the memory bound says nothing)."""
    spec = document.deployment.speculative
    steps = 1.0
    if spec is not None:
        if not spec.draft_tokens:
            return {}
        steps = 1.0 + spec.draft_tokens
    scenario = document.scenario
    facts: dict[str, Any] = {"tokens_per_step": steps}
    if point.concurrency and point.request_rate is None:
        facts["concurrency"] = point.concurrency
    if scenario is not None and not scenario.sessions and not scenario.trace:
        facts["context_tokens"] = scenario.input_tokens + scenario.output_tokens
    return facts
