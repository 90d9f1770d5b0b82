"""The cost API at /api/v1/costs/, through Django's test client."""

from __future__ import annotations

import json

import pytest

from tests.reviews import ingest_reviewed

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("costs_site")]


def detail_paths(response) -> dict[str, str]:
    return {item["path"]: item["message"] for item in response.json()["detail"]}


def test_the_seed_deployment_costs_1_2524_per_mtok(client):
    response = client.get("/api/v1/costs/mtok?usd_per_gpu_hour=1.48&gpus=8&tok_per_s=2626")
    assert response.status_code == 200, response.content
    body = response.json()
    assert round(body["usd_per_mtok"], 4) == 1.2524
    assert body["tok_per_s_per_gpu"] == pytest.approx(328.25)
    assert body["usd_per_hour"] == pytest.approx(11.84)
    assert body["price"]["source"] == "your own price"


def test_a_tier_and_accelerator_stand_in_for_a_price_and_say_so(client):
    response = client.get(
        "/api/v1/costs/mtok?accelerator=MI355X&tier=owning_hyperscaler&gpus=8&tok_per_s=2626"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    # The newest set: MI355X $1.50 owning (hyperscaler), all-in 2.09 kW (corrected 2026-07-14).
    assert round(body["usd_per_mtok"], 4) == round(1.50 * 8 / (2626 * 3600 / 1e6), 4)
    assert body["price"]["tier"] == "owning_hyperscaler"
    assert body["price"]["source"] == "reference tier"
    assert body["price"]["price_set"] == "semianalysis-2026-07-rental"
    assert "gpu-keys.ts" in body["price"]["citation"]
    assert body["joules_per_token"] == pytest.approx(2.09 * 8 * 1000 / 2626)


def test_prices_as_of_a_date_prices_with_the_set_in_force_then(client):
    url = "/api/v1/costs/mtok?accelerator=MI355X&tier=owning_hyperscaler&gpus=8&tok_per_s=2626"
    # Between the July 2026 set (2026-07-31) and the rental set (2026-09-08): July's.
    july = client.get(f"{url}&prices_as_of=2026-08-15").json()
    assert july["price"]["usd_per_gpu_hour"] == 1.4960710469526235
    assert july["price"]["price_set"] == "semianalysis-2026-07"
    # Before the power correction: the August 2025 set's price and all-in 2.65 kW.
    august = client.get(f"{url}&prices_as_of=2025-09-01").json()
    assert round(august["usd_per_mtok"], 4) == 1.2524
    assert august["price"]["price_set"] == "semianalysis-2025-08"
    assert august["joules_per_token"] == pytest.approx(21_200 / 2626)
    # A set by name, and a value that is neither: 422 naming the field.
    named = client.get(f"{url}&prices_as_of=semianalysis-2025-08").json()
    assert named["price"]["usd_per_gpu_hour"] == 1.48
    refused = client.get(f"{url}&prices_as_of=last-tuesday")
    assert refused.status_code == 422
    assert "prices_as_of" in detail_paths(refused)
    early = client.get(f"{url}&prices_as_of=2025-01-01")
    assert early.status_code == 422 and "no price set was in force" in early.content.decode()


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("usd_per_gpu_hour=1.48&gpus=8&tok_per_s=0", "tok_per_s"),
        ("usd_per_gpu_hour=1.48&gpus=8&tok_per_s=-5", "tok_per_s"),
        ("usd_per_gpu_hour=1.48&gpus=0&tok_per_s=2626", "gpus"),
        ("usd_per_gpu_hour=-1&gpus=8&tok_per_s=2626", "usd_per_gpu_hour"),
        ("gpus=8&tok_per_s=2626", "usd_per_gpu_hour"),
        ("accelerator=MI355X&gpus=8&tok_per_s=2626", "tier"),
        ("accelerator=TPU9&tier=rental_3yr&gpus=8&tok_per_s=2626", "accelerator"),
        ("usd_per_gpu_hour=1.48&gpus=8&tok_per_s=nan", "tok_per_s"),
    ],
)
def test_bad_inputs_get_422_naming_the_field(client, query, field):
    response = client.get(f"/api/v1/costs/mtok?{query}")
    assert response.status_code == 422, response.content
    assert field in json.dumps(response.json()["detail"])
    assert "NaN" not in response.content.decode()


