"""InferenceX files: real fixtures (see tests/fixtures/peer-results/README.md)."""

from __future__ import annotations

import hashlib

import pytest

from tests.workers.importers.files import fixture_path, read_json
from workers.importers import Facts, ImportFailure, import_file, inferencex_rows
from workers.importers.engines import engine_name

SUMMARIES = [
    "inferencex/glm5_fp8_vllm_tp8_isl1024_osl128_conc4.json",
    "inferencex/glm5_fp8_vllm_tp8_isl1024_osl128_conc16.json",
    "inferencex/glm5_fp8_vllm_tp8_isl1024_osl128_conc64.json",
    "inferencex/glm5_fp8_vllm_tp8_isl16384_osl128_conc16.json",
]


def _import(relative: str, facts: Facts, **kwargs):
    path = fixture_path(relative)
    return import_file(path.read_bytes(), path.name, facts=facts, **kwargs)


@pytest.mark.parametrize("relative", SUMMARIES)
def test_it_converts_the_summary_seconds_to_milliseconds_exactly(relative, h200_vllm):
    raw = read_json(relative)
    [doc] = _import(relative, h200_vllm)
    point = doc.points[0]
    latency = point.latency_ms
    # The script stores seconds (perf_counter differences); the document holds ms.
    assert latency.ttft.p50 == raw["median_ttft"] * 1000
    assert latency.ttft.p99 == raw["p99_ttft"] * 1000
    assert latency.e2el.p50 == raw["median_e2el"] * 1000
    assert latency.e2el.p99 == raw["p99_e2el"] * 1000
    assert latency.tpot.p50 == raw["median_tpot"] * 1000
    assert latency.tpot.p99 == raw["p99_tpot"] * 1000
    assert latency.itl is None  # the file has no ITL; none is made up


@pytest.mark.parametrize("relative", SUMMARIES)
def test_it_keeps_the_summary_counts_and_throughputs_as_written(relative, h200_vllm):
    raw = read_json(relative)
    [doc] = _import(relative, h200_vllm)
    point = doc.points[0]
    assert point.concurrency == raw["max_concurrency"]
    assert point.window_s == raw["duration"]
    assert point.throughput.requests_per_s == raw["request_throughput"]
    assert point.throughput.input_tok_s == raw["input_throughput"]
    assert point.throughput.output_tok_s == raw["output_throughput"]
    assert point.throughput.total_tok_s is None
    assert point.tokens.input == raw["total_input_tokens"]
    assert point.tokens.output == raw["total_output_tokens"]
    assert point.requests.succeeded == raw["completed"]
    assert point.requests.total == raw["num_prompts"]
    assert point.request_rate is None  # "inf": closed loop
    assert doc.scenario.arrival == "closed"
    assert doc.model.name == raw["model_id"]


def test_it_marks_the_document_imported_with_the_file_hash(h200_vllm):
    relative = SUMMARIES[0]
    data = fixture_path(relative).read_bytes()
    [doc] = _import(relative, h200_vllm)
    digest = hashlib.sha256(data).hexdigest()
    assert doc.provenance == "imported"
    assert doc.idempotency_key == f"sha256:{digest}"
    assert doc.source.file_sha256 == digest
    assert doc.source.file_name == fixture_path(relative).name
    assert "InferenceX" in doc.source.tool


def test_it_refuses_the_summary_without_the_hardware_facts():
    with pytest.raises(ImportFailure) as failure:
        _import(SUMMARIES[0], Facts())
    message = str(failure.value)
    assert "deployment.accelerator" in message  # the one fact the file name does not state
    for name in ("deployment.gpus", "deployment.engine.name", "deployment.quantization.weights"):
        assert name not in message


def test_it_reads_the_deployment_and_shape_from_the_summary_file_name():
    facts = Facts.model_validate({"deployment": {"accelerator": "H200"}})
    [doc] = _import("inferencex/glm5_fp8_vllm_tp8_isl16384_osl128_conc16.json", facts)
    assert (doc.scenario.input_tokens, doc.scenario.output_tokens) == (16384, 128)
    assert (doc.deployment.gpus, doc.deployment.parallelism.tp) == (8, 8)
    assert (doc.deployment.engine.name, doc.deployment.quantization.weights) == ("vllm", "FP8")


def test_it_refuses_a_summary_named_otherwise_without_the_scenario_lengths(h200_vllm):
    data = fixture_path(SUMMARIES[0]).read_bytes()
    with pytest.raises(ImportFailure, match=r"scenario\.input_tokens, scenario\.output_tokens"):
        import_file(data, "summary.json", facts=h200_vllm)


