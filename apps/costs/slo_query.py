"""The one SLO a page or the API is asked for: a tier (apps/catalog/slo_tiers.py) and any bound
the visitor sets over it, as one schema (`SloQuery`) that the API's queries extend and the
pages' forms validate through, so every surface reads the same names with the same defaults.

- `slo`: the tier's name (`interactive`, `standard`, `throughput`); blank or missing is the
  default tier, the same everywhere.
- a bound (`interactivity_min`, `ttft_s_max`, `tpot_s_max`, `e2el_s_max`, each with its
  percentile; the TTFT p99 ceiling's shorthand every page shows, `Figure.ceiling_param`):
  a number replaces the tier's bound of that metric, `none` removes it, missing keeps the tier's.
- `min_success_rate`: missing is the tier's floor (99%). A point that states no success rate
  takes part, marked "success not stated" (workers/slo.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ninja import Field
from pydantic import ConfigDict, ValidationInfo, field_validator
from pydantic.json_schema import JsonDict

from apps.api_params import Input, Share, SloSeconds, SloTokPerS
from apps.catalog import slo_tiers
from apps.costs.formulas import CostInputError
from apps.costs.slo import Metric, Slo
from workers import figures
from workers import slo as slo_rule
from workers.results import error_message
from workers.slo import PERCENTILE_PATTERN

NONE = "none"
# A bound in seconds or tok/s/user, or "none" to drop the tier's (bounded as the API's numbers
# are: apps/api_params.py).
Seconds = SloSeconds | Literal["none"] | None
TokPerSUser = SloTokPerS | Literal["none"] | None
# A percentile as the SLO takes it (workers/slo.py percentile_name says the same).
PERCENTILE: JsonDict = {"pattern": PERCENTILE_PATTERN}
PERCENTILE_FIELDS = (
    "ttft_percentile",
    "interactivity_percentile",
    "tpot_percentile",
    "e2el_percentile",
)


def stored_percentile(value: str, info: ValidationInfo) -> str:
    """A percentile field checked as the SLO reads it, given a bound or not (an unused one
    still says what the caller meant)."""
    try:
        slo_rule.percentile_name(value, info.field_name or "percentile")
    except slo_rule.SloError as exc:
        raise ValueError(exc.message) from None
    return value


# The shorthand ceiling every page shows (workers/figures.py names it: TTFT p99).
_STATED = figures.figure(figures.ANSWER_LATENCY)
if _STATED.slot is None:  # a per-request statistic always has one; refuse to start without
    raise ImportError(f"{_STATED.key} has no (distribution, percentile) slot")
_STATED_PERCENTILE = _STATED.slot[1]
SHORTHAND = _STATED.ceiling_param
# Each bounded metric's query names: the limit, its percentile, and the cost model's metric.
BOUND_FIELDS: dict[str, tuple[str, str, Metric]] = {
    "interactivity": ("interactivity_min", "interactivity_percentile", Metric.INTERACTIVITY),
    "ttft": ("ttft_s_max", "ttft_percentile", Metric.TTFT_S),
    "tpot": ("tpot_s_max", "tpot_percentile", Metric.TPOT_S),
    "e2el": ("e2el_s_max", "e2el_percentile", Metric.E2EL_S),
}
DEFAULT_PERCENTILES = {
    "interactivity_percentile": "p50",
    "ttft_percentile": "p99",
    "tpot_percentile": "p50",
    "e2el_percentile": "p99",
}
SLO_PARAMS = (
    "slo",
    *(name for limit, percentile, _ in BOUND_FIELDS.values() for name in (limit, percentile)),
    SHORTHAND,
    "min_success_rate",
)


@dataclass(frozen=True, slots=True)
class SloAsk:
    """What was asked, before the scenario is known: a tier's name and the bounds set over it
    (`Slo.of`'s keyword arguments; None keeps the tier's, "none" removes it)."""

    tier: str | None = None
    bounds: Mapping[str, float | str | None] = field(default_factory=dict)
    min_success_rate: float | None = None

    def resolve(self, scenario: object | None) -> AskedSlo:
        """The SLO for a scenario (a Scenario row or None): the tier's bounds, those asked
        over them. A tier, percentile or limit that cannot be asked is a CostInputError."""
        try:
            tier = slo_tiers.scenario_tier(scenario, self.tier)
        except slo_rule.SloError as exc:
            raise CostInputError(exc.field, exc.message) from None
        base = tier_bounds(tier)
        merged = dict(base)
        for name, value in self.bounds.items():
            if value is None:
                continue
            merged[name] = None if value == NONE else value
        rate = tier.min_success_rate if self.min_success_rate is None else self.min_success_rate
        slo = Slo.of(**merged, min_success_rate=rate)  # type: ignore[arg-type]
        # The tier's bounds are a dict of Slo.of's keywords, as above.
        base_slo = Slo.of(**base, min_success_rate=tier.min_success_rate)  # type: ignore[arg-type]
        changed = _changed(base_slo, slo)
        return AskedSlo(tier, slo, changed)


@dataclass(frozen=True, slots=True)
class AskedSlo:
    """The SLO a question is judged at: its tier, the SLO itself, and what the visitor changed
    from the tier (empty when it is the tier as defined)."""

    tier: slo_tiers.Tier
    slo: Slo
    changed: tuple[str, ...] = ()

    @property
    def bounds_latency(self) -> bool:
        return bool(self.slo.bounds)

    def describe(self) -> str:
        """ "interactive tier: interactivity p50 ≥ 30 tok/s/user, TTFT p99 ≤ 4.5 s, success
        ≥ 99%", or with what was changed: "interactive tier, TTFT p99 set to ≤ 2 s: ..."."""
        if not self.changed:
            return self.tier.describe()
        bounds = self.slo.describe() if self.slo.bounds else "bounds no latency"
        return f"{self.tier.label} tier, {'; '.join(self.changed)}: {bounds}"


