"""What the list pages' query forms share: a value the page cannot use is ignored and said,
with its filter's label, in the filters' order."""

from django import forms
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
