"""The first-token table on the shipped data: under a 2 s TTFT p99 cap, only measured points
within the cap, the cheapest per vendor, each the answer's point for that SLO."""

import html
import re

import pytest
from django.core.management import call_command

from apps.catalog.models import Accelerator
from apps.runs.models import Point

pytestmark = pytest.mark.django_db

MODEL, SCENARIO = "DeepSeek-R1-0528", "8k-1k"


def test_at_a_2_s_cap_it_lists_the_cheapest_measured_point_per_vendor_and_says_when_none(client):
    call_command("loadreference", verbosity=0)
    body = client.get(
        "/api/v1/economics/first-token", {"model": MODEL, "scenario": SCENARIO}
    ).json()
    cap = next(c for c in body["caps"] if c["ttft_p99_s_max"] == 2.0)
    floor = body["interactivity_floor"]
    assert floor == 30.0 and "TTFT p99 ≤ 2 s" in cap["slo"]
    listed = [row for row in cap["by_accelerator"] if row["point"]]
    assert listed, "some accelerator meets 2 s at the shipped data"
    for row in listed:
        point = row["point"]
        stored = next(
            p
            for p in Point.objects.filter(run_id=point["run_id"])
            if p.level_name == point["level"]
        )
        # Measured (imported from InferenceX), within the cap and the floor as stored.
        assert point["provenance"] in ("measured", "imported", "published")
        assert stored.latency_ms["ttft"]["p99"] / 1000 <= 2.0
        assert stored.interactivity["p50"] >= floor
        # The answer's rule at that SLO picks the same point for that accelerator.
        answer = client.get(
            "/api/v1/compare/answer",
            {"model": MODEL, "scenario": SCENARIO, "a": row["accelerator"], "b": "B200"}
            | {"ttft_p99_s_max": "2", "swing": "false"},
        ).json()
        assert (answer["a"]["point"]["run_id"], answer["a"]["point"]["level"]) == (
            point["run_id"],
            point["level"],
        )
    # The cheapest per vendor is the lowest $/Mtok among that vendor's accelerators.
    vendor_of = {a.sku.upper(): a.vendor for a in Accelerator.objects.all()}
    for entry in cap["by_vendor"]:
        own = [
            r["usd_per_mtok_output"]
            for r in listed
            if vendor_of[r["accelerator"]] == entry["vendor"] and r["usd_per_mtok_output"]
        ]
        if entry["cheapest"] is None:
            assert own == []
        else:
            assert entry["cheapest"]["usd_per_mtok_output"] == min(own)
    # The page lists the same points under the same cap, each linked to its run.
    page = html.unescape(
        client.get(
            "/economics/first-token/", {"model": MODEL, "scenario": SCENARIO}
        ).content.decode()
    )
    section = re.search(r'<section class="cap" id="cap-2".*?</section>', page, re.S).group(0)
    shown = set(re.findall(r'class="by-vendor"[^>]*data-run="(\d+)" data-level="([^"]+)"', section))
    expected = {
        (str(v["cheapest"]["point"]["run_id"]), v["cheapest"]["point"]["level"])
        for v in cap["by_vendor"]
        if v["cheapest"]
    }
    assert shown == expected

    # A cap no point meets says so.
    query = {"model": MODEL, "scenario": SCENARIO, "interactivity_min": "100000"}
    body = client.get("/api/v1/economics/first-token", query).json()
    assert [c["met"] for c in body["caps"]] == [False, False, False, False]
    page = client.get("/economics/first-token/", query).content.decode()
    assert page.count('class="cap-unmet"') == 4

    # An SLO tier the scenario has not is a 422 naming the field, on the API and the page.
    refused = client.get("/api/v1/economics/first-token", {**query, "slo": "nope"})
    assert refused.status_code == 422 and refused.json()["detail"][0]["path"] == "slo"
    page = client.get("/economics/first-token/", {**query, "slo": "nope"})
    assert page.status_code == 422 and 'data-field="slo"' in page.content.decode()
