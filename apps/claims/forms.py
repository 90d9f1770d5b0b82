"""The claims ledger's subscription form: a channel and a target its delivery can reach
(regressions' own check), for every claim or one."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.accounts.models import Organization
from apps.claims.models import ClaimSubscription
from apps.regressions.forms import target_help, target_refused


class ClaimSubscriptionForm(forms.ModelForm):
    class Meta:
        model = ClaimSubscription
        fields = ["name", "channel", "target", "claim"]

    def __init__(self, *args: Any, org: Organization | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.org = org
        self.fields["claim"].empty_label = "every claim"
        self.fields["target"].help_text = target_help(org)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        target = (data.get("target") or "").strip()
        if refused := target_refused(data.get("channel"), target, self.org):
            self.add_error("target", refused)
        return data