def tier_bounds(tier: slo_tiers.Tier) -> dict[str, float | str | None]:
    """A tier's bounds as `Slo.of`'s keyword arguments (seconds; tok/s/user)."""
    found: dict[str, float | str | None] = {}
    for reasoned in tier.bounds:
        bound = reasoned.bound
        limit_name, percentile_name, _ = BOUND_FIELDS[bound.metric]
        found[limit_name] = (
            bound.limit if bound.metric == "interactivity" else bound.stored_limit / 1000
        )
        found[percentile_name] = bound.percentile
    return found


def _changed(tier: Slo, asked: Slo) -> tuple[str, ...]:
    """What the asked SLO changes of the tier, bound by bound, in words."""
    before = {b.metric: b for b in tier.bounds}
    after = {b.metric: b for b in asked.bounds}
    changes = []
    for metric in (*before, *(m for m in after if m not in before)):
        old, new = before.get(metric), after.get(metric)
        if old == new:
            continue
        if new is None and old is not None:
            changes.append(f"no {old.label} bound")
        elif new is not None:
            changes.append(f"{new.describe()} set")
    if tier.min_success_rate != asked.min_success_rate:
        changes.append(f"success ≥ {asked.min_success_rate:.0%} set")
    return tuple(changes)


class SloQuery(Input):
    """The SLO's query parameters, the same for the API and the pages (module docstring)."""

    model_config = ConfigDict(allow_inf_nan=False, populate_by_name=True)

    slo: str | None = Field(
        None,
        max_length=100,
        description="SLO tier: interactive (the default), standard, or throughput (no latency "
        "bound); the bounds below replace the tier's",
    )
    interactivity_min: TokPerSUser = Field(None, description="tok/s/user floor, or none")
    interactivity_percentile: str = Field("p50", json_schema_extra=PERCENTILE)
    # The registry names the query parameter (one spelling); pydantic's mypy plugin asks for
    # a literal alias.
    latency_ceiling_s: Seconds = Field(  # type: ignore[literal-required]
        None, alias=SHORTHAND, description=f"{_STATED.label} ceiling, seconds, or none"
    )
    ttft_s_max: Seconds = Field(None, description="TTFT ceiling at ttft_percentile, s, or none")
    ttft_percentile: str = Field("p99", json_schema_extra=PERCENTILE)
    tpot_s_max: Seconds = None
    tpot_percentile: str = Field("p50", json_schema_extra=PERCENTILE)
    e2el_s_max: Seconds = None
    e2el_percentile: str = Field("p99", json_schema_extra=PERCENTILE)
    min_success_rate: Share | None = Field(
        None, description="default: the tier's (0.99); unstated rates take part"
    )

    _percentiles = field_validator(*PERCENTILE_FIELDS)(stored_percentile)

    def slo_ask(self) -> SloAsk:
        bounds: dict[str, Any] = {}
        for limit, percentile, _ in BOUND_FIELDS.values():
            bounds[limit] = getattr(self, limit)
            bounds[percentile] = getattr(self, percentile)
        if self.latency_ceiling_s is not None:  # the shorthand wins over ttft_s_max
            bounds |= shorthand_ceiling(self.latency_ceiling_s)
        # A percentile alone changes nothing: it goes with its limit.
        for limit, percentile, _ in BOUND_FIELDS.values():
            if bounds[limit] is None:
                del bounds[percentile]
        return SloAsk(self.slo or None, bounds, self.min_success_rate)


