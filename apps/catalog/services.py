"""Writes to the catalog: deployments by fingerprint, scenarios by shape, reference data."""

from typing import Any

from django.utils.text import slugify

from apps.catalog.models import Accelerator, Deployment, Engine, Model, Scenario
from apps.catalog.presets import PRESETS, preset_row, shape_key, shape_of
from workers import accelerator_specs, result_facts
from workers import results as doc


def accelerator_get_or_create(*, sku: str) -> Accelerator:
    existing = Accelerator.objects.filter(sku__iexact=sku).first()
    return existing or Accelerator.objects.create(sku=sku)


def deployment_upsert(*, document: doc.ResultDocument) -> Deployment:
    fingerprint = document.deployment_fingerprint()
    existing = Deployment.objects.filter(fingerprint=fingerprint).first()
    if existing is not None:
        return existing
    d = document.deployment
    model, _ = Model.objects.get_or_create(
        name=document.model.name, defaults={"family": document.model.family or ""}
    )
    engine, _ = Engine.objects.get_or_create(name=d.engine.name.lower())
    split = d.disaggregation
    pools = (split.prefill, split.decode) if split else (None, None)
    return Deployment.objects.create(
        fingerprint=fingerprint,
        model=model,
        accelerator=accelerator_get_or_create(sku=d.accelerator),
        gpus=d.gpus,
        nodes=d.nodes,
        engine=engine,
        engine_version=d.engine.version or "",
        image_digest=d.engine.image_digest or "",
        quant_weights=d.quantization.weights,
        quant_activations=d.quantization.activations or "",
        quant_kv_cache=d.quantization.kv_cache or "",
        quant_note=d.quantization.note or "",
        tp=d.parallelism.tp,
        dp=d.parallelism.dp,
        ep=d.parallelism.ep,
        pp=d.parallelism.pp,
        dp_attention=d.parallelism.dp_attention,
        parallelism_label=split.label() if split else d.parallelism.label(),
        spec_method=d.speculative.method if d.speculative else "",
        spec_draft_tokens=d.speculative.draft_tokens if d.speculative else None,
        disaggregated=split is not None,
        prefill_gpus=split.prefill_gpus if split else None,
        decode_gpus=split.decode_gpus if split else None,
        prefill_workers=pools[0].workers if pools[0] else None,
        decode_workers=pools[1].workers if pools[1] else None,
        prefill_layout=pools[0].label() if pools[0] else "",
        decode_layout=pools[1].label() if pools[1] else "",
        multinode=d.multinode,
        engine_flags=d.engine_flags,
        notes=d.notes or "",
    )


def scenario_resolve(*, scenario: result_facts.Scenario, org=None) -> Scenario:
    """The stored scenario a document's scenario denotes: its named preset, or its shape."""
    if scenario.preset:
        preset = preset_get(slug=scenario.preset)
        if preset is None:
            raise doc.DocumentError([("scenario.preset", f"unknown preset {scenario.preset!r}")])
        mismatched = [
            field
            for field in ("input_tokens", "output_tokens", "prefix_cache_hit_rate")
            # Naming a preset states its shape; only a value stated otherwise contradicts it.
            if getattr(scenario, field) is not None
            and getattr(preset, field) != getattr(scenario, field)
        ]
        if mismatched:
            raise doc.DocumentError(
                [
                    (f"scenario.{field}", f"differs from preset {preset.slug!r}")
                    for field in mismatched
                ]
            )
        return preset
    return scenario_get_or_create(scenario=scenario, org=org)[0]


def preset_get(*, slug: str) -> Scenario | None:
    """A preset scenario; recreated from code if its row is gone (presets are defined here)."""
    preset = Scenario.objects.filter(slug=slug, is_preset=True).first()
    definition = next((p for p in PRESETS if p["slug"] == slug), None)
    if preset is not None or definition is None:
        return preset
    preset, _ = Scenario.objects.update_or_create(slug=slug, defaults=preset_row(definition))
    return preset


def presets_ensure() -> None:
    for definition in PRESETS:
        preset_get(slug=definition["slug"])


def _shape_key_of(scenario: result_facts.Scenario) -> str:
    return shape_key(**shape_of(scenario))


