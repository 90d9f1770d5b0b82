"""Margin per GPU-hour and a 1 MW fleet, computed here by hand from the shipped data (the
stored point's raw columns, the price-set file, the token-price file), for one aggregated and
one disaggregated deployment of DeepSeek-R1-0528 at 8k/1k; the API and the pages must give
the same figures.

For the disaggregated deployment the hand computation starts from InferenceX's figures as
written: output per DECODE GPU and input per PREFILL GPU, so per deployed GPU they are
output x D / (P + D) and input x P / (P + D) (issue 51); total is InferenceX's own
`tput_per_gpu`, already over all GPUs."""

import html
import json
import math
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from apps.catalog.models import Deployment
from apps.runs.models import Point, Run

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[3]
ACCELERATORS = ROOT / "apps" / "catalog" / "reference" / "accelerators.json"
TOKEN_PRICES = ROOT / "apps" / "economics" / "token_prices.json"
MODEL, SCENARIO = "DeepSeek-R1-0528", "8k-1k"
# Terms typed by the visitor, so the hand computation does not lean on the page's defaults.
TERMS = {"utilisation": "0.6", "licence_share": "0.1", "cache_hit_rate": "0.25"}


def newest_stated(sku: str, tier: str) -> tuple[float, float]:
    """($/GPU-hr at `tier`, all-in kW) of `sku` from the newest set that states each, read
    from the accelerators file itself (its price sets, and the accelerator's entry)."""
    data = json.loads(ACCELERATORS.read_text())
    sets = sorted(data["price_sets"], key=lambda s: s["in_force_from"])
    stated = next(e for e in data["accelerators"] if e["sku"] == sku)["prices"]
    price = next(
        stated[s["name"]][tier] for s in reversed(sets) if tier in stated.get(s["name"], {})
    )
    kw = next(
        stated[s["name"]]["all_in_kw"]
        for s in reversed(sets)
        if "all_in_kw" in stated.get(s["name"], {})
    )
    return float(price), float(kw)


def list_price() -> dict[str, float]:
    entry = next(m for m in json.loads(TOKEN_PRICES.read_text())["models"] if m["model"] == MODEL)
    return entry["usd_per_mtok"]


def stored_point(run_id: int, level: str) -> Point:
    return next(p for p in Point.objects.filter(run_id=run_id) if p.level_name == level)


def by_sku(body: dict) -> dict[str, dict]:
    return {row["accelerator"]: row for row in body["rows"]}


def test_margin_and_fleet_of_an_aggregated_deployment_match_a_hand_computation(client):
    call_command("loadreference", verbosity=0)
    query = {"model": MODEL, "scenario": SCENARIO, **TERMS}
    margin = client.get("/api/v1/economics/margin", query).json()
    row = by_sku(margin)["MI355X"]
    point = row["point"]
    deployment = Deployment.objects.get(pk=point["deployment_id"])
    assert not deployment.disaggregated and point["serving"] == "aggregated"
    stored = stored_point(point["run_id"], point["level"])
    # The same point as the one answer (GET /api/v1/compare/answer) at the default tier.
    answer = client.get(
        "/api/v1/compare/answer",
        {"model": MODEL, "scenario": SCENARIO, "a": "MI355X", "b": "B200", "swing": "false"},
    ).json()
    assert (answer["a"]["point"]["run_id"], answer["a"]["point"]["level"]) == (
        point["run_id"],
        point["level"],
    )
    assert margin["slo_tier"]["name"] == "interactive"
    assert margin["denominator"].startswith("all deployed GPUs")

    # By hand: whole-deployment tok/s over the deployment's GPUs.
    out = stored.output_tok_s / deployment.gpus
    inp = stored.input_tok_s / deployment.gpus
    tokens = list_price()
    price, kw = newest_stated("MI355X", "owning_hyperscaler")
    gross = (
        0.6
        * 3600
        * (inp * (0.75 * tokens["input"] + 0.25 * tokens["cached_input"]) + out * tokens["output"])
        / 1e6
    )
    revenue = gross * (1 - 0.1)
    hours_per_mw_year = 1000 / kw * 8760
    assert row["output_tok_s_per_gpu"] == pytest.approx(out)
    assert row["input_tok_s_per_gpu"] == pytest.approx(inp)
    assert row["usd_per_gpu_hour"] == pytest.approx(price)
    assert row["margin"]["revenue_per_gpu_hour"] == pytest.approx(revenue)
    assert row["margin"]["margin_per_gpu_hour"] == pytest.approx(revenue - price)
    assert row["margin"]["margin_per_mw_year"] == pytest.approx(
        (revenue - price) * hours_per_mw_year
    )

    # A 1 MW fleet: whole 8-GPU nodes, users at the point's interactivity, 730-hour months.
    fleet_body = client.get("/api/v1/economics/fleet", {**query, "megawatts": "1"}).json()
    planned = by_sku(fleet_body)["MI355X"]["fleet"]
    gpus = math.floor(1000 / kw) // 8 * 8
    users = gpus * out / stored.interactivity["p50"]
    assert planned["gpus"] == gpus and planned["nodes"] == gpus // 8
    assert planned["concurrent_users"] == pytest.approx(users)
    assert planned["revenue_per_month"] == pytest.approx(revenue * gpus * 730)
    assert planned["cost_per_month"] == pytest.approx(price * gpus * 730)
    assert planned["margin_per_month"] == pytest.approx((revenue - price) * gpus * 730)
    assert planned["requests_per_day"] == pytest.approx(gpus * out * 86400 * 0.6 / 1024)

    # The pages show the same figures, with their run linked.
    page = html.unescape(client.get("/economics/margin/", query).content.decode())
    mine = re.search(r'<tr data-sku="MI355X">(.*?)</tr>', page, re.S).group(1)
    assert f"/runs/{point['run_id']}/" in mine
    assert (
        re.search(r'data-figure-name="margin">([^<]+)<', mine).group(1) == f"{revenue - price:.4f}"
    )
    fleet_page = html.unescape(client.get("/economics/fleet/", query).content.decode())
    mine = re.search(r'<tr data-sku="MI355X">(.*?)</tr>', fleet_page, re.S).group(1)
    assert (
        re.search(r'data-figure-name="gpus">([^<]+)<', mine).group(1) == f"{gpus} ({gpus // 8} × 8)"
    )
    assert re.search(r'data-figure-name="users">([^<]+)<', mine).group(1) == f"{users:.1f}"
    assert (
        re.search(r'data-figure-name="cost-month">([^<]+)<', mine).group(1)
        == f"{price * gpus * 730:.2f}"
    )
    assert "interactive tier" in fleet_page and "all deployed GPUs" in fleet_page


