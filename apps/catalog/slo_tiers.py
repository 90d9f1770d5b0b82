"""The named SLO tiers every default view shares, each bound with its reasoning, defined once
(docs/methodology.md, "SLO tiers").

A scenario has three tiers: **interactive** (the default of the board, the headline, /answer/,
/compare/, /costs/ and the API), **standard**, and **throughput-only**, which bounds no latency
and so judges nothing. The TTFT ceilings depend on the prompt's length (a prefill of 8k tokens
takes longer than one of 1k, and MLPerf sets its ceilings per benchmark the same way); the
interactivity floors do not (they are about how fast a person reads the answer stream).

The MLPerf figures are loadgen/mlperf.conf's in mlcommons/inference (commit 001712e9daf8):
`deepseek-r1-interactive.Server` TTFT p99 1,500 ms, TPOT p99 15 ms; `deepseek-r1.Server` TTFT
2,000 ms, TPOT 80 ms; `llama3_1-405b-interactive.Server` (long prompts) TTFT 4,500 ms, TPOT
80 ms; `llama3_1-405b.Server` TTFT 6,000 ms, TPOT 175 ms; `llama2-70b-interactive.Server`
TTFT 450 ms, TPOT 40 ms.

Pure (no Django): pages, forms, the API and other apps call `scenario_tier(scenario, name)`,
`scenario_tiers(scenario)` and `default_tier(scenario)` with anything that has an
`input_tokens` attribute (a Scenario row, or None for an unknown scenario).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workers import slo as slo_rule

INTERACTIVE, STANDARD, THROUGHPUT = "interactive", "standard", "throughput"
TIER_NAMES = (INTERACTIVE, STANDARD, THROUGHPUT)
# Every default view asks this tier unless the visitor picks another.
DEFAULT_TIER = INTERACTIVE
# Prompts longer than this, or of unstated length (multi-turn sessions grow their context),
# take the long-prompt TTFT ceilings.
SHORT_PROMPT_MAX_TOKENS = 2048
# A point with fewer successes misses every tier that bounds latency (DESIGN: "default 99%");
# a point that states no success rate takes part, marked "success not stated".
MIN_SUCCESS_RATE = slo_rule.DEFAULT_MIN_SUCCESS_RATE

_FLOOR_WHY = (
    "{floor:g} tok/s/user at the median: MLPerf's interactive benchmarks ask a TPOT p99 of "
    "40 ms (Llama 2 70B, 25 tok/s/user) to 15 ms (DeepSeek-R1, 67 tok/s/user); "
    "{floor:g} is within that range, and the median is the percentile every source here "
    "states (InferenceX gives interactivity at the median only)"
)
_STANDARD_FLOOR_WHY = (
    "{floor:g} tok/s/user at the median: MLPerf's DeepSeek-R1 Server benchmark asks a TPOT "
    "p99 of 80 ms, 12.5 tok/s/user, faster than people read"
)
_TTFT_WHY = {
    (INTERACTIVE, "short"): "MLPerf's DeepSeek-R1 interactive benchmark: TTFT p99 ≤ 1.5 s",
    (INTERACTIVE, "long"): (
        "MLPerf's long-prompt interactive benchmark (Llama 3.1 405B): TTFT p99 ≤ 4.5 s, "
        "since a long prefill takes longer before the first token"
    ),
    (STANDARD, "short"): "MLPerf's DeepSeek-R1 Server benchmark: TTFT p99 ≤ 2 s",
    (STANDARD, "long"): "MLPerf's long-prompt Server benchmark (Llama 3.1 405B): TTFT p99 ≤ 6 s",
}
_TTFT_S = {
    (INTERACTIVE, "short"): 1.5,
    (INTERACTIVE, "long"): 4.5,
    (STANDARD, "short"): 2.0,
    (STANDARD, "long"): 6.0,
}
# The interactivity floor (tok/s/user at p50) of each tier that bounds latency.
INTERACTIVITY_FLOORS = {INTERACTIVE: 30.0, STANDARD: 12.5}
_LABELS = {
    INTERACTIVE: "interactive",
    STANDARD: "standard",
    THROUGHPUT: "throughput-only",
}
_PURPOSE = {
    INTERACTIVE: "a person waits on the answer as it streams (chat, coding assistants)",
    STANDARD: "a person reads the answer, but can wait longer for it to start",
    THROUGHPUT: (
        "batch work nobody waits on: bounds no latency, so it judges nothing and every valid "
        "load level takes part (the success floor comes with a latency bound)"
    ),
}
_SUCCESS_WHY = (
    "at least 99% of requests succeed (the SLO's default minimum); a point that states no "
    "success rate (InferenceX's rows) takes part, marked “success not stated”"
)


@dataclass(frozen=True, slots=True)
class Reasoned:
    """One bound of a tier and why it is where it is."""

    bound: slo_rule.Bound
    why: str


@dataclass(frozen=True, slots=True)
class Tier:
    """A named SLO of a scenario: its bounds with their reasons, and its success floor."""

    name: str
    purpose: str
    prompt: str  # "short" or "long": which TTFT ceilings apply
    bounds: tuple[Reasoned, ...]
    min_success_rate: float

    @property
    def label(self) -> str:
        return _LABELS[self.name]

    @property
    def slo(self) -> slo_rule.Slo:
        """The tier as the one SLO rule (workers/slo.py) judges it."""
        return slo_rule.Slo(tuple(r.bound for r in self.bounds), self.min_success_rate)

    @property
    def bounds_latency(self) -> bool:
        return bool(self.bounds)

    def bound(self, metric: slo_rule.Metric) -> slo_rule.Bound | None:
        return next((r.bound for r in self.bounds if r.bound.metric == metric), None)

    def describe(self) -> str:
        """The tier in words: "interactive tier: TTFT p99 ≤ 4.5 s, interactivity p50 ≥ 30
        tok/s/user, success ≥ 99%"; the throughput-only tier says it bounds no latency."""
        if not self.bounds:
            return f"{self.label} tier: bounds no latency"
        return f"{self.label} tier: {self.slo.describe()}"

    def reasons(self) -> list[str]:
        """Each bound and why, in the order the tier states them."""
        found = [f"{r.bound.describe()}: {r.why}" for r in self.bounds]
        if self.bounds:
            found.append(f"success ≥ {self.min_success_rate:.0%}: {_SUCCESS_WHY}")
        else:
            found.append(_PURPOSE[THROUGHPUT])
        return found

    def as_dict(self) -> dict[str, Any]:
        """The tier as the API states it."""
        return {
            "name": self.name,
            "label": self.label,
            "purpose": self.purpose,
            "prompt": self.prompt,
            "describe": self.describe(),
            "bounds": [
                {
                    "metric": r.bound.metric,
                    "percentile": r.bound.percentile,
                    "limit": r.bound.limit,
                    "unit": r.bound.unit,
                    "why": r.why,
                }
                for r in self.bounds
            ],
            "min_success_rate": self.min_success_rate if self.bounds else None,
            "reasons": self.reasons(),
        }


