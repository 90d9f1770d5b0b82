"""A claim check uses a projection only when asked, labelled, and never in its verdict."""

import re

import pytest
from django.core.management import call_command

from apps.projections.claims import projected_cost_ratios, projected_throughput_ratio

pytestmark = pytest.mark.django_db

CLAIM = "/costs/claim/?throughput_ratio=0.8&claimed_cost_ratio=0.5"
GLM = "&model=GLM+5.2"


def test_the_claim_check_ignores_projections_unless_asked(client):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    html = client.get(CLAIM).content.decode()
    assert 'id="projected-claim"' not in html


def test_asked_the_claim_page_shows_the_projected_ratio_apart_from_the_verdict(client):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    plain = client.get(CLAIM + GLM).content.decode()
    asked = client.get(CLAIM + GLM + "&projected=1").content.decode()
    verdict = re.compile(r'<strong id="cost-ratio">([^<]+)</strong>')
    # the claim's own verdict is the same with or without the projection
    assert verdict.search(plain).group(1) == verdict.search(asked).group(1)
    section = asked[asked.index('id="projected-claim"') :]
    assert "not measured" in section and "projected" in section
    assert re.search(r'id="projected-cost-ratio">\d+\.\d\d<', section)
    assert "GLM 5.2 on B200 is <strong>not measured</strong>" in section
    assert re.search(r'id="projected-claim-band">×\d+\.\d\d wide; held out, \d+% of', section)


def test_the_claim_of_a_model_without_a_published_run_gets_no_other_models_projection(client):
    # DeepSeek-R1: shipped architecture, no published MI355X single stream, so no projection
    # (never GLM 5.2's, the checker's default claim's model, in its place)
    call_command("loadreference", no_inferencex=True, verbosity=0)
    asked = client.get(CLAIM + "&model=DeepSeek-R1-0528&projected=1").content.decode()
    section = asked[asked.index('id="projected-claim"') :]
    assert "projected-cost-ratio" not in section and "GLM 5.2" not in section
    assert "no published single-stream run of this model" in section


def test_the_projected_ratio_takes_its_range_from_the_band():
    projection = {
        "band": (0.5, 2.0),
        "series": {
            "MI355X": {
                "points": [
                    {"interactivity": i, "output_tput_per_gpu": 800 / i} for i in (50, 100, 200)
                ]
            },
            "B200": {"points": [{"interactivity": 100, "output_tput_per_gpu": 10.0}]},
        },
    }
    ratio = projected_throughput_ratio(projection)
    assert ratio["ratio"] == pytest.approx(0.8)
    assert (ratio["low"], ratio["high"]) == (pytest.approx(0.4), pytest.approx(1.6))
    costs = projected_cost_ratios(ratio, usd_per_gpu_hour_a=1.48, usd_per_gpu_hour_b=1.95)
    assert costs["cost_ratio"] == pytest.approx((1.48 / 1.95) / 0.8)
    assert costs["cost_low"] < costs["cost_ratio"] < costs["cost_high"]
