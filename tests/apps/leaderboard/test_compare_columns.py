"""/compare/ of the two published TP4×DP2 MI355X runs: the second chose its FP4 kernel by hand
and fixed MTP speculative decoding. The page says so in its difference list, in the speculative
decoding row, and in column headings that differ by more than the id."""

import re

import pytest
from django.core.management import call_command

from apps.runs.models import Run

pytestmark = pytest.mark.django_db


def test_compare_names_the_hand_picked_kernel_and_mtp_and_tells_its_columns_apart(client):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    plain = Run.objects.get(idempotency_key="published:wafer-glm52-mi355x-tp4dp2")
    tuned = Run.objects.get(idempotency_key="published:wafer-glm52-mi355x-tp4dp2-fp4kernel")
    url = f"/compare/?d={plain.deployment_id}&d={tuned.deployment_id}&scenario=seed-20k-1k-60"
    page = client.get(url).content.decode()
    fairness = page.split('id="fairness"')[1].split("</section>")[0]
    assert "Engine flags and kernels" in fairness and "fp4 MoE expert kernel" in fairness
    assert "Speculative decoding" in fairness
    row = page.split("<th>Speculative decoding</th>")[1].split("</tr>")[0]
    assert re.findall(r"<td>([^<]*)</td>", row) == ["off", "MTP"]
    headings = re.findall(r'<th scope="col"><a href="/deployments/\d+/">([^<]*)</a>', page)
    without_ids = {re.sub(r" \(#\d+\)$", "", h) for h in headings}
    assert len(headings) == 2 and len(without_ids) == 2, headings


def test_a_long_engine_flag_is_cut_between_words_on_the_board_and_in_its_csv(client):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    board = "/?model=GLM 5.2&scenario=seed-20k-1k-60&unchecked=1"
    page = client.get(board).content.decode()
    csv = client.get(board + "&format=csv").content.decode()
    for text in (page, csv):
        assert re.search(r"chosen by hand ins(?!tead)", text) is None  # no word cut in two
        assert "fp4 MoE expert kernel chosen by hand instead …" in text
