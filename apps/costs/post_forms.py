"""What the cost page POSTs, as Django forms: a price profile to save, the profile to make
active, and a page to save.

A price is read by the same field as in /costs/'s query string (forms.own_price), so it is
refused in the same words wherever it is typed. What may be saved beyond that (a name, a
kind, at least one price) is the service's to say (apps/costs/services.py). A view answers
a form's `problems()` as it answers the service's refusal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

from django import forms

from apps.costs.forms import CostForm, Text, own_price
from apps.costs.models import SavedPage
from apps.costs.procurement_inputs import PRICE_PREFIX, SELL_FIELDS

# PostgreSQL stores no NUL byte, so what is saved (or looked up) cannot have one.
NUL_BYTE = "must not contain a NUL byte"


class Saved(forms.CharField):
    """Text to be saved or looked up, as typed ("" when not posted), without a NUL byte."""

    def __init__(self) -> None:
        super().__init__(
            strip=False,
            required=False,
            error_messages={"null_characters_not_allowed": NUL_BYTE},
        )


def _last_values(data: Mapping[str, str]) -> dict[str, str]:
    """Each posted field's last value, as request.POST.get reads it."""
    return {name: data.get(name) or "" for name in data}


class ProfileForm(CostForm):
    """A price profile as the page posts it: own $/GPU-hr as `price_<SKU>`, the $/Mtok the
    tokens are sold at, the profile's name and the /costs/ page to go back to."""

    name = Saved()
    next = Text()

    def __init__(self, data: Mapping[str, str]) -> None:
        super().__init__(_last_values(data))
        prices = [name for name in self.data if name.startswith(PRICE_PREFIX)]
        for name in [*prices, *SELL_FIELDS]:
            self.fields[name] = own_price()
        # Problems are listed own prices first, in the order they were posted.
        self.order_fields([*prices, *SELL_FIELDS])

    def clean(self) -> dict[str, Any]:
        """The own prices as the service takes them: $/GPU-hr by SKU, a blank one none."""
        data = self.cleaned_data
        data["usd_per_gpu_hour"] = {}
        for name in self.fields:
            if not name.startswith(PRICE_PREFIX):
                continue
            if "\x00" in name:
                self.fail(name, NUL_BYTE)  # its SKU would be saved too
            elif data.get(name) is not None:
                data["usd_per_gpu_hour"][name.removeprefix(PRICE_PREFIX)] = data[name]
        return data


class ActiveProfileForm(CostForm):
    """The profile to price every page with; blank switches profiles off."""

    profile = Saved()


# What a saved workload keeps of the page's query: its prices and SLO stay the opener's.
WORKLOAD_FIELDS = frozenset(
    {
        "workload_unit",
        "requests_per_day",
        "tokens_per_day",
        "input_tokens_per_day",
        "output_tokens_per_day",
        "peak_requests_per_s",
        "length_mix",
        "input_tokens",
        "output_tokens",
        "cache_hit_rate",
        "peak_to_average",
        "headroom",
        "gpus_per_node",
    }
)


class SavedPageForm(CostForm):
    """A page to save under a name: the whole comparison (the kind when none is posted) or
    its workload alone, as the page's query string."""

    name = Saved()
    kind = Text()  # the service names the kinds there are
    query = Saved()

    def __init__(self, data: Mapping[str, str]) -> None:
        super().__init__({"kind": SavedPage.Kind.COMPARISON, **_last_values(data)})

    def clean(self) -> dict[str, Any]:
        data = self.cleaned_data
        if data.get("kind") == SavedPage.Kind.WORKLOAD and "query" in data:
            pairs = parse_qsl(data["query"])
            data["query"] = urlencode([(k, v) for k, v in pairs if k in WORKLOAD_FIELDS])
        return data
