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
    # the range is the shipped calibration's band at matched concurrency, and says so
    q = reference.calibration_data()["accelerators"]["B200"]["q"]["concurrency"]
    said = f"(×{math.exp(-q['extrapolated']):.2f} to ×{math.exp(q['extrapolated']):.2f} throughput"
    assert "80% band, from held-out errors, at matched concurrency</span> " + said in section


def test_a_workload_without_a_projection_says_so(client):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    html = client.get("/costs/?input_tokens=1000&output_tokens=1000&projected=1")
    assert html.status_code == 200
    assert "No projection for this workload" in html.content.decode()
