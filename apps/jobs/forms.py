"""The endpoints page's form: register an endpoint for an existing deployment or for the one
its facts describe (what POST /api/v1/endpoints takes, as fields a person fills in)."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.catalog.labels import deployment_names
from apps.catalog.models import Accelerator, Deployment
from apps.jobs.models import Endpoint


class DeploymentChoiceField(forms.ModelChoiceField):
    """Deployments named as every picker names them (apps/catalog/labels.deployment_names):
    two can share every fact a name shows (they differ in flags), and a list must not offer
    two identical lines."""

    _names: dict[int, str] | None = None

    def _set_queryset(self, queryset) -> None:
        super()._set_queryset(queryset)
        self._names = None  # another list: named afresh

    queryset = property(forms.ModelChoiceField._get_queryset, _set_queryset)

    def label_from_instance(self, obj: Deployment) -> str:
        if self._names is None:
            self._names = deployment_names(
                self.queryset.select_related("model", "accelerator", "engine")
            )
        return self._names.get(obj.pk) or f"{obj} (#{obj.pk})"


class EndpointForm(forms.Form):
    name = forms.CharField(max_length=200, help_text="unique in your organization")
    url = forms.CharField(
        label="URL", max_length=2000, help_text="OpenAI-compatible base URL, inside the allowlist"
    )
    api = forms.ChoiceField(label="API", choices=Endpoint.Api.choices, initial="completions")
    served_model = forms.CharField(
        max_length=200, required=False, help_text="the name sent in requests (default: the model)"
    )
    api_key = forms.CharField(
        label="API key",
        max_length=4000,
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="stored encrypted, never shown again",
    )
    # Choices: the organization's pools and the service's (set in __init__); blank lets the
    # service choose one that exists (apps/jobs/selectors.pool_default).
    pool = forms.ChoiceField(
        required=False,
        help_text="where its jobs queue: blank takes pool.<accelerator>, or the only pool there is",
    )
    private = forms.BooleanField(required=False, help_text="its runs are your organization's")
    deployment = DeploymentChoiceField(
        queryset=Deployment.objects.none(),
        required=False,
        empty_label="— new: describe it below —",
        help_text="a deployment already measured",
    )
    model_name = forms.CharField(label="Model", max_length=200, required=False)
    accelerator = forms.ChoiceField(choices=(), required=False)
    gpus = forms.IntegerField(label="GPUs", min_value=1, max_value=4096, required=False)
    engine = forms.CharField(max_length=100, required=False, help_text="sglang, vllm, atom …")
    engine_version = forms.CharField(max_length=100, required=False)
    quantization = forms.CharField(
        max_length=50, required=False, help_text="weights: FP8, MXFP4, BF16 …"
    )
    tp = forms.IntegerField(label="TP", min_value=1, max_value=4096, required=False)

    FACT_FIELDS = ("model_name", "accelerator", "gpus", "engine", "quantization")
    ENDPOINT_FIELDS = ("name", "url", "api", "served_model", "api_key", "pool", "private")

    def fields_with_errors(self) -> list[forms.BoundField]:
        """The fields the error summary names, so its commas fall between them (a loop over
        every field put a comma after each errored one that was not the form's last)."""
        return [field for field in self if field.errors]

    def endpoint_fields(self) -> list[forms.BoundField]:
        """The fields about the endpoint itself (the page's first group)."""
        return [self[name] for name in self.ENDPOINT_FIELDS]

    def deployment_fields(self) -> list[forms.BoundField]:
        """The fields saying what it serves (the second group)."""
        return [self[name] for name in self.fields if name not in self.ENDPOINT_FIELDS]

    def __init__(self, *args: Any, deployments=None, pools=(), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if deployments is not None:
            self.fields["deployment"].queryset = deployments
        self.fields["pool"].choices = [("", "default: the accelerator's, or the only one")] + [
            (p.name, p.name if p.org_id else f"{p.name} (the service's workers)") for p in pools
        ]
        skus = Accelerator.objects.order_by("sku").values_list("sku", flat=True)
        self.fields["accelerator"].choices = [("", "—")] + [(s, s) for s in skus]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("deployment") is None:
            for name in self.FACT_FIELDS:
                if not data.get(name):
                    self.add_error(name, "needed for a new deployment (or pick one above)")
        return data

    def facts(self) -> dict[str, Any] | None:
        """The deployment's facts as the result document states them; None for an existing
        deployment."""
        data = self.cleaned_data
        if data.get("deployment") is not None:
            return None
        engine = {"name": data["engine"]}
        if data.get("engine_version"):
            engine["version"] = data["engine_version"]
        deployment: dict[str, Any] = {
            "accelerator": data["accelerator"],
            "gpus": data["gpus"],
            "engine": engine,
            "quantization": {"weights": data["quantization"]},
        }
        if data.get("tp"):
            deployment["parallelism"] = {"tp": data["tp"]}
        return {"model": {"name": data["model_name"]}, "deployment": deployment}


class ScheduleForm(forms.Form):
    """A load schedule added from /endpoints/: a scenario, and every N minutes or a cron
    expression (UTC); apps/jobs/schedules.py checks the rest and names the field it refuses."""

    scenario = forms.SlugField(max_length=100)
    interval_minutes = forms.IntegerField(
        label="every (minutes)", min_value=1, required=False, help_text="or a cron expression"
    )
    cron = forms.CharField(max_length=100, required=False, help_text="UTC, e.g. 0 2 * * *")
    # Which of the two to give is the service's rule (schedules.schedule_validate), not a
    # second copy here: its refusal names the field.
