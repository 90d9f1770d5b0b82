"""What the pages' query forms share: a date as ISO 8601, a facet of any number of values, and
a value the page cannot use ignored and said with its filter's label."""

from collections.abc import Sequence
from datetime import date
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.forms.utils import ErrorList


class QueryForm(forms.Form):
    def problems(self) -> list[str]:
        """Each ignored value explained with its filter's label, then what concerns several
        filters at once (a date range that runs backwards, say)."""
        self.is_valid()
        said = [
            f"{self.fields[name].label}: {message}"
            for name in self.fields
            for message in self.errors.get(name, ErrorList())
        ]
        return said + list(self.non_field_errors())


class IsoDateField(forms.DateField):
    """A date written as ISO 8601 (what date.fromisoformat reads), the one form the filter's
    date inputs send; the locale's other formats would make a typo mean another day."""

    def to_python(self, value: Any) -> date | None:
        if value in self.empty_values:
            return None
        try:
            return date.fromisoformat(value)
        except (TypeError, ValueError):
            raise ValidationError(
                self.error_messages["invalid"], code="invalid", params={"value": value}
            ) from None


class FacetField(forms.MultipleChoiceField):
    """Any number of a facet's values; every unknown one is named in one message (Django's
    field stops at the first), and empty values are dropped, as a blank checkbox sends none."""

    def to_python(self, value: Any) -> Sequence[str]:
        return [str(v) for v in super().to_python(value) if v]

    def validate(self, value: list[str]) -> None:
        unknown = [v for v in value if not self.valid_value(v)]
        if unknown:
            raise ValidationError(
                self.error_messages["invalid_choice"],
                code="invalid_choice",
                params={"value": ", ".join(unknown)},
            )

    def known(self, value: list[str]) -> list[str]:
        return [v for v in self.to_python(value) if self.valid_value(v)]
