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

A scenario whose definition states an SLO of its own (a submitted scenario's `slo`, the seed
scenario's TTFT ≤ 2.22 s) has it as a fourth tier, `scenario`, and as its default: a view of
that scenario is judged as the scenario says unless the visitor picks a named tier.

Pure (no Django): pages, forms, the API and other apps call `scenario_tier(scenario, name)`,
`scenario_tiers(scenario)` and `default_tier(scenario)` with a Scenario row (anything with
its attributes), or None for an unknown scenario.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workers import slo as slo_rule

INTERACTIVE, STANDARD, THROUGHPUT = "interactive", "standard", "throughput"
# A scenario that states an SLO of its own (its definition's bounds, e.g. the seed scenario's
# TTFT ≤ 2.22 s from the claim it reproduces) has that as a fourth tier, and its default.
SCENARIO = "scenario"
TIER_NAMES = (INTERACTIVE, STANDARD, THROUGHPUT, SCENARIO)
# Every default view asks this tier unless the visitor picks another (or the scenario states
# an SLO of its own: `default_tier`).
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
    SCENARIO: "the scenario's own",
}
_PURPOSE = {
    INTERACTIVE: "a person waits on the answer as it streams (chat, coding assistants)",
    STANDARD: "a person reads the answer, but can wait longer for it to start",
    THROUGHPUT: (
        "batch work nobody waits on: bounds no latency, so it judges nothing and every valid "
        "load level takes part (the success floor comes with a latency bound)"
    ),
    SCENARIO: "the SLO the scenario's own definition states, judged as it states it",
}
_SCENARIO_WHY = "stated by the scenario's own definition"
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
    """The tier `name` (interactive when None or blank) for prompts this long; an unknown
    name is an SloError naming the field `slo` and the tiers there are."""
    return _named(tiers_for(input_tokens), name or DEFAULT_TIER)


def _named(tiers: tuple[Tier, ...], name: str) -> Tier:
    wanted = name.strip().lower()
    for tier in tiers:
        if tier.name == wanted:
            return tier
    names = ", ".join(t.name for t in tiers)
    raise slo_rule.SloError("slo", f"unknown SLO tier {name!r}; one of {names}")


def scenario_own_slo(scenario: Any) -> slo_rule.Slo:
    """The SLO a Scenario row's definition states (no SLO for none, or no scenario): its
    legacy columns and its bounds, as one workers.slo.Slo. Reads attributes only, so
    historical models in migrations work too (apps.runs.summary.scenario_slo is this)."""
    if scenario is None:
        return slo_rule.Slo()
    legacy = slo_rule.from_legacy(
        ttft_ms=getattr(scenario, "slo_ttft_ms", None),
        ttft_percentile=getattr(scenario, "slo_ttft_percentile", 99),
        tpot_ms=getattr(scenario, "slo_tpot_ms", None),
        e2el_ms=getattr(scenario, "slo_e2el_ms", None),
    )
    extra = tuple(
        slo_rule.Bound(b["metric"], b["percentile"], b["limit"], b.get("unit", "ms"))
        for b in getattr(scenario, "slo_bounds", None) or []
    )
    rate = getattr(scenario, "slo_min_success_rate", slo_rule.DEFAULT_MIN_SUCCESS_RATE)
    return slo_rule.Slo(legacy.bounds + extra, rate)


def _input_tokens(scenario: object | None) -> int | None:
    return getattr(scenario, "input_tokens", None) if scenario is not None else None


def scenario_tiers(scenario: object | None) -> tuple[Tier, ...]:
    """The tiers of a scenario (a Scenario row, or None: prompts of unstated length): the
    three named ones, and its own SLO's when its definition states one."""
    tiers = tiers_for(_input_tokens(scenario))
    own = scenario_own_slo(scenario)
    if not own.bounds:
        return tiers
    stated = tuple(Reasoned(_in_seconds(bound), _SCENARIO_WHY) for bound in own.bounds)
    mine = Tier(SCENARIO, _PURPOSE[SCENARIO], tiers[0].prompt, stated, own.min_success_rate)
    return (*tiers, mine)


def _in_seconds(bound: slo_rule.Bound) -> slo_rule.Bound:
    """A latency bound in seconds, the unit every page states the tiers in."""
    if not bound.is_ceiling or bound.unit == "s":
        return bound
    return slo_rule.Bound(bound.metric, bound.percentile, bound.stored_limit / 1000, "s")


def scenario_tier(scenario: object | None, name: str | None = None) -> Tier:
    """A scenario's tier by name (its default tier when None or blank)."""
    if not name or not name.strip():
        return default_tier(scenario)
    return _named(scenario_tiers(scenario), name)


def default_tier(scenario: object | None) -> Tier:
    """The tier every default view of this scenario asks: the scenario's own SLO where its
    definition states one, else the interactive tier."""
    tiers = scenario_tiers(scenario)
    return tiers[-1] if tiers[-1].name == SCENARIO else tiers[0]
