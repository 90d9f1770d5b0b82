import pytest
from django.core.management import call_command

from apps.catalog.models import Accelerator, PriceTier, PublishedFigure
from apps.costs.selectors import price_book
from apps.runs.models import Run

pytestmark = pytest.mark.django_db


@pytest.mark.sqlite_smoke
def test_loadreference_loads_accelerators_tiers_and_published_runs_once():
    call_command("loadreference", no_inferencex=True, verbosity=0)
    first = (Accelerator.objects.count(), PriceTier.objects.count(), Run.objects.count())
    call_command("loadreference", no_inferencex=True, verbosity=0)
    assert (Accelerator.objects.count(), PriceTier.objects.count(), Run.objects.count()) == first
    # 3 runs of Wafer's MI355X figures and 9 of sglang's cookbook cells (B200 FP8 and NVFP4,
    # MI355X FP8, three strategies each); the write-ups' B200 figure is a figure, not a run.
    # No price is stored: reference prices are the dated sets shipped in one file.
    assert first == (9, 0, 12)
    assert PublishedFigure.objects.count() == 8


def test_reference_prices_come_from_the_dated_sets_not_stored_rows():
    call_command("loadreference", no_inferencex=True, verbosity=0)
    assert not PriceTier.objects.filter(org__isnull=True).exists()
    mi355x = Accelerator.objects.get(sku="MI355X")
    assert mi355x.board_power_w == 1400 and mi355x.all_in_kw is None
    assert "accelerators.json" in mi355x.source
    book = price_book()
    assert book["MI355X"].usd_per_gpu_hour["owning_hyperscaler"] == 1.5
    assert book["MI355X"].all_in_kw == 2.09
    assert book.price_set.name == "semianalysis-2026-07-rental"


def test_published_runs_keep_their_figures_citation_and_unstated_units():
    call_command("loadreference", no_inferencex=True, verbosity=0)
    run = Run.objects.get(idempotency_key="published:wafer-glm52-mi355x-tp4dp2-fp4kernel")
    assert run.provenance == "published"
    assert "Wafer" in run.source_citation
    peak, single = run.points.order_by("ordinal")
    # The source does not say whether 2,626 counts output or total tokens: neither is claimed.
    assert (peak.unlabelled_tok_s, peak.output_tok_s, peak.total_tok_s) == (2626, None, None)
    assert peak.latency_ms["ttft"]["max"] == 2220
    assert peak.success_rate == 1.0
    assert (single.concurrency, single.unlabelled_tok_s) == (1, 213)
    assert run.deployment.parallelism_label == "TP4×DP2"
    assert run.scenario.slug == "seed-20k-1k-60"
    timeline = Run.objects.filter(provenance="published").values_list(
        "points__unlabelled_tok_s", flat=True
    )
    assert {1461, 1944, 2626} <= set(timeline)
