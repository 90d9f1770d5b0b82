"""The accuracy pages' query strings as forms: the results a page names, the trade it charts
and the margin a paired comparison is judged against, with what each is when left out."""

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from apps.accuracy.selectors import DEFAULT_MARGIN_POINTS

MARGIN_NEGATIVE = "The margin must be 0 points or more."
PICK_TWO = (
    "Pick a baseline (A) and a candidate (B) result in the table on the accuracy page, "
    "then press “Compare A and B (paired)”."
)


def _result_id(value: Any) -> int | None:
    # ASCII digits only: str.isdigit() also passes "²", which int() refuses.
    text = str(value)
    return int(text) if text.isascii() and text.isdigit() else None


class ResultIdField(forms.Field):
    """A stored result's id: a run of digits; anything else names no result."""

    default_error_messages = {"invalid": "“%(value)s” is not a result's id."}

    def to_python(self, value: Any) -> int | None:
        if value in self.empty_values:
            return None
        found = _result_id(value)
        if found is None:
            raise ValidationError(
                self.error_messages["invalid"], code="invalid", params={"value": value}
            )
        return found


class ResultIdsField(forms.Field):
    """The ids among the values sent; the others are left out without a word (the A/A pair
    is optional, so a bad one only means no A/A check)."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value: Any) -> list[int]:
        ids = (_result_id(v) for v in value or [])
        return [found for found in ids if found is not None]


class AccuracyIndexQuery(forms.Form):
    """`/accuracy/?model=&accelerator=&task=`: the trade to chart; each left empty is the
    newest result's (the view knows it)."""

    model = forms.CharField(required=False, strip=False)
    accelerator = forms.CharField(required=False, strip=False)
    task = forms.CharField(required=False, strip=False)

    def values(self) -> dict[str, str]:
        self.is_valid()
        return {name: self.cleaned_data.get(name, "") for name in self.fields}


class AccuracyCompareQuery(forms.Form):
    """`/accuracy/compare/?a=&b=&margin=&aa=&aa=`: baseline and candidate ids, the margin in
    points (an unreadable or non-finite one is the default; a negative one is refused), and
    optionally two ids of an A/A pair (the first two ids sent)."""

    a = ResultIdField(required=False)
    b = ResultIdField(required=False)
    margin = forms.FloatField(
        required=False, min_value=0, error_messages={"min_value": MARGIN_NEGATIVE}
    )
    aa = ResultIdsField(required=False)

    def values(self) -> dict[str, Any]:
        """Every field's value, an invalid one as none (the margin: the default)."""
        self.is_valid()
        values: dict[str, Any] = {"a": None, "b": None, "margin": None, "aa": []}
        values.update(self.cleaned_data)
        if values["margin"] is None:
            values["margin"] = DEFAULT_MARGIN_POINTS
        values["aa"] = values["aa"][:2]
        return values

    def refusal(self) -> str | None:
        """Why the page cannot compare, as far as the query alone tells: a negative margin."""
        self.is_valid()
        return MARGIN_NEGATIVE if self.has_error("margin", "min_value") else None
