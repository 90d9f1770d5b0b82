"""The cost pages' query strings as Django forms: the procurement calculator's and the claim
checker's, each field's label, and the words that explain a value the page cannot use.

ProcurementQuery is read by /costs/, its CSV/JSON downloads and the API's table; ClaimQuery by
/costs/claim/ and its verdict image.

A view binds its form once per request; `problems()` are the page's errors as (field,
message), and the cost model's own refusals (apps/costs/formulas.py) join them under the
field they name, so a value is explained once, by the first check it fails.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from apps.costs.answer import Answer, Facts
from apps.costs.answer_selectors import DEFAULT_QUESTION, Asked
from apps.costs.claims import (
    Claim,
    ClaimPage,
    Comparison,
    check_with_assumptions,
)
from apps.costs.formulas import (
    AcceleratorPrices,
    CostInputError,
    Tier,
    TokenKind,
    choose_price,
    require_non_negative,
)
from apps.costs.prices import ProfiledQuery
from apps.costs.procurement_inputs import (
    DEFAULTS,
    PRICE_PREFIX,
    SELL_FIELDS,
    TEXT_FIELDS,
    UNIT_FIELDS,
    WORKLOAD_UNITS,
    FieldError,
    ProcurementInputs,
    capex_price,
    length_mix,
    sized_workload,
)
from apps.costs.reference import TIER_LABELS
from apps.costs.slo import Slo

CAPEX_FIELDS = (
    ("gpu_purchase_usd", "GPU purchase $", 8),
    ("server_share_usd", "Server share per GPU $", 8),
    ("depreciation_years", "Years", 3),
    ("kw_per_gpu", "All-in kW/GPU (blank: reference)", 4),
    ("usd_per_kwh", "$/kWh", 5),
    ("pue", "PUE", 4),
    ("hosting_usd_per_month", "Hosting $/month/GPU", 6),
    ("utilization", "Utilization", 4),
)
# Each query field's visible label, so a message names what the reader sees on the form.
FIELD_LABELS = {
    "tier": "Tier",
    "prices_as_of": "Prices as of",
    "tier_a": "A: Tier",
    "tier_b": "B: Tier",
    "ttft_s_max": "TTFT ≤ (s)",
    "ttft_percentile": "TTFT percentile",
    "interactivity_min": "Interactivity p50 ≥ (tok/s/user)",
    "e2el_s_max": "E2EL p99 ≤ (s)",
    "min_success_pct": "Success ≥ (%)",
    "workload_unit": "Workload in",
    "tokens_per_day": "Tokens/day",
    "input_tokens_per_day": "Input tokens/day",
    "output_tokens_per_day": "Output tokens/day",
    "peak_requests_per_s": "Peak requests/s",
    "length_mix": "Length mix",
    "sell_input_usd_per_mtok": "You sell input at ($/Mtok)",
    "sell_cached_input_usd_per_mtok": "You sell cached input at ($/Mtok)",
    "sell_output_usd_per_mtok": "You sell output at ($/Mtok)",
    "name": "Name",
    "profile": "Profile",
    "requests_per_day": "Requests/day",
    "input_tokens": "Input tokens",
    "output_tokens": "Output tokens",
    "cache_hit_rate": "Prefix-cache hit rate",
    "peak_to_average": "Peak ÷ average",
    "headroom": "Headroom",
    "gpus_per_node": "GPUs/node",
    "token_kind": "Throughput counts",
    "capex_accelerator": "Apply to",
    "throughput_ratio": "Throughput A ÷ B",
    "claimed_cost_ratio": "Cost ratio claimed",
    "comparison": "Cost ratio claimed (comparison)",
    "accelerator_a": "A: Accelerator",
    "accelerator_b": "B: Accelerator",
    "price_a": "A: own $/GPU-hr",
    "price_b": "B: own $/GPU-hr",
    **{name: label for name, label, _ in CAPEX_FIELDS},
}
TIERS = [tier.value for tier in Tier]


def field_label(field: str) -> str:
    if field in FIELD_LABELS:
        return FIELD_LABELS[field]
    if field.startswith(PRICE_PREFIX):
        return f"{field.removeprefix(PRICE_PREFIX).upper()} own $/GPU-hr"
    return field


def unknown_tier(value: str, book: Mapping[str, AcceleratorPrices]) -> str:
    """What to say of a tier no price in the book has ("" for a known or blank one), so it is
    never silently priced as "—" everywhere (a tier only some accelerators lack stays a note
    on their rows)."""
    known = set(TIERS) | {tier for prices in book.values() for tier in prices.usd_per_gpu_hour}
    if not value or value in known:
        return ""
    choices = ", ".join(TIER_LABELS.get(t, t) for t in sorted(known))
    return f"no accelerator has a “{value}” price (tiers: {choices})"


class Text(forms.Field):
    """A name or a choice as typed ("" when blank); stripped only where `strip` says. Unlike
    CharField it takes a NUL byte as it comes: what a name matches is the page's business."""

    default_error_messages = {"required": "is required"}

    def __init__(self, *, strip: bool = False, required: bool = False, **kwargs: Any) -> None:
        super().__init__(required=required, **kwargs)
        self.strip = strip

    def to_python(self, value: Any) -> str:
        text = "" if value is None else str(value)
        return text.strip() if self.strip else text


