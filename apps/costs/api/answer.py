"""GET /api/v1/compare/answer: the one like-for-like answer (apps/costs/answer.py)."""

from __future__ import annotations

from typing import Any, Literal

from django.http import HttpRequest
from ninja import Field, Query, Router

from apps.accounts.auth import optional_org
from apps.api_errors import Errors
from apps.api_params import Finite
from apps.costs.answer import (
    DEFAULT_MAX_GAP,
    STATED_LATENCY,
    Answer,
    Facts,
    Measured,
    RatioInterval,
    Side,
)
from apps.costs.answer_selectors import DEFAULT_TIER, Asked, Asking, ask
from apps.costs.answer_swing import Swing
from apps.costs.formulas import TokenKind
from apps.costs.odds import PRICE_RANGE_PATTERN, Odds, parse_range
from apps.costs.prices import price_sheet_of
from apps.costs.reference import PriceSet, price_set
from apps.costs.slo_query import SloQuery
from workers.slo import SUCCESS_NOT_STATED

router = Router(tags=["compare"])


class AnswerQuery(SloQuery):
    """The answer's question: the model, scenario, sides and facts, with the one SLO query
    (apps/costs/slo_query.py: a tier, the default one unless named, and bounds over it)."""

    model: str = Field(
        min_length=1, max_length=200, description="the model's name, e.g. DeepSeek-R1-0528"
    )
    scenario: str = Field(
        min_length=1, max_length=200, description="the scenario's slug, e.g. 8k-1k"
    )
    a: str = Field(min_length=1, max_length=100, description="side A's accelerator SKU")
    b: str = Field(min_length=1, max_length=100, description="side B's accelerator SKU")
    precision: str = Field(
        "any", min_length=1, max_length=100, description="weight precision both sides share, or any"
    )
    spec: str = Field(
        "any",
        min_length=1,
        max_length=100,
        description="a speculative decoding method, none, or any",
    )
    engine: str = Field("any", min_length=1, max_length=200, description="an engine name, or any")
    serving: Literal["aggregated", "disaggregated", "any"] = "any"
    basis: Literal["output", "input", "total"] = "output"
    tier: str = Field(DEFAULT_TIER, min_length=1, max_length=100)
    prices_as_of: str = Field(
        "",
        max_length=100,
        description="the reference price set: a date (YYYY-MM-DD) or a set's name; newest",
    )
    price_range_a: str = Field(
        "",
        max_length=100,
        json_schema_extra={"pattern": rf"^\s*$|{PRICE_RANGE_PATTERN}"},
        description="A's $/GPU-hr range for P(A cheaper), e.g. 1.40-1.60 (default: the sets)",
    )
    price_range_b: str = Field(
        "",
        max_length=100,
        json_schema_extra={"pattern": rf"^\s*$|{PRICE_RANGE_PATTERN}"},
        description="B's $/GPU-hr range for P(A cheaper)",
    )
    interpolate: bool = Field(False, description="opt in to a labelled interpolated reading")
    max_gap: Finite = Field(DEFAULT_MAX_GAP, gt=1, le=1e6, description="widest concurrency factor")
    swing: bool = Field(True, description="include the answer against the interactivity floor")

    def asked(self, own_prices: dict[str, float]) -> Asked:
        slo = self.slo_ask()
        return Asked(
            model=self.model,
            scenario=self.scenario,
            a=self.a.strip().upper(),
            b=self.b.strip().upper(),
            facts=Facts(self.precision, self.spec, self.engine, self.serving),
            bounds=slo.bounds,
            basis=TokenKind(self.basis),
            tier=self.tier,
            own_prices=own_prices,
            prices_as_of=self.prices_as_of,
            price_ranges=(
                parse_range("price_range_a", self.price_range_a)
                if self.price_range_a.strip()
                else None,
                parse_range("price_range_b", self.price_range_b)
                if self.price_range_b.strip()
                else None,
            ),
            min_success_rate=slo.min_success_rate,
            slo_tier=slo.tier,
            interpolate=self.interpolate,
            max_gap=self.max_gap,
        )


@router.get(
    "/answer",
    response={200: dict[str, Any], 422: Errors},
    summary="The like-for-like answer of two accelerators at an SLO",
)
def compare_answer(request: HttpRequest, query: Query[AnswerQuery]):
    """Each side's best measured point meeting every SLO bound among configurations with
    the asked facts; the ratios, what still differs, the rule, and the swing."""
    org = optional_org(request)
    # Own prices as on every money page: the organization's profile, the URL's on top.
    sheet = price_sheet_of(request.GET, org)
    asking = ask(query.asked(sheet.own), org=org, with_swing=query.swing)
    return asking_out(asking, profile=sheet.profile)


def price_set_out(chosen: PriceSet) -> dict[str, Any]:
    """Which dated reference set priced an answer (apps/costs/reference.py)."""
    return {
        "name": chosen.name,
        "title": chosen.title,
        "in_force_from": chosen.in_force_from.isoformat(),
        "source": chosen.source,
    }


