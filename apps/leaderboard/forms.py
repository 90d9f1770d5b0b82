"""The leaderboard's and /compare/'s query strings as Django forms: what a viewer may name,
each field's visible label, the message a bad value gets and the default shown instead.

A page binds its form once per request; the form's errors are the problems the page lists
(and the CSV/JSON forms answer 400 with), and `value(name)` is the cleaned value, or the
field's default where the value was missing or bad. The page cache asks the same form."""

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import QueryDict

from apps.costs.answer import STATED_LATENCY
from apps.costs.formulas import CostInputError
from apps.costs.reference import price_set
from apps.frame import label
from apps.leaderboard import charts, selectors
from apps.leaderboard.views.common import BASES
from apps.query_forms import FacetField, IsoDateField
from apps.runs.models import Run

# The visible label of each query field, so a message names what the reader sees.
FIELD_LABELS = {
    "model": "Model",
    "scenario": "Scenario",
    "tier": "Price tier",
    "sort": "Sort",
    "rule": "Rows show",
    "days": "N days",
    "basis": "Token basis",
    "y": "Chart y",
    "series": "Chart series",
    "page": "Page",
    "accelerator": "Accelerators",
    "engine": "Engines",
    "quantization": "Quantizations",
    "serving": "Serving",
    "since": "Runs from",
    "until": "Runs until",
    "prices_as_of": "Prices as of",
}
FACETS = ("accelerator", "engine", "quantization", "serving")
# The board's opt-in switches: any other value (or none) is off.
FLAG_ON = frozenset({"1", "on", "true"})
FORMATS = ("csv", "json")
# The board's own defaults (selectors.Board), so a bad value falls back to what no value gives.
DEFAULTS = selectors.Board()


@dataclass(frozen=True)
class BoardChoices:
    """What a board query may name for one viewer: the models, price tiers and facet values
    of the runs they may see."""

    models: list[str]
    tiers: list[str]
    facets: dict[str, list[str]]


class QueryField(forms.Field):
    """A query-string field: never required, and its default stands in for a missing value
    (`fallback` for a bad one, which the form reports)."""

    def __init__(self, *args: Any, default: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, required=False, **kwargs)
        self.default = default

    def clean(self, value: Any) -> Any:
        cleaned = super().clean(value)
        return self.default if cleaned in self.empty_values else cleaned

    def fallback(self, raw: Any) -> Any:
        return self.default


class OneOf(QueryField, forms.ChoiceField):
    """One value from a list (a model, a price tier, a sort); a bad one is named with the
    choices, as people read them."""

    default_error_messages = {
        "invalid_choice": (
            "“%(value)s” is not a choice here (choices: %(shown)s); showing the default."
        ),
    }

    def __init__(self, allowed: Iterable[str] = (), **kwargs: Any) -> None:
        super().__init__(choices=[(a, label(a)) for a in allowed], **kwargs)

    def validate(self, value: Any) -> None:
        if value and not self.valid_value(value):
            shown = ", ".join(str(name) for _, name in self.choices)
            raise ValidationError(
                self.error_messages["invalid_choice"],
                code="invalid_choice",
                params={"value": value, "shown": shown},
            )


class WholeNumber(QueryField):
    """A page or a number of days: a whole number of at least 1."""

    default_error_messages = {
        "invalid": "“%(value)s” is not a whole number of at least 1; showing the default.",
    }

    def to_python(self, value: Any) -> int | None:
        if value in self.empty_values:
            return None
        try:
            number = int(value) if value.isdigit() else 0
        except ValueError:  # a digit int() does not read, like "²"
            number = 0
        if number < 1:
            raise ValidationError(
                self.error_messages["invalid"], code="invalid", params={"value": value}
            )
        return number


class SloLimit(QueryField):
    """An SLO bound's limit: a positive number, or "none" for no bound (None); missing
    leaves the page's default. A bad one is refused, naming the field."""

    default_error_messages = {
        "invalid": "“%(value)s” is not a positive number (or none)",
    }
    NONE = "none"

    def to_python(self, value: Any) -> float | str | None:
        if value in self.empty_values:
            return None
        if str(value).strip().lower() == self.NONE:
            return self.NONE
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = math.nan
        if not math.isfinite(number) or number <= 0:
            raise ValidationError(
                self.error_messages["invalid"], code="invalid", params={"value": value}
            )
        return number


class Day(QueryField, IsoDateField):
    """A date like 2026-11-30; a bad one is ignored (no bound)."""

    default_error_messages = {"invalid": "“%(value)s” is not a date like 2026-11-30; ignored."}


class PriceSetChoice(QueryField):
    """A reference price set by name, or the date whose set priced it (apps/costs/reference.py);
    a bad one is named with the sets, and the newest set prices the page."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(default="", **kwargs)

    def validate(self, value: Any) -> None:
        if value:
            try:
                price_set(value)
            except CostInputError as exc:
                raise ValidationError(f"{exc.message}; priced with the newest set.") from None


class ScenarioSlug(QueryField):
    """A scenario slug among those with runs the viewer may see."""

    default_error_messages = {
        "unknown": "“%(value)s” is not a known scenario; showing the model's first one.",
    }

    def __init__(self, scenarios: QuerySet | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenarios = scenarios

    def validate(self, value: Any) -> None:
        # A NUL byte is no slug, and PostgreSQL refuses it in a query: unknown, not asked.
        if value and (
            "\x00" in value
            or self.scenarios is None
            or not self.scenarios.filter(slug=value).exists()
        ):
            raise ValidationError(
                self.error_messages["unknown"], code="unknown", params={"value": value}
            )


class Facet(QueryField, FacetField):
    """Any number of one facet's values (accelerators, engines...) as a tuple: the unknown
    ones are named and ignored, the known ones kept."""

    widget = forms.MultipleHiddenInput
    default_error_messages = {"invalid_choice": "no run has %(value)s; ignored."}

    def __init__(self, allowed: Iterable[str] = (), **kwargs: Any) -> None:
        super().__init__(choices=[(a, a) for a in allowed], default=(), **kwargs)

    def to_python(self, value: Any) -> tuple[str, ...]:
        return tuple(super().to_python(value))

    def fallback(self, raw: Any) -> tuple[str, ...]:
        return tuple(self.known(raw))


class Flag(QueryField):
    """An opt-in switch (?simulated=1): on for 1, on or true, off for anything else."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(default=False, **kwargs)

    def to_python(self, value: Any) -> bool:
        return value in FLAG_ON