class Number(forms.Field):
    """A figure as typed: blank is None; `thousands` drops the commas of "2,000,000" (the
    calculator's; the claim page never took them)."""

    default_error_messages = {
        "required": "is required",
        "invalid": "must be a number (got %(value)r)",
        "not_finite": "must be a finite number",
    }

    def __init__(self, *, thousands: bool = False, required: bool = False, **kwargs: Any) -> None:
        super().__init__(required=required, **kwargs)
        self.thousands = thousands

    def to_python(self, value: Any) -> float | None:
        text = (value or "").strip()
        if self.thousands:
            text = text.replace(",", "")
        if not text:
            return None
        try:
            number = float(text)
        except ValueError:
            raise ValidationError(
                self.error_messages["invalid"], code="invalid", params={"value": text}
            ) from None
        if not math.isfinite(number):
            raise ValidationError(self.error_messages["not_finite"], code="not_finite")
        return number


class Ratio(Number):
    """A ratio the claim states: required and above zero, quoted as typed when it is not."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=True, **kwargs)

    def clean(self, value: Any) -> float:
        number = super().clean(value)
        if number <= 0:
            raise ValidationError(
                "must be greater than zero (got %(value)s)", code="min", params={"value": value}
            )
        return number


def not_negative(value: float) -> None:
    """The cost model's rule for a price (require_non_negative), as a field's validator."""
    try:
        require_non_negative("price", value)
    except CostInputError as error:
        raise ValidationError(error.message, code="min") from None


def own_price() -> Number:
    """An own price as typed, in the calculator's query or the profile it is saved to: blank
    is none, "2,000" is 2000, and it is finite and not negative."""
    return Number(thousands=True, validators=[not_negative])


class AnyTokenKind(forms.Field):
    """Which tokens a throughput counts; any other value is output tokens, unsaid (the claim
    page has no field for it to name)."""

    def to_python(self, value: Any) -> TokenKind:
        try:
            return TokenKind(value)
        except ValueError:
            return TokenKind.OUTPUT


class CostForm(forms.Form):
    """A cost page's query: its problems as (field, message), the model's refusals among them."""

    def fail(self, field: str, message: str) -> None:
        """A refusal (often the cost model's, CostInputError) under the field it names; a
        field already refused keeps its first message, so no value is explained twice."""
        name = field if field in self.fields else None
        if name is None or name not in self.errors:
            self.add_error(name, message)

    @contextmanager
    def refusals(self) -> Iterator[None]:
        """Runs the cost model: a refusal (CostInputError) ends the block and is the problem
        of the field it names."""
        try:
            yield
        except CostInputError as error:
            self.fail(error.field, error.message)

    def problems(self) -> list[FieldError]:
        return [
            FieldError(name, message)
            for name, messages in self.errors.items()
            for message in messages
        ]


def state(params: Mapping[str, str]) -> dict[str, str]:
    """The calculator's state: defaults overlaid with what the query string gives, own prices
    (`price_<SKU>`) included where not blank."""
    values = {name: params.get(name, default) for name, default in DEFAULTS.items()}
    for name, value in params.items():
        if name.startswith(PRICE_PREFIX) and value.strip():
            values[name] = value
    return values


class ProcurementQuery(CostForm):
    """/costs/'s query string, the page's whole state (`data`, defaults filled in): read once
    per request for the page, its CSV/JSON downloads and the API's table.

    `book` gives the all-in kW of an accelerator a capex + opex price leaves it out of;
    `shapes` the (input, output) tokens of the scenarios a length mix may name."""

    tier = Text(strip=True, required=True)
    token_kind = forms.TypedChoiceField(
        choices=[(kind.value, kind.value) for kind in TokenKind],
        coerce=TokenKind,
        error_messages={
            "required": "must be input, output or total",
            "invalid_choice": "must be input, output or total",
        },
    )
    workload_unit = Text(strip=True)

    def __init__(
        self,
        params: Mapping[str, str],
        book: Mapping[str, AcceleratorPrices] | None = None,
        *,
        profile: ProfiledQuery | None = None,
        shapes: Mapping[str, tuple[float, float]] | None = None,
    ) -> None:
        super().__init__(state(params))
        self.book, self.shapes, self.profile = book or {}, shapes or {}, profile
        prices = [name for name in self.data if name.startswith(PRICE_PREFIX)]
        for name in DEFAULTS:
            if name not in self.fields:
                self.fields[name] = Text() if name in TEXT_FIELDS else Number(thousands=True)
        for name in prices:
            self.fields[name] = own_price()
        # The order the page lists problems in, as it always has: the figures', then the
        # token kind's, the tier's and the own prices'.
        numbers = [name for name in DEFAULTS if name not in TEXT_FIELDS]
        self.order_fields([*numbers, "token_kind", "tier", *prices])
        for name, field in self.fields.items():
            field.label = field_label(name)

    def clean(self) -> dict[str, Any]:
        """What needs several fields: the SLO, the workload in requests, the capex price."""
        data = self.cleaned_data
        # A figure left blank or refused is None, as the model reads a missing one.
        numbers = {n: data.get(n) for n, field in self.fields.items() if isinstance(field, Number)}
        pct = 99.0 if numbers["min_success_pct"] is None else numbers["min_success_pct"]
        if not 0 <= pct <= 100:
            self.fail("min_success_pct", f"must be between 0 and 100 (got {pct:g})")
        with self.refusals():
            data["slo"] = Slo.of(
                ttft_s_max=numbers["ttft_s_max"],
                ttft_percentile=data["ttft_percentile"] or "p99",
                interactivity_min=numbers["interactivity_min"],
                e2el_s_max=numbers["e2el_s_max"],
                # Refused above when out of range; clamped, the SLO's bounds are still checked.
                min_success_rate=min(max(pct, 0.0), 100.0) / 100.0,
            )
        unit = data["workload_unit"] or "requests_per_day"
        if unit not in WORKLOAD_UNITS:
            message = f"must be one of {', '.join(WORKLOAD_UNITS)} (got {unit!r})"
            self.fail("workload_unit", message)
            unit = "requests_per_day"  # its figure is still asked for
        data["conversions"] = ()
        if data["length_mix"].strip():
            with self.refusals():
                mixed_in, mixed_out, step = length_mix(data["length_mix"], self.shapes)
                numbers["input_tokens"], numbers["output_tokens"] = mixed_in, mixed_out
                data["conversions"] = (step,)
        for required in (*UNIT_FIELDS[unit], "input_tokens", "output_tokens"):
            if numbers[required] is None:
                self.fail(required, "is required")
        if not self.errors:  # sized only when every value checked so far stands
            with self.refusals():
                data["workload"], steps = sized_workload(unit, numbers, data["token_kind"])
                data["conversions"] += steps
        gpus = numbers["gpus_per_node"]
        if gpus is None or gpus < 1 or gpus != int(gpus):
            self.fail("gpus_per_node", "must be a whole number of at least 1")
        for name in SELL_FIELDS:
            with self.refusals():
                if numbers[name] is not None:
                    require_non_negative(name, numbers[name])
        data["capex_accelerator"] = data["capex_accelerator"].strip().upper()
        data["capex"] = None
        with self.refusals():
            data["capex"] = capex_price(data["capex_accelerator"], numbers, self.book)
        return data

    def inputs(self) -> ProcurementInputs | None:
        """What the plan is computed from, or None while a value is refused."""
        if not self.is_valid():
            return None
        data = self.cleaned_data
        own_prices = {
            name.removeprefix(PRICE_PREFIX).upper(): data[name]
            for name in self.fields
            if name.startswith(PRICE_PREFIX) and data[name] is not None
        }
        return ProcurementInputs(
            tier=data["tier"],
            own_prices=own_prices,
            token_kind=data["token_kind"],
            slo=data["slo"],
            workload=data["workload"],
            gpus_per_node=int(data["gpus_per_node"]),
            capex_accelerator=data["capex_accelerator"] if data["capex"] else "",
            capex=data["capex"],
            model=data["model"].strip(),
            scenario=data["scenario"].strip(),
            conversions=data["conversions"],
            sell={name: data[name] for name in SELL_FIELDS},
            profile=self.profile.profile if self.profile else "",
            profile_skus=self.profile.profile_skus if self.profile else frozenset(),
        )


# The claim checker's blank form. Its page opens on a claim of the ledger instead (its figures,
# sides, basis tier, date and workload: apps/claims/checker.py), so no claim's numbers are here.
CLAIM_DEFAULTS: dict[str, str] = {
    "claim": "",
    "throughput_ratio": "",
    "claimed_cost_ratio": "",
    "comparison": Comparison.BELOW.value,
    "accelerator_a": "",
    "tier_a": Tier.OWNING_HYPERSCALER.value,
    "price_a": "",
    "accelerator_b": "",
    "tier_b": Tier.OWNING_HYPERSCALER.value,
    "price_b": "",
    # The reference prices, by date or set name (apps/costs/reference.py); blank: the newest.
    "prices_as_of": "",
    "ttft_s_max": "",
    # The stored runs the claim is tried against: the one answer's question (its default
    # floor too, shown in the field so that clearing it asks for none).
    "interactivity_min": DEFAULT_QUESTION["interactivity_min"],
    **{
        name: DEFAULT_QUESTION[name]
        for name in ("model", "scenario", "precision", "spec", "engine")
    },
}


# The cost model calls a side's price usd_per_gpu_hour_<side>; the page calls it price_<side>.
_PAGE_FIELDS = {"usd_per_gpu_hour_a": "price_a", "usd_per_gpu_hour_b": "price_b"}


def _page_field(field: str) -> str:
    """The page's name for a field the cost model names."""
    return _PAGE_FIELDS.get(field, field)


class ClaimQuery(CostForm):
    """/costs/claim/'s query string: the claim (A's throughput relative to B's, the cost ratio
    claimed and how), each side's accelerator and price (own, else its tier's), and the SLO
    stored runs are paired at; read once per request for the page and its verdict image.

    `book` prices the tiers; `own_prices` (the organization's active profile, by SKU) give a
    side its own price unless one is typed."""

    # The order of the fields is the order the page lists their problems in.
    tier_a = Text()
    tier_b = Text()
    throughput_ratio = Ratio()
    claimed_cost_ratio = Ratio()
    price_a = Number()
    price_b = Number()
    ttft_s_max = Number()
    interactivity_min = Number()
    comparison = forms.TypedChoiceField(
        choices=[(c.value, c.value) for c in Comparison],
        coerce=Comparison,
        error_messages={"required": "must be <, <= or ~", "invalid_choice": "must be <, <= or ~"},
    )
    accelerator_a = Text()
    accelerator_b = Text()
    model = Text(strip=True)
    scenario = Text(strip=True)
    precision = Text(strip=True)
    spec = Text(strip=True)
    engine = Text(strip=True)
    token_kind = AnyTokenKind()

    def __init__(
        self,
        params: Mapping[str, str],
        *,
        book: Mapping[str, AcceleratorPrices],
        own_prices: Mapping[str, float],
    ) -> None:
        values = {name: params.get(name, default) for name, default in CLAIM_DEFAULTS.items()}
        for side in ("a", "b"):
            sku = values[f"accelerator_{side}"].upper()
            if sku in own_prices and not values[f"price_{side}"]:
                values[f"price_{side}"] = f"{own_prices[sku]:g}"
        super().__init__({**values, "token_kind": params.get("token_kind", "output")})
        self.values = values  # what the form's inputs show
        self.book = book
        for name, field in self.fields.items():
            field.label = field_label(name)

    def _known_tier(self, name: str) -> str:
        message = unknown_tier(self.cleaned_data[name], self.book)
        if message:
            raise ValidationError(message)
        return self.cleaned_data[name]

    def clean_tier_a(self) -> str:
        return self._known_tier("tier_a")

    def clean_tier_b(self) -> str:
        return self._known_tier("tier_b")

    def clean(self) -> dict[str, Any]:
        """Each side's price and the SLO; a refused own price leaves the side its tier's."""
        data = self.cleaned_data
        for side in ("a", "b"):
            try:
                data[f"side_{side}"] = choose_price(
                    self.book,
                    usd_per_gpu_hour=data.get(f"price_{side}"),
                    accelerator=self.values[f"accelerator_{side}"],
                    tier=self.values[f"tier_{side}"],
                )
            except CostInputError as error:
                self.fail(_page_field(f"{error.field}_{side}"), error.message)
        with self.refusals():
            data["slo"] = Slo.of(
                ttft_s_max=data.get("ttft_s_max"), interactivity_min=data.get("interactivity_min")
            )
        return data

    def questions(self) -> list[Asked]:
        """The stored runs' questions for the one answer (a valid form only): A against B
        at the claim's SLO among the asked facts, and, when those pin the engine or
        speculative decoding, among any (what then differs is listed)."""
        data, values = self.cleaned_data, self.values
        asked = Facts(
            values["precision"] or "any", values["spec"] or "any", values["engine"] or "any"
        )
        wider = Facts(asked.precision)
        bounds = {
            "ttft_s_max": data.get("ttft_s_max"),
            "ttft_percentile": "p99",
            "interactivity_min": data.get("interactivity_min"),
        }
        return [
            Asked(
                model=values["model"],
                scenario=values["scenario"],
                a=values["accelerator_a"].upper(),
                b=values["accelerator_b"].upper(),
                facts=facts,
                bounds=bounds,
                basis=data["token_kind"],
                prices_as_of=values["prices_as_of"],
            )
            for facts in ([asked, wider] if wider != asked else [asked])
        ]

    def page(self, answers: Sequence[Answer] = (), notes: Sequence[str] = ()) -> ClaimPage:
        """The claim checked against every tier pairing and the stored runs' `answers`, or
        the problems that keep it from being checked."""
        if not self.is_valid():
            return ClaimPage(self.values, tuple(self.problems()))
        data, values = self.cleaned_data, self.values
        side_a, side_b = data["side_a"], data["side_b"]
        claim = Claim(
            throughput_ratio=data["throughput_ratio"],
            usd_per_gpu_hour_a=side_a.usd_per_gpu_hour,
            usd_per_gpu_hour_b=side_b.usd_per_gpu_hour,
            claimed_cost_ratio=data["claimed_cost_ratio"],
            comparison=data["comparison"],
            label_a=values["accelerator_a"] or "A",
            label_b=values["accelerator_b"] or "B",
        )
        accelerators = (values["accelerator_a"], values["accelerator_b"])
        try:
            check = check_with_assumptions(claim, accelerators, self.book, answers)
        except CostInputError as error:
            return ClaimPage(values, (FieldError(_page_field(error.field), error.message),))
        return ClaimPage(
            values, (), check, side_a, side_b, data["slo"], tuple(answers), tuple(notes)
        )
