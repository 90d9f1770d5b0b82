"""/costs/'s "which is cheaper at this SLO": the page's two cheapest accelerators asked through
the one answer service (apps/costs/answer_selectors.ask), as the API's question
(GET /api/v1/compare/answer) with the page's model, scenario, filters, SLO, basis and prices,
so the page's figures are the API's for the same link."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.urls import reverse

from apps.accounts.models import Organization
from apps.costs.answer_selectors import Asking, ask
from apps.costs.api.answer import AnswerQuery
from apps.costs.formulas import CostInputError
from apps.costs.prices import PRICE_PREFIX, url_prices
from apps.costs.procurement import Row
from apps.costs.procurement_inputs import ProcurementInputs
from apps.costs.procurement_table import NO_SPEC

# The page's SLO fields that are the API's by the same name.
SLO_FIELDS = ("ttft_s_max", "ttft_percentile", "interactivity_min", "e2el_s_max")


@dataclass(frozen=True, slots=True)
class Cheaper:
    asking: Asking
    api_url: str  # the same question as JSON, which answers the same figures

    @property
    def sides(self) -> tuple:
        return (self.asking.answer.a, self.asking.answer.b)


def question(
    values: Mapping[str, str], inputs: ProcurementInputs, rows: Sequence[Row]
) -> dict[str, str] | None:
    """The API's query for the two accelerators asked (`a`, `b`), else the two cheapest among
    `rows` (cheapest first), or None when the page names no model and scenario or has fewer
    than two accelerators."""
    skus: list[str] = []
    for row in rows:
        if row.ok and row.curve.accelerator not in skus:
            skus.append(row.curve.accelerator)
    asked = [values.get(side, "").strip() for side in ("a", "b")]
    if all(asked):
        skus = asked
    if not (inputs.model and inputs.scenario) or len(skus) < 2:
        return None
    spec = values.get("spec", "")
    params = {
        "model": inputs.model,
        "scenario": inputs.scenario,
        "a": skus[0],
        "b": skus[1],
        "engine": values.get("engine") or "any",
        "spec": NO_SPEC if spec == NO_SPEC else (spec or "any"),
        "basis": inputs.token_kind.value,
        "tier": values.get("tier", ""),
        "swing": "false",
        **({"precision": values["precision"]} if values.get("precision") else {}),
        **({"prices_as_of": values["prices_as_of"]} if values.get("prices_as_of") else {}),
        **{name: values[name] for name in SLO_FIELDS if values.get(name)},
    }
    pct = (values.get("min_success_pct") or "").strip()
    if pct:
        params["min_success_rate"] = f"{float(pct) / 100:g}"
    # The page's own prices, as the API reads them from its URL (apps.costs.prices).
    params |= {f"{PRICE_PREFIX}{sku}": f"{usd:g}" for sku, usd in url_prices(values).items()}
    return params


def cheaper_at_slo(
    values: Mapping[str, str],
    inputs: ProcurementInputs,
    rows: Sequence[Row],
    *,
    org: Organization | None,
) -> Cheaper | None:
    params = question(values, inputs, rows)
    if params is None:
        return None
    fields: dict[str, Any] = {k: v for k, v in params.items() if not k.startswith(PRICE_PREFIX)}
    asked = AnswerQuery(**fields)
    try:
        asking = ask(asked.asked(url_prices(params)), org=org, with_swing=False)
    except CostInputError:
        return None  # a question the service cannot ask (no visible run of the scenario)
    return Cheaper(asking, f"{reverse('api:compare_answer')}?{urlencode(params)}")