def shorthand_ceiling(ceiling_s: float | str) -> dict[str, float | str]:
    """The bounds of the shorthand ceiling (SHORTHAND): a TTFT ceiling in seconds at the
    stated latency's percentile."""
    return {"ttft_s_max": ceiling_s, "ttft_percentile": _STATED_PERCENTILE}


def slo_ask_of(params: Mapping[str, Any]) -> SloAsk:
    """The SLO asked in a page's query string (blank values are missing), through the one
    schema: a value it refuses is a CostInputError naming the field."""
    from pydantic import ValidationError

    given = {k: v for k in SLO_PARAMS if (v := params.get(k)) not in (None, "")}
    try:
        return SloQuery(**given).slo_ask()
    except ValidationError as exc:
        error = exc.errors()[0]
        name = str(error["loc"][0]) if error["loc"] else "slo"
        raise CostInputError(name, _said(error)) from None


def _said(error: Mapping[str, Any]) -> str:
    """A refused bound in the pages' words: the schema's floor of 1e-6 is how it says a bound
    must be above zero (a zero bound is met by nothing), so the page says that."""
    floor = (error.get("ctx") or {}).get("ge")
    if error["type"] == "greater_than_equal" and floor is not None and 0 < floor <= 1e-6:
        return f"must be greater than zero (got {error['input']})"
    return error_message(error)


def tier_choices(scenario: object | None = None) -> list[tuple[str, str]]:
    """(name, label) of every tier of a scenario, for a page's select."""
    return [(t.name, t.label) for t in slo_tiers.scenario_tiers(scenario)]


def slo_controls(
    params: Mapping[str, Any], scenario: object | None, asked: AskedSlo | None = None
) -> dict[str, Any]:
    """What a page's SLO controls (templates/includes/slo_controls.html) show: the tier
    picked, the floor and ceiling typed over it (blank: the tier's, shown as placeholders)
    and the SLO in the tier's words with the reason for each bound."""
    if asked is not None:
        tier = asked.tier
    else:
        try:
            tier = slo_tiers.scenario_tier(scenario, str(params.get("slo") or "") or None)
        except slo_rule.SloError:
            tier = slo_tiers.default_tier(scenario)
    floor, ceiling = tier.bound("interactivity"), tier.bound("ttft")
    return {
        "tiers": tier_choices(scenario),
        "picked": tier.name,
        "tier": tier,
        "floor": params.get("interactivity_min") or "",
        "ceiling": params.get(SHORTHAND) or params.get("ttft_s_max") or "",
        "ceiling_param": SHORTHAND,
        "ceiling_label": _STATED.label,
        "floor_placeholder": f"{floor.limit:g}" if floor else NONE,
        "ceiling_placeholder": f"{ceiling.limit:g}" if ceiling else NONE,
        "described": asked.describe() if asked is not None else tier.describe(),
        "reasons": tier.reasons(),
    }