def scenario_get_or_create(*, scenario: result_facts.Scenario, org=None) -> tuple[Scenario, bool]:
    """The scenario with this shape, created when new; True when created.

    An organization's scenarios are its own (their key carries the organization): its name
    and SLO never reach another organization's runs, and another's never reach its runs. Its
    run still joins a public scenario of the same shape when it says nothing different (no
    other name, no other SLO), as a job on that scenario does."""
    key = _shape_key_of(scenario)
    if org is None:
        existing = Scenario.objects.filter(shape_key=key).first()
        if existing is not None:
            return existing, False
        return scenario_create(scenario=scenario, key=key), True
    own = Scenario.objects.filter(shape_key=f"org{org.pk}:{key}").first()
    public = Scenario.objects.filter(shape_key=key, created_by__isnull=True).first()
    for candidate in (own, public):
        if candidate is not None and _agrees(candidate, scenario):
            return candidate, False
    if own is not None:
        return own, False
    return scenario_create(scenario=scenario, key=f"org{org.pk}:{key}", org=org), True


def _slo_columns(slo: result_facts.Slo | None) -> dict[str, Any]:
    return {
        "slo_ttft_ms": slo.ttft_ms if slo else None,
        "slo_ttft_percentile": slo.ttft_percentile if slo else 99,
        "slo_tpot_ms": slo.tpot_ms if slo else None,
        "slo_e2el_ms": slo.e2el_ms if slo else None,
        "slo_bounds": [b.model_dump(mode="json") for b in slo.bounds] if slo else [],
        "slo_min_success_rate": slo.min_success_rate if slo else 0.99,
    }


def _agrees(stored: Scenario, scenario: result_facts.Scenario) -> bool:
    """Whether a document's scenario says nothing that differs from a stored one."""
    if scenario.name and scenario.name != stored.name:
        return False
    if scenario.slo is None:
        return True
    return all(getattr(stored, k) == v for k, v in _slo_columns(scenario.slo).items())


def scenario_create(
    *, scenario: result_facts.Scenario, key: str | None = None, org=None
) -> Scenario:
    key = key or _shape_key_of(scenario)
    prefix = (
        f"-{round(scenario.prefix_cache_hit_rate * 100)}pc"
        if scenario.prefix_cache_hit_rate
        else ""
    )
    base = slugify(
        scenario.name
        or f"{scenario.input_tokens}-in-{scenario.output_tokens}-out{prefix}-{scenario.dataset}"
    )[:90]
    slug, n = base, 1
    while Scenario.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    # The generated name is what pages print, so it says which shape facts were not stated:
    # such a scenario sits beside, not inside, the one that states 0.
    unstated = [
        label
        for label, value in (
            ("length spread", scenario.length_spread),
            ("prefix cache", scenario.prefix_cache_hit_rate),
        )
        if value is None
    ]
    return Scenario.objects.create(
        slug=slug,
        name=scenario.name
        or f"{scenario.input_tokens} in / {scenario.output_tokens} out"
        + (f" / {scenario.prefix_cache_hit_rate:.0%} prefix cache" if prefix else "")
        + (f" / {', '.join(unstated)} not stated" if unstated else ""),
        shape_key=key,
        **shape_of(scenario),
        warmup_requests=scenario.warmup_requests,
        duration_s=scenario.duration_s,
        request_count=scenario.request_count,
        **_slo_columns(scenario.slo),
        created_by=org,
    )


def reference_accelerators_load() -> int:
    """Upsert the accelerators of the one accelerators file (workers/accelerator_specs.py);
    returns how many. Their prices and all-in power are not stored: they are dated price sets
    on the same entries, read where they are used (apps/costs/reference.py), so no stored
    copy can fall behind a newer set."""
    data = accelerator_specs.reference()
    sources = data.get("sources", {})
    for entry in data["accelerators"]:
        listed_in = entry.get("listed_in", "")
        Accelerator.objects.update_or_create(
            sku=entry["sku"],
            defaults={
                "vendor": entry.get("vendor", ""),
                "hbm_gb": entry.get("hbm_gb"),
                "hbm_tb_s": entry.get("hbm_tb_s"),
                "board_power_w": entry.get("board_power_w"),
                "peak_tflops": dict(entry.get("tflops", {})),
                # Where the SKU was listed (the source of its prices), else its datasheet.
                "source": sources.get(listed_in, listed_in) or entry.get("source", ""),
                "note": entry.get("price_note", ""),
            },
        )
    return len(data["accelerators"])
