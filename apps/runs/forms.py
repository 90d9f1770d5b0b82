"""The run list's query string (`/runs/`) as a form: which values it accepts, the words that
explain one it ignores, and what each field is when its value is ignored."""

from typing import Any

from django import forms

from apps.query_forms import FacetField, IsoDateField, QueryForm
from apps.runs.models import Run

# The facets a run is narrowed by, any number of values each (the form's multi fields).
FACETS = ("accelerator", "engine", "quantization")
RANGE_IGNORED = "Added from is after Added until: no run can match; the range is ignored."


def _facet(label: str) -> FacetField:
    return FacetField(
        label=label,
        required=False,
        error_messages={"invalid_choice": "no run has %(value)s; ignored."},
    )


def _date(label: str) -> IsoDateField:
    return IsoDateField(
        label=label,
        required=False,
        error_messages={"invalid": "“%(value)s” is not a date like 2026-11-30; ignored."},
    )


class RunListQuery(QueryForm):
    """`/runs/?provenance=&accelerator=…&engine=…&quantization=…&since=&until=`, with the
    facet values the viewer's runs take as the choices. `page` stays with the pager
    (apps.htmx.paged), which turns any bad page into the nearest one without a word."""

    provenance = forms.ChoiceField(
        label="Provenance",
        required=False,
        choices=[(v, v) for v in Run.Provenance.values],
        error_messages={"invalid_choice": "“%(value)s” is not one of the choices."},
    )
    accelerator = _facet("Accelerators")
    engine = _facet("Engines")
    quantization = _facet("Quantizations")
    since = _date("Added from")
    until = _date("Added until")

    def __init__(self, data: Any, *, facets: dict[str, list[str]]) -> None:
        super().__init__(data)
        for name in FACETS:
            self.fields[name].choices = [(v, v) for v in facets[name]]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        since, until = data.get("since"), data.get("until")
        if since and until and since > until:
            # Not one field's fault: said as it is, without a label, and both ends dropped.
            self.add_error(None, RANGE_IGNORED)
            data["since"] = data["until"] = None
        return data

    def values(self) -> dict[str, Any]:
        """Every field's value, with an invalid one ignored: no provenance or date, and only
        the known values of a facet."""
        self.is_valid()
        values: dict[str, Any] = {
            "provenance": None,
            **{name: self.fields[name].known(self[name].data) for name in FACETS},
            "since": None,
            "until": None,
        }
        values.update(self.cleaned_data)
        values["provenance"] = values["provenance"] or None
        return values
