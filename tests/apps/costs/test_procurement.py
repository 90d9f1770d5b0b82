"""The procurement calculator's pure parts: parsing the page state, ranking, exporting."""

from __future__ import annotations

import pytest

from apps.costs.charts import cost_vs_interactivity
from apps.costs.forms import ProcurementQuery
from apps.costs.formulas import TokenKind
from apps.costs.procurement import DeploymentCurve, procurement_rows
from apps.costs.procurement_export import export_records
from apps.costs.slo import SloPoint
from tests.apps.costs.books import AUGUST_2025


def parse_inputs(params, book=None, **kwargs):
    """The calculator's inputs and problems, as the page reads its query string."""
    query = ProcurementQuery(params, book, **kwargs)
    return query.inputs(), query.problems()


def curve(run_id: int, accelerator: str, points: list[SloPoint], **changes) -> DeploymentCurve:
    fields = {
        "run_id": run_id,
        "label": f"8x{accelerator}",
        "accelerator": accelerator,
        "gpus": 8,
        "engine": "sglang",
        "quantization": "FP8",
        "parallelism": "TP8",
        "scenario": "1k/1k",
        "input_tokens": 1000,
        "output_tokens": 1000,
        "cache_hit_rate": 0.0,
        "provenance": "measured",
        "token_kind": "total",
        "points": points,
    } | changes
    return DeploymentCurve(**fields)


def point(label: str, tput: float, ttft: float, inter: float) -> SloPoint:
    return SloPoint(label, tput, {"ttft_s.p99": ttft, "interactivity.p50": inter}, 1.0)


MI355X = curve(1, "MI355X", [point("c1", 500, 0.5, 200), point("c16", 1400, 2.0, 35)])
B200 = curve(2, "B200", [point("c1", 600, 0.4, 220), point("c16", 2000, 1.9, 40)])


def inputs(**params: str):
    base = {
        "ttft_s_max": "2.22",
        "interactivity_min": "30",
        "input_tokens": "1000",
        "output_tokens": "1000",
        "cache_hit_rate": "0",
        "token_kind": "total",  # the curves below are total tok/s
    }
    parsed, errors = parse_inputs(base | params)
    assert errors == []
    return parsed


def test_the_defaults_make_a_complete_state():
    parsed, errors = parse_inputs({})
    assert errors == []
    assert parsed.tier == "owning_hyperscaler"
    # The leaderboard's default basis too: one $/Mtok for one deployment on every page.
    assert parsed.token_kind is TokenKind.OUTPUT
    assert parsed.slo.bounds == ()
    assert parsed.workload.requests_per_day == 1_000_000
    # The seed workload: 20k in / 1k out / 60% prefix cache.
    assert (parsed.workload.input_tokens, parsed.workload.output_tokens) == (20_000, 1000)
    assert parsed.workload.cache_hit_rate == 0.6


def test_own_prices_are_read_per_accelerator():
    parsed = inputs(price_mi355x="2.5", price_B200="")
    assert parsed.own_prices == {"MI355X": 2.5}
    assert "price_B200" not in ProcurementQuery({"price_B200": " "}).data


def test_every_bad_field_is_reported_at_once():
    _, errors = parse_inputs({"requests_per_day": "x", "headroom": "-1", "price_B200": "abc"})
    fields = {error.field for error in errors}
    assert {"requests_per_day", "price_B200"} <= fields


def test_rows_rank_cheapest_per_month_first():
    # B200 at $1.95: 2,000 tok/s/GPU; MI355X at $1.48: 1,400 tok/s/GPU.
    # $/Mtok: B200 1.95 / 7.2 = 0.2708; MI355X 1.48 / 5.04 = 0.2937.
    # 100M req/day x 2 / 86,400 x 1.2 = 2,777.8 req/s at 2,000 tokens each:
    # B200 1 req/s/GPU -> 348 x 8 = 2,784 GPUs, $3,963,024/month;
    # MI355X 0.7 req/s/GPU -> 497 x 8 = 3,976 GPUs, $4,295,670/month.
    rows = procurement_rows([MI355X, B200], inputs(requests_per_day="1e8"), AUGUST_2025)
    assert [row.curve.accelerator for row in rows] == ["B200", "MI355X"]
    assert rows[0].usd_per_mtok == pytest.approx(1.95 / 7.2)
    assert rows[1].usd_per_mtok == pytest.approx(1.48 / 5.04)
    assert (rows[0].plan.gpus, rows[1].plan.gpus) == (2784, 3976)
    assert rows[0].plan.usd_per_month == pytest.approx(2784 * 1.95 * 730)


def test_whole_replicas_can_make_the_dearer_token_the_cheaper_month():
    # 1M req/day -> 27.78 req/s with headroom. B200 needs 27.8 GPUs -> 4 x 8 = 32 ($45,552);
    # MI355X needs 39.7 -> 5 x 8 = 40 ($43,216): cheaper per month despite dearer tokens.
    rows = procurement_rows([MI355X, B200], inputs(), AUGUST_2025)
    assert [row.curve.accelerator for row in rows] == ["MI355X", "B200"]
    assert rows[0].plan.usd_per_month == pytest.approx(40 * 1.48 * 730)
    assert rows[1].plan.usd_per_month == pytest.approx(32 * 1.95 * 730)