def test_it_refuses_facts_that_contradict_the_file_name(h200_vllm):
    facts = Facts.model_validate({**h200_vllm.as_tree(), "scenario": {"input_tokens": 1024}})
    with pytest.raises(ImportFailure, match="scenario.input_tokens: the file says 16384"):
        _import("inferencex/glm5_fp8_vllm_tp8_isl16384_osl128_conc16.json", facts)


def test_it_names_an_unknown_numeric_field_in_a_summary(h200_vllm):
    raw = read_json(SUMMARIES[0])
    raw["mean_ttft"] = 0.3  # not written by the script: unit and meaning unknown
    data = __import__("json").dumps(raw).encode()
    with pytest.raises(ImportFailure, match="unknown field.*mean_ttft"):
        import_file(data, "x.json", facts=h200_vllm, format_name="inferencex-summary")


def test_it_keeps_metadata_strings_of_a_summary(h200_vllm):
    raw = read_json(SUMMARIES[0])
    raw["tp"] = "8"  # what `--metadata tp=8` writes
    data = __import__("json").dumps(raw).encode()
    [doc] = import_file(data, fixture_path(SUMMARIES[0]).name, facts=h200_vllm)
    assert doc.environment.extra["metadata"] == {"tp": "8"}


def test_it_makes_one_document_per_eval_record():
    raw = read_json("inferencex/supplemental-evals.json")
    docs = _import(
        "inferencex/supplemental-evals.json",
        Facts.model_validate({"deployment": {"gpus": "tp"}}),
    )
    assert len(docs) == len(raw) == 66
    keys = {doc.idempotency_key for doc in docs}
    assert len(keys) == 66
    for record, doc in zip(raw, docs, strict=True):
        strict = next(a for a in doc.accuracy if a.metric == "em_strict")
        flexible = next(a for a in doc.accuracy if a.metric == "em_flexible")
        assert strict.score == record["em_strict"]
        assert strict.stderr == record["em_strict_se"]
        assert flexible.score == record["em_flexible"]
        assert flexible.stderr == record["em_flexible_se"]
        assert strict.n == record["n_eff"]
        assert strict.task == record["task"]
        assert doc.model.name == record["model"]
        # One name per engine: InferenceX's `trt` is stored as trtllm, its spelling kept.
        assert doc.deployment.engine.name == engine_name(record["framework"])
        assert doc.environment.extra.get("engine_as_written") == (
            None if record["framework"] == engine_name(record["framework"]) else "trt"
        )
        assert doc.deployment.parallelism.tp == record["tp"]
        assert doc.deployment.gpus == record["tp"]
        assert doc.deployment.parallelism.ep == record["ep"]
        assert doc.deployment.parallelism.dp_attention == (record["dp_attention"] == "true")
        assert doc.deployment.quantization.weights == record["precision"].upper()
        assert doc.environment.extra["conc"] == record["conc"]
        assert doc.points == []


def test_it_reads_speculative_decoding_and_the_sku_from_eval_records():
    raw = read_json("inferencex/supplemental-evals.json")
    docs = _import(
        "inferencex/supplemental-evals.json",
        Facts.model_validate({"deployment": {"gpus": "tp"}}),
    )
    for record, doc in zip(raw, docs, strict=True):
        if record["spec_decoding"] == "mtp":
            assert doc.deployment.speculative.method == "mtp"
        else:
            assert doc.deployment.speculative is None
        assert doc.deployment.accelerator == record["hw"].removesuffix("-TRT")


def test_it_refuses_eval_records_without_a_gpu_count():
    with pytest.raises(ImportFailure, match="deployment.gpus"):
        _import("inferencex/supplemental-evals.json", Facts())


def test_it_refuses_a_fact_that_contradicts_an_eval_record():
    facts = Facts.model_validate({"deployment": {"gpus": "tp", "accelerator": "H100"}})
    with pytest.raises(ImportFailure, match="deployment.accelerator: the file says 'B200'"):
        _import("inferencex/supplemental-evals.json", facts)


@pytest.mark.parametrize(
    ("hw", "sku"),
    [
        ("b200-dgxc-slurm", "B200"),
        ("b200-dgxc", "B200"),
        ("cluster:mi355x-amds", "MI355X"),
        ("B200-TRT", "B200"),
        ("h200", "H200"),
    ],
)
def test_a_runner_pools_name_is_stored_as_its_accelerator(hw, sku):
    assert inferencex_rows.row_sku(hw) == sku