def point_out(point: Measured | None) -> dict[str, Any] | None:
    if point is None:
        return None
    return {
        "run_id": point.run_id,
        "deployment_id": point.deployment_id,
        "deployment": point.deployment,
        "origin": point.origin,
        "provenance": point.provenance,
        "rules_passed": point.rules_passed,
        "rules_failed": list(point.rules_failed),
        "level": point.level,
        "concurrency": point.concurrency,
        "tok_s_per_gpu": point.tok_s_per_gpu,
        "basis_stated": point.basis_stated,
        "interactivity_p50": point.interactivity_p50,
        STATED_LATENCY.seconds_name: point.latency_s,
        "usd_per_gpu_hour": point.usd_per_gpu_hour,
        "usd_per_mtok": point.usd_per_mtok,
        "success_rate": point.success_rate,
        "success": SUCCESS_NOT_STATED if point.unstated_success else "stated",
        "measured_at": point.measured_at.isoformat() if point.measured_at else None,
        "newer_partial_run": point.partial or None,
        "facts": {
            "engine": point.engine,
            "engine_version": point.engine_version,
            "image": point.image,
            "precision": point.precision,
            "spec": point.spec or "none",
            "parallelism": point.parallelism,
            "serving": point.serving,
            "gpus": point.gpus,
            "lengths": point.lengths,
        },
    }


def side_out(side: Side) -> dict[str, Any]:
    return {
        "sku": side.sku,
        "meets": side.point is not None,
        "reading": side.reading,
        "tok_s_per_gpu": side.tok_s_per_gpu,
        "usd_per_mtok": side.usd_per_mtok,
        "point": point_out(side.point),
        "upper": point_out(side.upper),
        "reason": side.reason,
        "nearest": point_out(side.nearest),
        "failing": list(side.failing),
        "points_considered": side.considered,
    }


def answer_out(result: Answer) -> dict[str, Any]:
    return {
        "a": side_out(result.a),
        "b": side_out(result.b),
        "tok_s_ratio": result.tok_ratio,
        "usd_per_mtok_ratio": result.usd_ratio,
        "differs": list(result.differs),
        "filters_that_flip": list(result.flips),
        "uncertainty": result.uncertainty,
        "interval": interval_out(result.interval),
        "rule": result.rule,
        "slo": result.slo_described,
        "success_not_stated": {"points": result.unstated, "of": result.considered},
        "facts": result.facts.describe(),
    }


def interval_out(interval: RatioInterval | None) -> dict[str, Any] | None:
    """The ratio's 95% interval, or None: a single measurement (the `uncertainty` says)."""
    if interval is None:
        return None
    return {
        "confidence": 0.95,
        # The interval's own estimate (the sides' means), not the chosen points' ratio.
        "tok_s_ratio": interval.tok_ratio,
        "usd_per_mtok_ratio": interval.usd_ratio,
        "tok_s_ratio_low": interval.tok_low,
        "tok_s_ratio_high": interval.tok_high,
        "usd_per_mtok_ratio_low": interval.usd_low,
        "usd_per_mtok_ratio_high": interval.usd_high,
        "runs": {"a": interval.runs_a, "b": interval.runs_b},
        "request_records": {"a": interval.requests_a, "b": interval.requests_b},
    }


def odds_out(odds: Odds | None) -> dict[str, Any] | None:
    """P(A is cheaper than B) beside the $/Mtok ratio (apps/costs/odds.py), with its method,
    the runs behind each side and what it leaves out; None where the answer has no ratio."""
    if odds is None:
        return None
    return {
        "p_a_cheaper": odds.probability,
        "monte_carlo_error": odds.standard_error,
        "draws": odds.draws,
        "runs": {"a": odds.runs_a, "b": odds.runs_b},
        "request_records": {"a": odds.requests_a, "b": odds.requests_b},
        "prices": odds.prices,
        "method": odds.method,
        "leaves_out": list(odds.leaves_out),
        "notes": list(odds.notes),
    }


def swing_out(swung: Swing) -> dict[str, Any]:
    return {
        "crossover": swung.crossover,
        "rows": [
            {
                "interactivity_min": row.floor,
                "a_tok_s_per_gpu": row.a.tok_s_per_gpu,
                "b_tok_s_per_gpu": row.b.tok_s_per_gpu,
                "a_usd_per_mtok": row.a.usd_per_mtok,
                "b_usd_per_mtok": row.b.usd_per_mtok,
                "tok_s_ratio": row.tok_ratio,
                "usd_per_mtok_ratio": row.usd_ratio,
            }
            for row in swung.rows
        ],
    }


def asking_out(asking: Asking, *, profile: str = "") -> dict[str, Any]:
    asked = asking.asked
    return {
        "model": asked.model,
        "scenario": asking.scenario.slug,
        "basis": asked.basis.value,
        "tier": asked.tier,
        "price_set": price_set_out(price_set(asked.prices_as_of)),
        "slo_tier": asking.slo.tier.as_dict() if asking.slo else None,
        "slo_changed": list(asking.slo.changed) if asking.slo else [],
        "own_prices": dict(asked.own_prices),
        "price_profile": profile or None,
        "points_read": asking.points,
        **answer_out(asking.answer),
        "odds": odds_out(asking.odds),
        "swing": swing_out(asking.swing),
    }