def test_an_own_price_can_change_the_ranking():
    rows = procurement_rows([MI355X, B200], inputs(price_MI355X="1.0"), AUGUST_2025)
    assert [row.curve.accelerator for row in rows] == ["MI355X", "B200"]
    assert rows[0].price.source == "your own price"


def test_a_deployment_without_a_price_ranks_last_with_its_reason():
    unknown = curve(3, "TPU9", [point("c1", 5000, 0.1, 500)])
    rows = procurement_rows([unknown, MI355X], inputs(), AUGUST_2025)
    assert rows[-1].curve.accelerator == "TPU9"
    assert not rows[-1].ok
    assert rows[-1].problem.startswith("no price: unknown accelerator 'TPU9'")


def test_a_deployment_that_misses_the_slo_ranks_last_with_its_reason():
    rows = procurement_rows([MI355X, B200], inputs(ttft_s_max="0.45"), AUGUST_2025)
    assert [row.ok for row in rows] == [True, False]
    assert rows[1].curve.accelerator == "MI355X"
    assert rows[1].usd_per_mtok is None
    assert rows[1].miss is not None
    assert rows[1].problem == (
        "nearest point c1: TTFT p99 is 0.5 s, 0.05 s (11%) over the bound TTFT p99 ≤ 0.45 s"
    )
    # The nearest SLO it meets is the nearest point's own TTFT, and it has a price.
    assert rows[1].miss.relaxed.describe() == (
        "TTFT p99 ≤ 0.5 s, interactivity p50 ≥ 30 tok/s/user, success ≥ 99%"
    )
    assert rows[1].relaxed_plan is not None and rows[1].relaxed_plan.feasible


def test_unlabelled_throughput_is_flagged():
    published = curve(4, "MI355X", [point("node", 328.25, 2.2, 31)], token_kind="unlabelled")
    rows = procurement_rows([published], inputs(), AUGUST_2025)
    assert any("does not say which tokens" in w for w in rows[0].plan.warnings)


def test_exports_are_flat_and_say_which_price_was_used():
    parsed = inputs()
    records = export_records(procurement_rows([MI355X, B200], parsed, AUGUST_2025), parsed)
    assert [r["rank"] for r in records] == [1, 2]
    assert records[0]["price_source"].startswith("owning_hyperscaler: reference")
    assert records[0]["usd_per_mtok"] == pytest.approx(1.48 / 5.04)
    assert records[0]["gpus_needed"] == 40
    # MI355X all-in 2.65 kW per GPU over 1,400 tok/s/GPU = 1.893 J/token.
    assert records[0]["joules_per_token"] == pytest.approx(2650 / 1400)


def test_the_chart_prices_every_measured_point_and_marks_the_slo():
    parsed = inputs()
    rows = procurement_rows([MI355X], parsed, AUGUST_2025)
    figure = cost_vs_interactivity(rows, parsed.slo)
    (trace,) = figure["data"]
    assert trace["x"] == [35, 200]  # sorted by interactivity
    assert trace["y"] == [round(1.48 / 5.04, 6), round(1.48 / 1.8, 6)]
    assert figure["layout"]["shapes"][0]["x0"] == 30


def test_the_chart_is_empty_without_interactivity():
    parsed = inputs(interactivity_min="")
    bare = curve(5, "B200", [SloPoint("c1", 100, {"ttft_s.p99": 0.2}, 1.0)])
    figure = cost_vs_interactivity(procurement_rows([bare], parsed, AUGUST_2025), parsed.slo)
    assert figure["data"] == []
    assert figure["layout"]["shapes"] == []
    assert "no priced deployment here reports interactivity" in figure["empty"]


def test_a_capex_and_opex_price_applies_to_its_accelerator():
    # $30,000 + $10,000 over 4 years = $1.14155/h; 2.65 kW (MI355X all-in, from the book)
    # x $0.10/kWh = $0.265/h; total $1.40655/GPU-hr at full utilization.
    parsed, errors = parse_inputs(
        {
            "capex_accelerator": "MI355X",
            "gpu_purchase_usd": "30000",
            "server_share_usd": "10000",
            "usd_per_kwh": "0.10",
        },
        AUGUST_2025,
    )
    assert errors == []
    assert parsed.capex.usd_per_gpu_hour == pytest.approx(40_000 / 35_040 + 0.265)
    rows = procurement_rows([MI355X, B200], parsed, AUGUST_2025)
    by_sku = {row.curve.accelerator: row for row in rows}
    assert by_sku["MI355X"].price.source == "your capex + opex"
    assert by_sku["B200"].price.source == "reference tier"


def test_a_capex_price_needs_a_purchase_price_and_a_known_power():
    _, errors = parse_inputs({"capex_accelerator": "MI355X"}, AUGUST_2025)
    assert [e.field for e in errors] == ["gpu_purchase_usd"]
    _, errors = parse_inputs({"capex_accelerator": "TPU9", "gpu_purchase_usd": "1"}, {})
    assert [e.field for e in errors] == ["kw_per_gpu"]
    _, errors = parse_inputs(
        {"capex_accelerator": "B200", "gpu_purchase_usd": "1", "utilization": "0"},
        AUGUST_2025,
    )
    assert [e.field for e in errors] == ["utilization"]
