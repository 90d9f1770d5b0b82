"""Per-request timing records to one `Point`, exactly as docs/methodology.md defines them.

Pure functions, no I/O. Times are `perf_counter_ns` integers; the document speaks
milliseconds. The rules that peer tools get wrong, and that the tests pin:

- TTFT is taken at the first event that carries text; role-only and usage-only events are
  not text (the client never records them as text events).
- A chunk carrying k tokens contributes k token-weighted gaps of gap/k.
- Open-loop latency is also reported from the planned send time (no coordinated omission).
- Failures are counted by class and excluded from latency and throughput; an empty or short
  stream is a failure, never a success.
- The cache hit rate is None ("not reported") when the server did not report cached tokens.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from workers import slo as slo_rule
from workers.result_facts import Slo
from workers.results import (
    Distribution,
    Latencies,
    Point,
    RequestCounts,
    RequestRecord,
    RequestStatus,
    SpeculativeAcceptance,
    Throughput,
    TokenCounts,
)

NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000
PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9)
# A prompt may miss its target input length by this many tokens, as the server counts.
LENGTH_TOLERANCE = 1
TokenSource = Literal["usage", "tokenizer", "requested", "unknown"]


@dataclass(slots=True)
class RequestTiming:
    """What the client observed for one request (monotonic ns clock)."""

    i: int
    t_send_ns: int
    t_sched_ns: int | None = None
    # Arrival time of every SSE event that carried text (content, reasoning or completion).
    text_ns: list[int] = field(default_factory=list)
    # Tokens carried by each text event, when the server said so (continuous usage stats or
    # logprobs); None means unknown and the tokens are spread evenly over the events.
    chunk_tokens: list[int] | None = None
    t_out_ns: int | None = None  # first non-reasoning content
    t_end_ns: int | None = None  # end of stream, or when the failure was detected
    n_in: int | None = None
    n_out: int | None = None
    n_out_source: TokenSource = "usage"
    cached: int | None = None  # None: the server did not report it
    target_n_in: int | None = None
    max_tokens: int | None = None
    ignore_eos: bool = False
    status: RequestStatus = "ok"
    http_status: int | None = None
    error: str | None = None
    warmup: bool = False
    server_first_ns: int | None = None  # the server's own send time of the first text event
    # Multi-turn sessions (workers/loadgen/sessions.py): where this turn sits, and the
    # answer's text, which the next turn's prompt carries.
    session: int | None = None
    turn: int | None = None
    text: str | None = None
    # Speculative decoding, as the server reported it for this request (llama.cpp's
    # timings.draft_n / draft_n_accepted); None: not reported.
    draft_tokens: int | None = None
    draft_accepted: int | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def chunks(self) -> int:
        return len(self.text_ns)

    def ttft_ns(self) -> int | None:
        return self.text_ns[0] - self.t_send_ns if self.text_ns else None

    def ttfo_ns(self) -> int | None:
        return self.t_out_ns - self.t_send_ns if self.t_out_ns is not None else None

    def e2el_ns(self) -> int | None:
        return self.text_ns[-1] - self.t_send_ns if self.text_ns else None

    def tpot_ns(self) -> float | None:
        if not self.text_ns or self.n_out is None or self.n_out <= 1:
            return None
        return (self.text_ns[-1] - self.text_ns[0]) / (self.n_out - 1)

    def queue_delay_ns(self) -> int | None:
        return self.t_send_ns - self.t_sched_ns if self.t_sched_ns is not None else None

    def ttft_from_sched_ns(self) -> int | None:
        if self.t_sched_ns is None or not self.text_ns:
            return None
        return self.text_ns[0] - self.t_sched_ns

    def e2el_from_sched_ns(self) -> int | None:
        if self.t_sched_ns is None or not self.text_ns:
            return None
        return self.text_ns[-1] - self.t_sched_ns

    def last_ns(self) -> int:
        """When this request stopped occupying the window."""
        if self.t_end_ns is not None:
            return self.t_end_ns
        return self.text_ns[-1] if self.text_ns else self.t_send_ns


def final_status(timing: RequestTiming) -> RequestStatus:
    """Status of a stream that ended without a transport or protocol error.

    An empty stream, or one short of max_tokens while EOS was ignored, is a failure.
    """
    if timing.status != "ok":
        return timing.status
    if not timing.text_ns or timing.n_out == 0:
        return "empty_output"
    # An "unknown" count is only a lower bound (text events), so it cannot prove shortness.
    counted = timing.n_out is not None and timing.n_out_source in ("usage", "tokenizer")
    if (
        timing.ignore_eos
        and counted
        and timing.max_tokens is not None
        # `counted` holds only when n_out is not None; mypy does not carry that through it.
        and timing.n_out < timing.max_tokens  # type: ignore[operator]
    ):
        return "short_output"
    return "ok"


def spread_tokens(n_tokens: int, n_chunks: int) -> list[int]:
    """Spread n tokens over n chunks as evenly as integers allow (sums to n_tokens)."""
    if n_chunks <= 0:
        return []
    return [(k + 1) * n_tokens // n_chunks - k * n_tokens // n_chunks for k in range(n_chunks)]


def tokens_per_event(timing: RequestTiming) -> list[int] | None:
    if timing.chunk_tokens is not None and len(timing.chunk_tokens) == timing.chunks:
        return timing.chunk_tokens
    if timing.n_out is None:
        return None
    return spread_tokens(timing.n_out, timing.chunks)


def chunk_gaps_ns(timing: RequestTiming) -> list[int]:
    """Per-chunk inter-token latency: the gap before every text event after the first."""
    t = timing.text_ns
    return [t[k] - t[k - 1] for k in range(1, len(t))]


def token_weighted_gaps_ns(timing: RequestTiming) -> list[float]:
    """A chunk carrying k tokens contributes k gaps of gap/k.

    A text event known to carry no token (a split multi-byte character) passes its gap on
    to the next event that does, so no time is dropped.
    """
    per_event = tokens_per_event(timing)
    if per_event is None:
        per_event = [1] * timing.chunks
    gaps: list[float] = []
    pending = 0
    for gap, k in zip(chunk_gaps_ns(timing), per_event[1:], strict=True):
        pending += gap
        if k > 0:
            gaps.extend([pending / k] * k)
            pending = 0
    return gaps


def distribution(values: Iterable[float], scale: float = 1.0) -> Distribution | None:
    """mean, std, min, linear percentiles (numpy default), max; None when there are no values."""
    array = np.asarray(list(values), dtype=np.float64)
    if array.size == 0:
        return None
    array = array / scale
    p50, p90, p95, p99, p999 = np.percentile(array, PERCENTILES)
    return Distribution(
        method="linear",
        mean=float(array.mean()),
        std=float(array.std()),
        min=float(array.min()),
        p50=float(p50),
        p90=float(p90),
        p95=float(p95),
        p99=float(p99),
        p999=float(p999),
        max=float(array.max()),
    )


def _ms(value: float | None) -> float | None:
    return None if value is None else value / NS_PER_MS


def meets_slo(timing: RequestTiming, slo: Slo | None) -> bool:
    """Every bound of the SLO holds for this request (workers/slo.py). Open-loop requests are
    judged from their planned send time, since the user waited from then."""
    if not timing.ok:
        return False
    if slo is None:
        return True
    from_sched = timing.t_sched_ns is not None
    ttft = timing.ttft_from_sched_ns() if from_sched else timing.ttft_ns()
    e2el = timing.e2el_from_sched_ns() if from_sched else timing.e2el_ns()
    return slo_rule.request_meets(
        slo.rule(), ttft_ms=_ms(ttft), tpot_ms=_ms(timing.tpot_ns()), e2el_ms=_ms(e2el)
    )


def to_record(timing: RequestTiming, origin_ns: int) -> RequestRecord:
    tpot = timing.tpot_ns()
    return RequestRecord(
        i=timing.i,
        t_sched_ms=_ms(timing.t_sched_ns - origin_ns) if timing.t_sched_ns is not None else None,
        t_send_ms=(timing.t_send_ns - origin_ns) / NS_PER_MS,
        ttft_ms=_ms(timing.ttft_ns()),
        ttfo_ms=_ms(timing.ttfo_ns()),
        e2el_ms=_ms(timing.e2el_ns()),
        tpot_ms=_ms(tpot),
        n_in=timing.n_in,
        n_out=timing.n_out,
        cached=timing.cached,
        chunks=timing.chunks,
        status=timing.status,
        http_status=timing.http_status,
        error=timing.error[:500] if timing.error else None,
        session=timing.session,
        turn=timing.turn,
    )


def _token_source(oks: Sequence[RequestTiming]) -> TokenSource:
    sources = {t.n_out_source for t in oks}
    for worst in ("unknown", "requested", "tokenizer"):
        if worst in sources:
            return worst
    return "usage"


def _cache_hit_rate(oks: Sequence[RequestTiming]) -> tuple[int | None, float | None]:
    """sum(cached) / sum(N_in) over requests whose server reported cached tokens."""
    reported = [t for t in oks if t.cached is not None and t.n_in is not None]
    if not reported:
        return None, None
    cached = sum(t.cached or 0 for t in reported)  # `reported` holds the stated ones
    n_in = sum(t.n_in or 0 for t in reported)
    return cached, (min(1.0, cached / n_in) if n_in else None)


def request_acceptance(oks: Sequence[RequestTiming]) -> SpeculativeAcceptance | None:
    """Speculative acceptance summed over requests whose server reported draft counts."""
    reported = [t for t in oks if t.draft_tokens is not None and t.draft_accepted is not None]
    if not reported:
        return None
    drafted = sum(t.draft_tokens or 0 for t in reported)  # `reported` holds the stated ones
    accepted = sum(t.draft_accepted or 0 for t in reported)
    return SpeculativeAcceptance(
        rate=min(1.0, accepted / drafted) if drafted else None,
        draft_tokens=drafted,
        accepted_tokens=accepted,
        source="requests",
    )


def _mismatch_rate(timings: Sequence[RequestTiming]) -> float | None:
    """Share of prompts whose server-counted length misses the target beyond tolerance."""
    checked = [t for t in timings if t.target_n_in is not None and t.n_in is not None]
    if not checked:
        return None
    # `checked` holds the timings with both counts; mypy does not narrow through the filter.
    missed = sum(abs(t.n_in - t.target_n_in) > LENGTH_TOLERANCE for t in checked)  # type: ignore[operator]
    return missed / len(checked)


def build_point(
    timings: Iterable[RequestTiming],
    *,
    concurrency: int | None = None,
    request_rate: float | None = None,
    label: str | None = None,
    slo: Slo | None = None,
    include_records: bool = True,
) -> Point:
    """Aggregate one load level. Warm-up requests are left out of everything."""
    measured = [t for t in timings if not t.warmup]
    oks = [t for t in measured if t.ok]
    failed = [t for t in measured if not t.ok]

    window_ns = 0
    origin_ns = 0
    if measured:
        origin_ns = min(t.t_send_ns for t in measured)
        window_ns = max(t.last_ns() for t in measured) - origin_ns
    window_s = window_ns / NS_PER_S if window_ns > 0 else None

    n_in = sum(t.n_in or 0 for t in oks)
    n_out = sum(t.n_out or 0 for t in oks)
    cached, hit_rate = _cache_hit_rate(oks)

    def per_s(count: float) -> float | None:
        return count / window_s if window_s else None

    tpots = [tp for t in oks if (tp := t.tpot_ns()) is not None and tp > 0]
    chunks = sum(t.chunks for t in oks)
    latencies = Latencies(
        ttft=distribution((v for t in oks if (v := t.ttft_ns()) is not None), NS_PER_MS),
        ttfo=distribution((v for t in oks if (v := t.ttfo_ns()) is not None), NS_PER_MS),
        tpot=distribution(tpots, NS_PER_MS),
        itl=distribution((g for t in oks for g in chunk_gaps_ns(t)), NS_PER_MS),
        itl_token_weighted=distribution(
            (g for t in oks for g in token_weighted_gaps_ns(t)), NS_PER_MS
        ),
        e2el=distribution((v for t in oks if (v := t.e2el_ns()) is not None), NS_PER_MS),
        queue_delay=distribution(
            (v for t in measured if (v := t.queue_delay_ns()) is not None), NS_PER_MS
        ),
        ttft_from_sched=distribution(
            (v for t in oks if (v := t.ttft_from_sched_ns()) is not None), NS_PER_MS
        ),
        e2el_from_sched=distribution(
            (v for t in oks if (v := t.e2el_from_sched_ns()) is not None), NS_PER_MS
        ),
    )
    return Point(
        label=label,
        concurrency=concurrency,
        request_rate=request_rate,
        window_s=window_s,
        requests=RequestCounts(total=len(measured), succeeded=len(oks), failed=len(failed)),
        tokens=TokenCounts(input=n_in, output=n_out, cached=cached, source=_token_source(oks)),
        throughput=Throughput(
            requests_per_s=per_s(len(oks)),
            input_tok_s=per_s(n_in),
            output_tok_s=per_s(n_out),
            total_tok_s=per_s(n_in + n_out),
        ),
        latency_ms=latencies,
        # Per-request 1/TPOT, then percentiles: never 1000 / a percentile of TPOT.
        interactivity_tok_s_user=distribution(NS_PER_S / tp for tp in tpots),
        tokens_per_chunk=(n_out / chunks) if chunks else None,
        goodput_rps=per_s(sum(meets_slo(t, slo) for t in oks)) if slo is not None else None,
        prefix_cache_hit_rate=hit_rate,
        prompt_length_mismatch_rate=_mismatch_rate(oks),
        errors=dict(Counter(t.status for t in failed)),
        speculative_acceptance=request_acceptance(oks),
        records=[to_record(t, origin_ns) for t in measured] if include_records else None,
    )


def saturation_reason(
    point: Point, previous: Point | None, slo: Slo | None, min_gain: float = 0.05
) -> str | None:
    """Why a sweep should stop after this level, or None to go on.

    Saturated means the point misses the SLO (workers/slo.py: a bound broken at its
    percentile, or too few successes), or output throughput rose by less than `min_gain`
    over the previous level.
    """
    if point.requests is not None and point.requests.succeeded == 0:
        return "no request succeeded"
    if slo is not None:
        verdict = slo_rule.judge(
            slo.rule(),
            slo_rule.point_figures(
                point.latency_ms.model_dump(exclude_none=True),
                point.interactivity_tok_s_user.model_dump(exclude_none=True)
                if point.interactivity_tok_s_user
                else {},
            ),
            point.requests.succeeded / point.requests.total
            if point.requests and point.requests.total
            else point.success_rate,
        )
        if verdict.status == "misses":
            return "SLO " + verdict.describe()
    if previous is not None:
        now = point.throughput.output_tok_s or 0.0
        before = previous.throughput.output_tok_s or 0.0
        if before > 0 and now < before * (1 + min_gain):
            return f"output throughput {now:.1f} tok/s no longer rising (was {before:.1f})"
    return None
