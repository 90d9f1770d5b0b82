"""The regressions pages' forms: the change-point list's query string (which filter values it
accepts and the words that explain one it ignores) and an alert subscription's fields."""

from typing import Any

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError

from apps.accounts.models import Organization
from apps.accounts.scoping import member_addresses
from apps.catalog.selectors import deployments_visible, scenario_list
from apps.query_forms import QueryForm
from apps.regressions import webhooks
from apps.regressions.models import METRICS, ChangePoint, Subscription


class PlainIntegerField(forms.IntegerField):
    """A whole number as int() reads it; Django's field would also take "5.0" as 5."""

    def to_python(self, value: Any) -> int | None:
        if value in self.empty_values:
            return None
        try:
            return int(value)
        except (TypeError, ValueError):
            raise ValidationError(
                self.error_messages["invalid"], code="invalid", params={"value": value}
            ) from None


def _text(label: str) -> forms.CharField:
    # Named values (a model, a scenario ...) are matched as sent: no stripping.
    return forms.CharField(label=label, required=False, strip=False)


def _choice(label: str, values: list[str]) -> forms.ChoiceField:
    return forms.ChoiceField(
        label=label,
        required=False,
        choices=[(v, v) for v in values],
        error_messages={"invalid_choice": "“%(value)s” is not one of the choices; ignored."},
    )


class RegressionListQuery(QueryForm):
    """`/regressions/?model=&accelerator=&engine=&organization=&direction=&metric=&scenario=
    &deployment=`: the names are matched as they come (an unknown one matches nothing); a
    direction, metric or deployment the page cannot mean is ignored and said. `page` stays
    with the pager (apps.htmx.paged)."""

    model = _text("Model")
    accelerator = _text("Accelerator")
    engine = _text("Engine")
    organization = _text("Organization")
    direction = _choice("Direction", ChangePoint.Direction.values)
    metric = _choice("Metric", [m[0] for m in METRICS])
    scenario = _text("Scenario")
    deployment = PlainIntegerField(
        label="Deployment",
        required=False,
        error_messages={"invalid": "“%(value)s” is not a number; ignored."},
    )

    def values(self) -> dict[str, Any]:
        """Every field's value, an ignored one as no filter ("" or, for deployment, None)."""
        self.is_valid()
        return {
            name: self.cleaned_data.get(name, None if name == "deployment" else "")
            for name in self.fields
        }


def target_refused(channel: str | None, target: str, org: Organization | None) -> str:
    """Why an alert may not go to `target` on `channel` ("" when it may): a webhook or Slack
    URL the delivery's own check refuses, or an address that is not a verified one of the
    organization's members. Every subscription form asks this (regressions, the claims
    ledger)."""
    if channel in (Subscription.Channel.WEBHOOK, Subscription.Channel.SLACK):
        try:
            webhooks.check(target)
        except webhooks.TargetRefused as exc:
            return str(exc)
    elif channel == Subscription.Channel.EMAIL:
        for address in Subscription(target=target).addresses or [""]:
            try:
                forms.EmailField().clean(address)
            except forms.ValidationError:
                return f"“{address}” is not an email address"
            if org is None or address.lower() not in member_addresses(org):
                return f"“{address}” is not a verified address of one of your members"
    return ""


def target_help(org: Organization | None) -> str:
    """What the target field takes, with the addresses an email alert may go to."""
    addresses = sorted(member_addresses(org)) if org is not None else []
    email = (
        f"email: verified addresses of your members ({', '.join(addresses[:5])}"
        f"{' …' if len(addresses) > 5 else ''})"
        if addresses
        else "email: none of your members has a verified address yet"
    )
    return f"webhook or Slack: a public http(s) URL; {email}; several separated by commas"


class SubscriptionForm(forms.ModelForm):
    """An alert subscription as an admin adds it: a target its channel can deliver to, and a
    persistence rule that can be met."""

    class Meta:
        model = Subscription
        fields = [
            "name",
            "channel",
            "target",
            "model_name",
            "accelerator",
            "deployment",
            "scenario",
            "regressions",
            "improvements",
            "persist_needed",
            "persist_window",
        ]

    def __init__(self, *args: Any, org: Organization | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.org = org
        # The choices (and what a POST may pick) are what the organization may see: public
        # deployments and scenarios and its own, never another organization's private model,
        # engine version or scenario name (accounts.scoping through the catalog's selectors).
        self.fields["deployment"].queryset = deployments_visible(org=org).select_related(
            "model", "accelerator", "engine"
        )
        self.fields["scenario"].queryset = scenario_list(org=org)
        # Said before submitting, not after: who an email alert may go to.
        self.fields["target"].help_text = target_help(org)

    def over_budget(self) -> str:
        """Why the organization may add no more subscriptions (ORG_MAX_SUBSCRIPTIONS), or ""."""
        most = settings.ORG_MAX_SUBSCRIPTIONS
        if self.org is None or Subscription.objects.filter(org=self.org).count() < most:
            return ""
        return (
            f"your organization has {most} subscriptions, the most it may "
            "(ORG_MAX_SUBSCRIPTIONS); remove one to add another"
        )

    def clean(self):
        data = super().clean()
        if refused := self.over_budget():
            raise ValidationError(refused)
        channel, target = data.get("channel"), (data.get("target") or "").strip()
        if refused := target_refused(channel, target, self.org):
            self.add_error("target", refused)
        needed, window = data.get("persist_needed"), data.get("persist_window")
        if needed is not None and window is not None and not 1 <= needed <= window:
            self.add_error("persist_needed", "must be between 1 and the window's size")
        if not data.get("regressions") and not data.get("improvements"):
            self.add_error("regressions", "subscribe to regressions, improvements or both")
        return data
