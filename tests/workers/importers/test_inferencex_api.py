"""InferenceX's API responses read as runs: what a row is, how rows group, what is refused."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from workers.importers import ImportFailure, import_file, inferencex_api, inferencex_recipe, sniff
from workers.result_facts import Deployment

SNAPSHOT = Path(__file__).parents[3] / "apps" / "catalog" / "reference" / "inferencex"
SOURCE = inferencex_api.Source(description="test")


def rows(name: str) -> list[dict[str, Any]]:
    return json.loads((SNAPSHOT / name).read_bytes())


def test_a_sweep_of_one_ci_run_is_one_run_with_a_point_per_concurrency():
    latest = inferencex_api.benchmark_rows(rows("benchmarks.json"), "latest")
    documents = inferencex_api.document_rows(latest, source=SOURCE)
    # 435 rows of 301 (configuration, lengths, date, CI run) groups.
    assert len(documents) == 301
    assert sum(len(d.points) for d in documents) == 435
    for document in documents:
        concurrencies = [p.concurrency for p in document.points]
        assert concurrencies == sorted(set(concurrencies))
    # Oldest first: stored in the order they were measured.
    dates = [d.environment.started_at for d in documents]
    assert dates == sorted(dates)


def test_a_row_in_both_responses_is_one_row_kept_with_the_more_figures():
    latest = inferencex_api.benchmark_rows(rows("benchmarks.json"), "latest")
    history = inferencex_api.benchmark_rows(rows("benchmarks-history.json"), "history")
    merged = {row.key: row for row in inferencex_api.merged(history, latest)}
    shared = {row.key for row in latest} & {row.key for row in history}
    assert len(shared) == 230 and len(merged) == 435 + 1_462 - 230
    by_key = {row.key: row for row in latest}
    for key in shared:
        # The latest response's row, which states what history's does and more.
        assert merged[key].row["metrics"] == by_key[key].row["metrics"]


def test_known_rows_are_skipped_and_a_restated_figure_is_a_new_row():
    latest = rows("benchmarks.json")
    known = frozenset(r.key for r in inferencex_api.benchmark_rows(latest, "latest"))
    restated = copy.deepcopy(latest)
    restated[7]["metrics"]["median_ttft"] += 0.001
    again = inferencex_api.benchmark_rows(restated, "latest")
    documents = inferencex_api.document_rows(again, source=SOURCE, known=known)
    assert len(documents) == 1 and len(documents[0].points) == 1
    assert documents[0].points[0].concurrency == restated[7]["conc"]
    # A figure outside the identity (power, p90) changing is the same row.
    restated = copy.deepcopy(latest)
    restated[7]["metrics"]["avg_power_w"] = 1.0
    again = inferencex_api.benchmark_rows(restated, "latest")
    assert inferencex_api.document_rows(again, source=SOURCE, known=known) == []


def test_a_disaggregated_row_counts_both_pools_and_keeps_their_layout():
    row = next(r for r in rows("benchmarks.json") if r["disagg"] and r["prefill_num_workers"])
    [document] = inferencex_api.document_rows(
        inferencex_api.benchmark_rows([row], "one"), source=SOURCE
    )
    split = document.deployment.disaggregation
    assert document.deployment.gpus == row["num_prefill_gpu"] + row["num_decode_gpu"]
    assert (split.prefill_gpus, split.decode_gpus) == (
        row["num_prefill_gpu"],
        row["num_decode_gpu"],
    )
    assert (split.prefill.tp, split.decode.tp) == (row["prefill_tp"], row["decode_tp"])
    assert split.label().startswith(f"{row['prefill_num_workers']}P ")
    assert f" + {row['decode_num_workers']}D " in split.label()
    point = document.points[0]
    assert point.throughput.total_tok_s == pytest.approx(
        row["metrics"]["tput_per_gpu"] * document.deployment.gpus, rel=1e-12
    )
    assert document.deployment.parallelism.tp is None  # stated per pool, not overall


def test_a_disaggregated_rows_rates_are_each_multiplied_by_their_own_pool():
    # InferenceX states output per decode GPU, input per prefill GPU, total per GPU of both.
    row = next(
        r
        for r in rows("benchmarks.json")
        if r["disagg"] and r["is_multinode"] and r["num_prefill_gpu"] != r["num_decode_gpu"]
    )
    [document] = inferencex_api.document_rows(
        inferencex_api.benchmark_rows([row], "one"), source=SOURCE
    )
    m, p, d = row["metrics"], row["num_prefill_gpu"], row["num_decode_gpu"]
    throughput = document.points[0].throughput
    assert throughput.output_tok_s == pytest.approx(m["output_tput_per_gpu"] * d, rel=1e-12)
    assert throughput.input_tok_s == pytest.approx(m["input_tput_per_gpu"] * p, rel=1e-12)
    assert throughput.total_tok_s == pytest.approx(m["tput_per_gpu"] * (p + d), rel=1e-12)
    # The source's own identity, so the stored totals add up.
    assert throughput.total_tok_s == pytest.approx(
        throughput.output_tok_s + throughput.input_tok_s, rel=1e-6
    )
    kept = document.environment.extra["inferencex"]["figures_as_written"][str(row["conc"])]
    assert kept["per_gpu"]["output_tput_per_gpu"] == m["output_tput_per_gpu"]
    assert kept["per_gpu_over"] == {
        "tput_per_gpu": "all GPUs (prefill + decode)",
        "output_tput_per_gpu": "decode GPUs",
        "input_tput_per_gpu": "prefill GPUs",
    }


def test_an_aggregated_rows_rates_are_all_over_its_gpus():
    row = next(r for r in rows("benchmarks.json") if not r["disagg"])
    [document] = inferencex_api.document_rows(
        inferencex_api.benchmark_rows([row], "one"), source=SOURCE
    )
    gpus, m = document.deployment.gpus, row["metrics"]
    throughput = document.points[0].throughput
    assert throughput.output_tok_s == pytest.approx(m["output_tput_per_gpu"] * gpus, rel=1e-12)
    assert throughput.input_tok_s == pytest.approx(m["input_tput_per_gpu"] * gpus, rel=1e-12)


def test_the_file_formats_are_sniffed_and_imported_without_facts():
    data = (SNAPSHOT / "evaluations.json").read_bytes()
    assert sniff(data, "evaluations.json") == "inferencex-api-evaluations"
    first = import_file(data, "evaluations.json")[0]
    assert first.accuracy[0].n == 1319 and first.deployment.accelerator == "MI300X"
    assert first.model.name == "MiniMax-M3"
    bench = (SNAPSHOT / "benchmarks.json").read_bytes()
    assert sniff(bench, "benchmarks.json") == "inferencex-api-benchmarks"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.update(extra_field=1), "row 0: unknown field(s) extra_field"),
        (lambda r: r.pop("run_url"), "row 0: missing field(s) run_url"),
        (lambda r: r.update(run_url=""), "row 0: no run_url: not a published measurement"),
        (lambda r: r.update(date="11/06/2026"), "row 0: date '11/06/2026' is not YYYY-MM-DD"),
        (lambda r: r["metrics"].update(p99_ttft="x"), "metrics.p99_ttft should be a number"),
        (lambda r: r["metrics"].update(p75_ttft=1.0), "unknown figure(s) metrics.p75_ttft"),
    ],
)
def test_a_row_that_breaks_the_rules_is_refused_naming_it(change, message):
    row = copy.deepcopy(rows("benchmarks.json")[0])
    change(row)
    with pytest.raises(ImportFailure, match=message.replace("(", r"\(").replace(")", r"\)")):
        inferencex_api.benchmark_rows([row], "benchmarks")


def test_an_aggregated_row_serves_on_its_tp_gpus_as_its_per_gpu_figures_imply():
    # The figures themselves say how many GPUs they were divided by: concurrency x median
    # interactivity is about the output tok/s of the whole deployment.
    every = rows("benchmarks.json") + rows("benchmarks-history.json")
    aggregated = [
        r
        for r in every
        if not r["disagg"] and {"median_intvty", "output_tput_per_gpu"} <= set(r["metrics"])
    ]
    ratios = []
    for row in aggregated:
        [document] = inferencex_api.document_rows(
            inferencex_api.benchmark_rows([row], "one"), source=SOURCE
        )
        m = row["metrics"]
        implied = row["conc"] * m["median_intvty"] / m["output_tput_per_gpu"]
        ratios.append(implied / document.deployment.gpus)
    close = [r for r in ratios if 0.95 <= r <= 1.2]
    assert len(close) >= 0.9 * len(ratios), sorted(ratios)[:: len(ratios) // 20]
    ep8 = next(r for r in aggregated if r["decode_ep"] == 8 and r["decode_tp"] == 8)
    assert ep8["num_decode_gpu"] == 64
    [document] = inferencex_api.document_rows(
        inferencex_api.benchmark_rows([ep8], "one"), source=SOURCE
    )
    assert document.deployment.gpus == 8


def _evaluation(**changes: Any) -> dict[str, Any]:
    [row] = [
        r
        for r in rows("evaluations.json")
        if (r["model"], r["hardware"], r["framework"], r["precision"], r["spec_method"])
        == ("dsr1", "mi355x", "sglang", "fp8", "none")
        and r["decode_tp"] == 8
        and r["id"] == "6957"
    ]
    return {**row, **changes}


def _benchmark_deployment() -> dict[str, Any]:
    [row] = [
        r
        for r in rows("benchmarks.json")
        if (r["hardware"], r["framework"], r["precision"], r["spec_method"], r["decode_tp"])
        == ("mi355x", "sglang", "fp8", "none", 8)
    ][:1]
    return inferencex_api.deployment_of(row)


def test_an_aggregated_frameworks_evaluation_sits_on_the_deployment_its_benchmarks_ran():
    row = _evaluation()
    assert row["disagg"] is True  # as InferenceX writes it: one engine's two pools
    [document] = inferencex_api.evaluation_documents([row], source=SOURCE, where="e")
    assert document.deployment == Deployment.model_validate(_benchmark_deployment())
    assert document.deployment.disaggregation is None and document.deployment.gpus == 8
    assert document.environment.extra["inferencex"]["disagg_as_written"] is True


def test_an_evaluation_of_a_disaggregated_runtime_or_uneven_pools_is_kept_as_written():
    for row in (
        _evaluation(framework="dynamo-sglang"),
        _evaluation(num_prefill_gpu=16),
        _evaluation(prefill_tp=4),
    ):
        [document] = inferencex_api.evaluation_documents([row], source=SOURCE, where="e")
        assert document.deployment.disaggregation is not None


def test_a_recipe_states_the_kv_cache_and_draft_tokens_its_flags_set():
    deployment = _benchmark_deployment()
    assert "--kv-cache-dtype fp8_e4m3" in deployment["engine_flags"]
    assert deployment["quantization"] == {"weights": "FP8", "kv_cache": "FP8"}
    recipe = {"flags": ["--speculative-num-draft-tokens=4", "--kv-cache-dtype auto"]}
    facts = inferencex_recipe.recipe_facts(recipe, {**deployment, "speculative": {"method": "mtp"}})
    assert facts == {"speculative": {"method": "mtp", "draft_tokens": 4}}


def test_every_disaggregated_row_adds_up_on_its_pools_but_eight_gb200_rows_kept_as_written():
    # total x (P+D) = output x D + input x P: the source's own identity, so the stored
    # totals add up (total = output + input) for every disaggregated row but eight. Those
    # eight (GB200 dynamo, 2025-12, not multinode) state each pool as the whole deployment
    # (P = D = its TP); their figures add up with P + D = that TP instead. They are stored as
    # written, not dropped, for the row audit to flag.
    latest = inferencex_api.benchmark_rows(rows("benchmarks.json"), "latest")
    history = inferencex_api.benchmark_rows(rows("benchmarks-history.json"), "history")
    split = [r.row for r in inferencex_api.merged(history, latest) if r.row["disagg"]]
    contradicted = []
    for row in split:
        [document] = inferencex_api.document_rows(
            inferencex_api.benchmark_rows([row], "one"), source=SOURCE
        )
        t = document.points[0].throughput
        if t.total_tok_s != pytest.approx(t.output_tok_s + t.input_tok_s, rel=1e-6):
            contradicted.append(row)
    assert len(split) - len(contradicted) == 537
    assert len(contradicted) == 8
    for row in contradicted:
        assert row["hardware"] == "gb200" and not row["is_multinode"]
        assert row["num_prefill_gpu"] == row["num_decode_gpu"] == row["prefill_tp"]
        m, stated = row["metrics"], row["num_prefill_gpu"]
        # The decode pool the figures imply when both pools together are the stated TP.
        decode = (
            stated
            * (m["input_tput_per_gpu"] - m["tput_per_gpu"])
            / (m["input_tput_per_gpu"] - m["output_tput_per_gpu"])
        )
        assert decode == pytest.approx(round(decode), abs=1e-6) and 0 < round(decode) < stated