def test_a_missing_throughput_is_a_4xx_not_a_500(client):
    response = client.get("/api/v1/costs/mtok?usd_per_gpu_hour=1.48&gpus=8")
    assert response.status_code == 422
    assert "tok_per_s" in response.content.decode()


def test_kinds_give_input_output_total_and_blend(client):
    response = client.get(
        "/api/v1/costs/mtok/kinds?usd_per_gpu_hour=2&gpus=2"
        "&input_tok_per_s=2000&output_tok_per_s=500"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["input"] == pytest.approx(4 / 7.2)
    assert body["output"] == pytest.approx(4 / 1.8)
    assert body["blended"] == pytest.approx((3 * 4 / 7.2 + 4 / 1.8) / 4)
    assert body["mix"] == "3:1"


def test_gpu_hour_from_capex_and_opex(client):
    response = client.get(
        "/api/v1/costs/gpu-hour?gpu_purchase_usd=30000&server_share_usd=10000"
        "&depreciation_years=4&kw_per_gpu=2&usd_per_kwh=0.1&pue=1.25"
        "&hosting_usd_per_month=73&utilization=0.8"
    )
    assert response.status_code == 200, response.content
    assert response.json()["usd_per_gpu_hour"] == pytest.approx(1.86444, abs=1e-5)


def test_gpu_hour_names_a_bad_utilization(client):
    response = client.get(
        "/api/v1/costs/gpu-hour?gpu_purchase_usd=30000&kw_per_gpu=2&usd_per_kwh=0.1&utilization=0"
    )
    assert response.status_code == 422
    assert "utilization" in detail_paths(response)


SWEEP = [
    {"label": "c32", "tok_per_s_per_gpu": 500, "metrics": {"ttft_s.p99": 2.0}, "success_rate": 1},
    {"label": "c64", "tok_per_s_per_gpu": 600, "metrics": {"ttft_s.p99": 4.0}, "success_rate": 1},
]


def test_cost_at_an_slo_interpolates_and_says_so(client):
    payload = {"points": SWEEP, "slo": {"ttft_s_max": 3.0}, "usd_per_gpu_hour": 2.0}
    response = client.post("/api/v1/costs/slo", payload, content_type="application/json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["provenance"] == "interpolated"
    assert body["tok_per_s_per_gpu"] == pytest.approx(550)
    assert body["usd_per_mtok"] == pytest.approx(2 / 1.98)
    assert (body["lower"], body["upper"]) == ("c32", "c64")


def test_an_slo_no_point_meets_is_a_clear_answer_not_nan(client):
    payload = {"points": SWEEP, "slo": {"ttft_s_max": 0.5}, "usd_per_gpu_hour": 2.0}
    response = client.post("/api/v1/costs/slo", payload, content_type="application/json")
    assert response.status_code == 200
    body = response.json()
    assert body["meets"] is False
    assert body["usd_per_mtok"] is None
    assert body["reason"].startswith("no measured point meets TTFT p99 ≤ 0.5 s")


def test_capacity_ranks_cheapest_first(client):
    payload = {
        "workload": {"input_tokens": 1000, "output_tokens": 1000, "peak_requests_per_s": 10},
        "candidates": [
            {
                "label": "dear",
                "accelerator": "B200",
                "tok_per_s_per_gpu": 100,
                "tier": "rental_3yr",
            },
            {
                "label": "cheap",
                "accelerator": "B200",
                "tok_per_s_per_gpu": 100,
                "usd_per_gpu_hour": 1.0,
            },
        ],
    }
    response = client.post("/api/v1/costs/capacity", payload, content_type="application/json")
    assert response.status_code == 200, response.content
    plans = response.json()
    assert [p["label"] for p in plans] == ["cheap", "dear"]
    # 12 req/s / 0.1 per GPU = 120 GPUs (15 x 8) at $1 for 730 h.
    assert plans[0]["gpus"] == 120
    assert plans[0]["usd_per_month"] == pytest.approx(120 * 730)
    # The newest set's retail / 3-year rental tier: B200 $3.70.
    assert plans[1]["price"]["usd_per_gpu_hour"] == 3.70


def test_capacity_names_the_candidate_with_a_bad_price(client):
    payload = {
        "workload": {"input_tokens": 1000, "output_tokens": 1000, "peak_requests_per_s": 10},
        "candidates": [
            {"label": "x", "accelerator": "TPU9", "tok_per_s_per_gpu": 100, "tier": "rental_3yr"}
        ],
    }
    response = client.post("/api/v1/costs/capacity", payload, content_type="application/json")
    assert response.status_code == 422
    assert "candidates[0].accelerator" in detail_paths(response)


def test_the_published_claim_computes_to_0_95(client):
    response = client.get(
        "/api/v1/costs/claim?throughput_ratio=0.8&usd_per_gpu_hour_a=1.48"
        "&usd_per_gpu_hour_b=1.95&claimed_cost_ratio=0.5"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert round(body["cost_ratio"], 2) == 0.95
    assert body["holds"] is False
    assert body["usd_per_gpu_hour_a_needed"] == pytest.approx(0.78)


def test_a_claim_between_accelerators_lists_every_tier_pairing(client):
    response = client.get(
        "/api/v1/costs/claim?throughput_ratio=0.8&claimed_cost_ratio=0.5"
        "&accelerator_a=MI355X&tier_a=owning_hyperscaler"
        "&accelerator_b=B200&tier_b=owning_hyperscaler&prices_as_of=semianalysis-2025-08"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert round(body["cost_ratio"], 2) == 0.95
    assert len(body["assumptions"]) == 9
    assert not any(a["holds"] for a in body["assumptions"])


def test_a_claim_with_an_unknown_accelerator_names_the_side(client):
    response = client.get(
        "/api/v1/costs/claim?throughput_ratio=0.8&claimed_cost_ratio=0.5"
        "&accelerator_a=TPU9&tier_a=rental_3yr&usd_per_gpu_hour_b=1.95"
    )
    assert response.status_code == 422
    assert "accelerator_a" in detail_paths(response)


def test_the_costs_endpoints_are_in_the_openapi_schema(client):
    schema = client.get("/api/v1/openapi.json").json()
    for path in (
        "mtok",
        "mtok/kinds",
        "gpu-hour",
        "slo",
        "capacity",
        "claim",
        "compare",
        "procurement",
        "runs/{run_id}/slo",
    ):
        assert f"/api/v1/costs/{path}" in schema["paths"], path


def test_an_organizations_own_price_book_is_used_for_it_alone(client, org, auth):
    from apps.catalog.models import Accelerator, PriceTier

    accelerator, _ = Accelerator.objects.get_or_create(sku="MI355X")
    PriceTier.objects.create(
        accelerator=accelerator, tier="our_contract", usd_per_gpu_hour=1.0, org=org
    )
    query = "/api/v1/costs/mtok?accelerator=MI355X&tier=our_contract&gpus=1&tok_per_s=1000"
    mine = client.get(query, **auth)
    assert mine.status_code == 200, mine.content
    assert mine.json()["usd_per_mtok"] == pytest.approx(1 / 3.6)
    assert mine.json()["price"]["source"] == "your organization's price book"
    anonymous = client.get(query)
    assert anonymous.status_code == 422
    assert "tier" in detail_paths(anonymous)


@pytest.fixture
def stored_run(document, org):

    return ingest_reviewed(document=document, org=org, is_public=True).run


def test_a_stored_runs_cost_at_the_seed_slo(client, stored_run):
    # c16 meets TTFT p99 <= 2.22 s at 11,200 / 8 = 1,400 tok/s/GPU; MI355X tier $1.48.
    # It had 1 timeout in 33 requests (97%): it meets only a 95% success minimum.
    response = client.get(
        f"/api/v1/costs/runs/{stored_run.pk}/slo?ttft_s_max=2.22&interactivity_min=30"
        "&tier=owning_hyperscaler&min_success_rate=0.95&token_kind=total"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["tok_per_s_per_gpu"] == pytest.approx(1400)
    assert body["usd_per_mtok"] == pytest.approx(1.50 / 5.04)  # the newest set: MI355X $1.50
    assert body["provenance"] == "measured"
    assert body["price"]["accelerator"] == "MI355X"


def test_an_unknown_run_is_a_404(client, db):
    response = client.get("/api/v1/costs/runs/999999/slo?usd_per_gpu_hour=1")
    assert response.status_code == 404


def test_a_stored_point_with_97_percent_success_misses_the_default_99_percent(client, stored_run):
    response = client.get(
        f"/api/v1/costs/runs/{stored_run.pk}/slo?ttft_s_max=2.22&tier=owning_hyperscaler"
    )
    body = response.json()
    assert body["lower"] == "c1" and body["provenance"] == "measured"
    assert "success ≥ 99%" in body["slo"]


def test_an_unstored_percentile_is_a_422_naming_the_stored_ones(client, stored_run):
    response = client.get(
        f"/api/v1/costs/runs/{stored_run.pk}/slo?ttft_s_max=2.22&ttft_percentile=p75&usd_per_gpu_hour=2"
    )
    assert response.status_code == 422
    (error,) = response.json()["detail"]
    assert error["path"] == "ttft_percentile"
    assert "p50, p90, p95, p99, p99.9" in error["message"]


def test_p99_9_reads_the_stored_p999(client):
    points = [
        {
            "label": "c1",
            "tok_per_s_per_gpu": 100,
            "metrics": {"ttft_s.p999": 1.0},
            "success_rate": 1,
        }
    ]
    payload = {"points": points, "slo": {"ttft_s_max": 2, "ttft_percentile": "p99.9"}}
    response = client.post(
        "/api/v1/costs/slo", {**payload, "usd_per_gpu_hour": 2.0}, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["meets"] is True


def test_the_procurement_table_through_the_api(client, document, org):
    from tests.apps.costs.test_page import all_succeeded

    ingest_reviewed(document=all_succeeded(document), org=org)
    response = client.get(
        "/api/v1/costs/procurement?ttft_s_max=2.22&price_MI355X=2.80&token_kind=total"
    )
    assert response.status_code == 200, response.content
    (row,) = response.json()["rows"]
    assert row["usd_per_mtok"] == pytest.approx(2.80 / 5.04)
    assert row["price_source"] == "own: your own price"


def test_the_procurement_table_names_a_bad_field(client, db):
    response = client.get("/api/v1/costs/procurement?requests_per_day=-5")
    assert response.status_code == 422
    assert "requests_per_day" in detail_paths(response)


def test_comparing_two_runs_gives_the_ratio_and_what_differs(client, stored_run, document, org):

    other = dict(document)
    other["idempotency_key"] = "b200-run"
    other["deployment"] = dict(document["deployment"], accelerator="B200")
    other["deployment"]["quantization"] = {"weights": "FP8"}
    b200 = ingest_reviewed(document=other, org=org, is_public=True).run
    response = client.get(
        f"/api/v1/costs/compare?run_a={stored_run.pk}&run_b={b200.pk}&ttft_s_max=2.22"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    # Same throughput (1,400 tok/s/GPU both), so the cost ratio is the price ratio: the
    # newest set's 1.50 / 1.73.
    assert body["throughput_ratio"] == pytest.approx(1.0)
    assert body["cost_ratio"] == pytest.approx(1.50 / 1.73)
    fields = {d["field"]: (d["a"], d["b"]) for d in body["differences"]}
    assert fields["accelerator"] == ("MI355X", "B200")
    assert fields["quantization"] == ("MXFP4", "FP8")
    assert "owning_hyperscaler $1.5/GPU-hr" in fields["price"][0]


def test_comparing_when_one_side_misses_the_slo_says_which(client, stored_run):
    response = client.get(
        f"/api/v1/costs/compare?run_a={stored_run.pk}&run_b={stored_run.pk}&ttft_s_max=0.1"
    )
    assert response.status_code == 200
    body = response.json()
    assert body["cost_ratio"] is None
    assert body["reason"].startswith(f"run {stored_run.pk}: no measured point meets")


def test_comparing_a_missing_run_names_it(client, stored_run):
    response = client.get(f"/api/v1/costs/compare?run_a={stored_run.pk}&run_b=999999")
    assert response.status_code == 404
    assert detail_paths(response) == {"run_b": "no visible run with throughput"}