class Format(QueryField):
    """A download's format (csv or json); anything else is the page."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(default="", **kwargs)

    def to_python(self, value: Any) -> str:
        return value if value in FORMATS else ""


class Origins(QueryField):
    """Who measured the runs shown (Run.Origin); values that are no origin are dropped."""

    widget = forms.MultipleHiddenInput

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(default=(), **kwargs)

    def to_python(self, value: Any) -> tuple[str, ...]:
        return tuple(v for v in value or () if v in Run.Origin.values)


class DefaultedQuery(forms.Form):
    """A page's query string: its problems, and each field's value or default."""

    def value(self, name: str) -> Any:
        """The cleaned value, or the field's fallback where the value was bad."""
        if name in self.errors:
            return self.fields[name].fallback(self[name].data)
        return self.cleaned_data[name]

    def problems(self) -> list[dict[str, str]]:
        """Each bad value with its query field and visible label, in the fields' order."""
        return [
            {"field": name, "label": str(self.fields[name].label), "message": message}
            for name, messages in self.errors.items()
            for message in messages
        ]


class BoardQuery(DefaultedQuery):
    """The leaderboard's query (and its embed's): validated once against what the viewer may
    name (BoardChoices), for the page, its downloads and the page cache alike."""

    # The order of the fields is the order the page lists their problems in.
    model = OneOf()
    tier = OneOf(default=DEFAULTS.tier)
    prices_as_of = PriceSetChoice()
    sort = OneOf(selectors.SORTS, default=DEFAULTS.sort)
    rule = OneOf(selectors.RUN_RULES, default=DEFAULTS.rule)
    basis = OneOf(BASES, default=DEFAULTS.basis)
    y = OneOf(charts.Y_AXES, default="tput_per_gpu")
    series = OneOf(charts.SERIES, default="group")
    days = WholeNumber(default=DEFAULTS.days)
    page = WholeNumber(default=DEFAULTS.page)
    scenario = ScenarioSlug()
    accelerator = Facet()
    engine = Facet()
    quantization = Facet()
    serving = Facet()
    since = Day()
    until = Day()
    simulated = Flag()
    unchecked = Flag()
    official = Flag()
    projected = Flag()
    unofficial = Flag()
    all = Flag()  # the chart's every point, not only the Pareto front
    origin = Origins()
    format = Format()

    def __init__(self, data: QueryDict, *, choices: BoardChoices, scenarios: QuerySet) -> None:
        super().__init__(data)
        self.choices = choices
        self.fields["model"].choices = [(m, label(m)) for m in choices.models]
        self.fields["tier"].choices = [(t, label(t)) for t in choices.tiers]
        self.fields["scenario"].scenarios = scenarios
        for name in FACETS:
            self.fields[name].choices = [(v, v) for v in choices.facets[name]]
        for name, field in self.fields.items():
            field.label = FIELD_LABELS.get(name, name)


class CompareQuery(DefaultedQuery):
    """/compare/'s query: 2 to 4 deployment ids, and the scenario, tier and basis to compare
    them in (a bad tier or basis shows the default, as on the board)."""

    d = forms.Field(required=False, widget=forms.MultipleHiddenInput)
    scenario = QueryField()
    tier = OneOf(default=DEFAULTS.tier)
    prices_as_of = PriceSetChoice(label=FIELD_LABELS["prices_as_of"])
    basis = OneOf(BASES, default=DEFAULTS.basis)
    # The SLO the answer compares at (apps/costs/answer.py): the floor here, the shorthand
    # latency ceiling added after the class; missing: the scenario's bounds and, where they
    # set no floor, the answer's default one.
    interactivity_min = SloLimit(label="Interactivity p50 ≥ (tok/s/user)")
    format = Format()

    MAX_DEPLOYMENTS = 4

    def __init__(self, data: QueryDict, *, tiers: list[str]) -> None:
        super().__init__(data)
        self.fields["tier"].choices = [(t, label(t)) for t in tiers]

    def clean_scenario(self) -> str | None:
        # A NUL byte is no slug, and PostgreSQL refuses it in a query: the common scenario.
        slug = self.cleaned_data["scenario"]
        return None if slug and "\x00" in slug else slug

    def clean_d(self) -> list[int]:
        """The first four distinct ids; a value that is no number names no deployment."""
        ids = []
        for value in self.cleaned_data["d"] or ():
            try:
                ids.append(int(value))
            except ValueError:
                continue
        return list(dict.fromkeys(ids))[: self.MAX_DEPLOYMENTS]


# The shorthand latency ceiling, under the query name the API and /answer/ take too: that name
# is the registry's (workers/figures.py), so the field is added by it, not declared by hand.
CompareQuery.base_fields[STATED_LATENCY.ceiling_param] = SloLimit(
    label=f"{STATED_LATENCY.label} ≤ (s)"
)
