"""The (point, SLO) verdict table every consumer is tested against (workers/slo.py).

Each case is a document-shaped SLO (`Scenario.slo`) and a document-shaped point; the
expected verdict is what `workers.slo.judge` must answer, and what goodput's early stop,
ingestion's leaderboard point, the leaderboard, costs, compare and the API must agree with.
The first four cases are the contradictions issue 11 found.
"""

from dataclasses import dataclass
from typing import Any


def point(
    *,
    ttft: dict[str, float] | None = None,
    tpot: dict[str, float] | None = None,
    e2el: dict[str, float] | None = None,
    interactivity: dict[str, float] | None = None,
    total: int = 100,
    failed: int = 0,
    output_tok_s: float = 1000.0,
    open_loop_ttft: dict[str, float] | None = None,
) -> dict[str, Any]:
    latency = {
        name: dist
        for name, dist in (("ttft", ttft), ("tpot", tpot), ("e2el", e2el))
        if dist is not None
    }
    if open_loop_ttft is not None:
        latency["ttft_from_sched"] = open_loop_ttft
    data: dict[str, Any] = {
        "concurrency": 8,
        "window_s": 60,
        "requests": {"total": total, "succeeded": total - failed, "failed": failed},
        # Input at the default scenario's 20:1 lengths (tests.factories, seed-20k-1k-60): the
        # row audit refuses a ratio far from the scenario's (workers/audit.py).
        "throughput": {"output_tok_s": output_tok_s, "input_tok_s": output_tok_s * 20},
        "latency_ms": latency,
        # What the board's rules read besides the SLO (apps/trust/rules.py).
        "prompt_length_mismatch_rate": 0,
        "client_bound": False,
    }
    if interactivity is not None:
        data["interactivity_tok_s_user"] = interactivity
    return data


@dataclass(frozen=True)
class Case:
    name: str
    slo: dict[str, Any]
    point: dict[str, Any]
    status: str  # meets | misses | cannot_check
    detail: str = ""  # a fragment the verdict's description must contain


FAST = {"p50": 10.0, "p90": 20.0, "p95": 25.0, "p99": 30.0, "p999": 40.0}

CASES = [
    # 1. The load generator said "missed", the leaderboard "meets": TPOT judged at p50.
    Case(
        "tpot_p99_80ms_against_a_50ms_p99_slo_misses",
        {"tpot_ms": 50, "ttft_percentile": 99},
        point(ttft=FAST, tpot={"p50": 40.0, "p99": 80.0}),
        "misses",
        "TPOT p99 is 80 ms",
    ),
    # 2. p99.9 could not be asked for: the stored key is p999.
    Case(
        "p99_9_is_read_from_the_stored_p999",
        {"bounds": [{"metric": "ttft", "percentile": "p99.9", "limit": 35}]},
        point(ttft=FAST),
        "misses",
        "TTFT p99.9 is 40 ms",
    ),
    # 3. A point with 30% failed requests "met the SLO".
    Case(
        "seventy_percent_success_misses_a_99_percent_slo",
        {"ttft_ms": 2220},
        point(ttft=FAST, failed=30),
        "misses",
        "success 70.0% < 99%",
    ),
    # 4. The leaderboard printed "TTFT p50" while checking p99.
    Case(
        "ttft_p50_is_judged_at_p50",
        {"ttft_ms": 15, "ttft_percentile": 50},
        point(ttft=FAST),
        "meets",
    ),
    Case(
        "every_bound_holding_meets",
        {
            "bounds": [
                {"metric": "ttft", "percentile": "p99", "limit": 2.22, "unit": "s"},
                {"metric": "e2el", "percentile": "p90", "limit": 30},
            ]
        },
        point(ttft=FAST, e2el=FAST),
        "meets",
    ),
    Case(
        "a_missing_percentile_cannot_be_checked",
        {"bounds": [{"metric": "tpot", "percentile": "p95", "limit": 50}]},
        point(ttft=FAST, tpot={"p50": 10.0, "p99": 20.0}),
        "cannot_check",
        "tpot.p95",
    ),
    Case(
        "interactivity_is_a_floor",
        {
            "bounds": [
                {"metric": "interactivity", "percentile": "p50", "limit": 30, "unit": "tok/s/user"}
            ]
        },
        point(ttft=FAST, interactivity={"p50": 25.0}),
        "misses",
        "interactivity p50 is 25 tok/s/user",
    ),
    Case(
        "a_broken_bound_misses_even_when_another_is_missing",
        {"ttft_ms": 20, "tpot_ms": 50},
        point(ttft=FAST),
        "misses",
        "TTFT p99 is 30 ms",
    ),
    Case(
        "open_loop_ttft_is_judged_from_the_planned_send",
        {"ttft_ms": 100},
        point(ttft=FAST, open_loop_ttft={"p50": 90.0, "p99": 400.0}),
        "misses",
        "TTFT p99 is 400 ms",
    ),
    Case(
        "a_lower_minimum_success_rate_is_honoured",
        {"ttft_ms": 2220, "min_success_rate": 0.5},
        point(ttft=FAST, failed=30),
        "meets",
    ),
]
