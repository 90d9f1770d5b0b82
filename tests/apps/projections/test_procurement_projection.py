"""The calculator prices projected accelerators only when asked, with the band, unranked."""

import math
import re

import pytest
from django.core.management import call_command

from apps.projections import reference

pytestmark = pytest.mark.django_db

SEED = "/costs/?input_tokens=20000&output_tokens=1000&cache_hit_rate=0.6"


def test_the_calculator_leaves_projections_out_unless_asked(client):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    html = client.get(SEED).content.decode()
    assert 'id="projected-plans"' not in html


def test_asked_the_calculator_prices_b200_projected_with_low_and_high_gpus(client):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    html = client.get(SEED + "&projected=1").content.decode()
    section = html[html.index('id="projected-plans"') :]
    start = section.index('data-projected="B200"')
    row = section[start : section.index("</tr>", start)]
    low, high = (int(v) for v in re.search(r"(\d+)–(\d+)", row).groups())
    # the band's high throughput needs fewer GPUs than its low throughput
    assert low < high
    month_low, month_high = re.search(r"\$([\d,]+)–\$([\d,]+)", row).groups()
    assert int(month_low.replace(",", "")) < int(month_high.replace(",", ""))
    # never among the ranked rows
    ranked = html[html.index('id="cost-table"') : html.index("</table>")]
    assert "projected" not in ranked
    # the range is the shipped calibration's band at matched concurrency, and says so, with
    # its width and the share of held-out points of its stratum it held
    shipped = reference.calibration_data()
    q = shipped["final"]["q"]["concurrency"]["extrapolated"]
    said = f"(×{math.exp(-q):.2f} to ×{math.exp(q):.2f} throughput"
    assert "80% band, from held-out errors, at matched concurrency</span> " + said in section
    assert f'id="projected-band-width">×{math.exp(2 * q):.2f} wide</span>' in section
    [row] = [r for r in shipped["held_out"]["stratum"] if r["group"] == "extrapolated"]
    share = round(row["in_band"]["concurrency"] * 100)
    assert f'id="projected-band-coverage">{share}%</span> of extrapolated points' in section


def test_a_workload_without_a_projection_says_so(client):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    html = client.get("/costs/?input_tokens=1000&output_tokens=1000&projected=1")
    assert html.status_code == 200
    assert "No projection for this workload" in html.content.decode()


def test_all_models_at_once_reach_no_models_architecture(client):
    # model= (blank) is "all models": a projection is of one model, so there is none, and
    # never GLM 5.2's for a workload of several models
    call_command("loadreference", no_inferencex=True, verbosity=0)
    html = client.get(SEED + "&model=&projected=1").content.decode()
    section = html[html.index('id="projected-plans"') :]
    assert 'data-projected="B200"' not in section
    assert "No projection for this workload: no model asked" in section


def test_a_model_without_an_architecture_gets_no_other_models_projection(client):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    html = client.get(SEED + "&model=Mystery-1T&projected=1").content.decode()
    section = html[html.index('id="projected-plans"') :]
    assert 'data-projected="B200"' not in section
    assert "no architecture for this model" in section