def prompt_class(input_tokens: int | None) -> str:
    """Which ceilings apply: "short" for prompts of at most SHORT_PROMPT_MAX_TOKENS, else
    (or unstated) "long"."""
    if input_tokens is not None and 0 < input_tokens <= SHORT_PROMPT_MAX_TOKENS:
        return "short"
    return "long"


def tiers_for(input_tokens: int | None) -> tuple[Tier, ...]:
    """The three tiers of a scenario whose prompts are `input_tokens` long."""
    prompt = prompt_class(input_tokens)
    found = []
    for name in (INTERACTIVE, STANDARD):
        floor = INTERACTIVITY_FLOORS[name]
        why = (_FLOOR_WHY if name == INTERACTIVE else _STANDARD_FLOOR_WHY).format(floor=floor)
        found.append(
            Tier(
                name=name,
                purpose=_PURPOSE[name],
                prompt=prompt,
                # In the order every SLO states its bounds (apps/costs/slo.py Slo.of).
                bounds=(
                    Reasoned(
                        slo_rule.Bound("ttft", "p99", _TTFT_S[name, prompt], "s"),
                        _TTFT_WHY[name, prompt],
                    ),
                    Reasoned(slo_rule.Bound("interactivity", "p50", floor, "tok/s/user"), why),
                ),
                min_success_rate=MIN_SUCCESS_RATE,
            )
        )
    found.append(Tier(THROUGHPUT, _PURPOSE[THROUGHPUT], prompt, (), MIN_SUCCESS_RATE))
    return tuple(found)


def tier_for(input_tokens: int | None, name: str | None = None) -> Tier:
    """The tier `name` (the default one when None or blank) for prompts this long; an
    unknown name is an SloError naming the field `slo` and the tiers there are."""
    wanted = (name or DEFAULT_TIER).strip().lower()
    for tier in tiers_for(input_tokens):
        if tier.name == wanted:
            return tier
    raise slo_rule.SloError("slo", f"unknown SLO tier {name!r}; one of {', '.join(TIER_NAMES)}")


def _input_tokens(scenario: object | None) -> int | None:
    return getattr(scenario, "input_tokens", None) if scenario is not None else None


def scenario_tiers(scenario: object | None) -> tuple[Tier, ...]:
    """The tiers of a scenario (a Scenario row, or None: prompts of unstated length)."""
    return tiers_for(_input_tokens(scenario))


def scenario_tier(scenario: object | None, name: str | None = None) -> Tier:
    """A scenario's tier by name (its default tier when None)."""
    return tier_for(_input_tokens(scenario), name)


def default_tier(scenario: object | None) -> Tier:
    """The tier every default view of this scenario asks."""
    return scenario_tier(scenario, DEFAULT_TIER)