def test_a_disaggregated_deployment_is_priced_over_all_its_gpus_with_its_pools_named(client):
    call_command("loadreference", verbosity=0)
    query = {"model": MODEL, "scenario": SCENARIO, "serving": "disaggregated", **TERMS}
    body = client.get("/api/v1/economics/fleet", {**query, "megawatts": "1"}).json()
    row = by_sku(body)["GB200"]
    point = row["point"]
    deployment = Deployment.objects.get(pk=point["deployment_id"])
    assert deployment.disaggregated and point["serving"] == "disaggregated"
    pools = f"{deployment.prefill_gpus} prefill + {deployment.decode_gpus} decode"
    assert f"{deployment.gpus} GPUs: {pools}" in row["pools"]
    # Cost and the fleet's size do not depend on the pools' split: by hand from the files.
    price, kw = newest_stated("GB200", "owning_hyperscaler")
    gpus = math.floor(1000 / kw) // 4 * 4  # a Grace-Blackwell tray holds 4 GPUs
    assert row["usd_per_gpu_hour"] == pytest.approx(price)
    assert row["margin"]["cost_per_gpu_hour"] == pytest.approx(price)
    assert row["fleet"]["gpus"] == gpus and row["fleet"]["gpus_per_node"] == 4
    assert row["fleet"]["cost_per_month"] == pytest.approx(price * gpus * 730)
    # Total tok/s per GPU is InferenceX's own tput_per_gpu, over all the deployment's GPUs.
    run = Run.objects.get(pk=point["run_id"])
    written = run.document["environment"]["extra"]["inferencex"]["figures_as_written"]
    source = written[str(point["concurrency"])]["per_gpu"]["tput_per_gpu"]
    assert row["total_tok_s_per_gpu"] == pytest.approx(source)
    # Output and input per deployed GPU, from the per-pool rates as written.
    as_written = written[str(point["concurrency"])]["per_gpu"]
    prefill, decode = deployment.prefill_gpus, deployment.decode_gpus
    out = as_written["output_tput_per_gpu"] * decode / (prefill + decode)
    inp = as_written["input_tput_per_gpu"] * prefill / (prefill + decode)
    assert row["output_tok_s_per_gpu"] == pytest.approx(out)
    assert row["input_tok_s_per_gpu"] == pytest.approx(inp)
    tokens = list_price()
    gross = (
        0.6
        * 3600
        * (inp * (0.75 * tokens["input"] + 0.25 * tokens["cached_input"]) + out * tokens["output"])
        / 1e6
    )
    revenue = gross * (1 - 0.1)
    assert row["margin"]["revenue_per_gpu_hour"] == pytest.approx(revenue)
    assert row["margin"]["margin_per_gpu_hour"] == pytest.approx(revenue - price)
    stored = stored_point(point["run_id"], point["level"])
    users = gpus * out / stored.interactivity["p50"]
    assert row["fleet"]["concurrent_users"] == pytest.approx(users)
    assert row["fleet"]["margin_per_month"] == pytest.approx((revenue - price) * gpus * 730)
    page = html.unescape(client.get("/economics/fleet/", query).content.decode())
    assert f"{deployment.gpus} GPUs: {pools}" in page
    mine = re.search(r'<tr data-sku="GB200">(.*?)</tr>', page, re.S).group(1)
    assert re.search(r'data-figure-name="users">([^<]+)<', mine).group(1) == f"{users:.1f}"
