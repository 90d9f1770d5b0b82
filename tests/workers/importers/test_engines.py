"""Engine names are stored as one name per engine, whoever spelled them (issue 59)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workers.importers import ImportFailure, facts_from_arguments, import_file
from workers.importers.engines import ALIASES, engine_name

WILD = Path(__file__).resolve().parents[2] / "fixtures" / "wild"
# A file that names no engine (guidellm's report) and files that name theirs.
NAMELESS = WILD / "guidellm" / "guidellm-bench_Qwen3-30B-A3B_tp4_fp8_benchmarks.json"
TRTLLM_LOG = next((WILD / "trtllm-bench-log").glob("*_result_128_128_30000.txt"))
VLLM_ROW = next((WILD / "inferencex-agg").glob("agg_kimik2.5_1k1k_*.json"))
SGLANG_INFO = next((WILD / "sglang-bench-serving").glob("TonyLi15-*_agg_*.jsonl"))


def _facts(**flags: object):
    return facts_from_arguments({k: str(v) if k == "gpus" else v for k, v in flags.items()})


# Every alias, with where that spelling is written (engines.ALIASES says it once).
@pytest.mark.parametrize(
    ("alias", "engine", "source"),
    [(alias, engine, source) for alias, (engine, source) in ALIASES.items()],
    ids=list(ALIASES),
)
def test_every_alias_imports_to_its_one_engine_with_the_spelling_kept(alias, engine, source):
    assert source  # each spelling says where it is written
    given = {"accelerator": "ARC-B60", "gpus": 4, "weights": "FP8"}
    data = NAMELESS.read_bytes()
    [doc] = import_file(data, NAMELESS.name, facts=_facts(engine=alias, **given))
    [plain] = import_file(data, NAMELESS.name, facts=_facts(engine=engine, **given))
    assert doc.deployment.engine.name == engine
    # One engine is one deployment, whichever spelling named it.
    assert doc.deployment_fingerprint() == plain.deployment_fingerprint()
    kept = doc.environment.extra.get("engine_as_written")
    assert kept == (None if alias == engine else alias)


@pytest.mark.parametrize("spelling", ["TRT-LLM", "TensorRT-LLM", "SGLang", "vLLM", " VLLM "])
def test_case_and_spacing_name_the_same_engine(spelling):
    assert engine_name(spelling) == ALIASES[spelling.strip().lower()][0]


def test_an_unknown_engine_is_kept_as_written_not_guessed():
    # NVIDIA Dynamo around TensorRT-LLM is another serving stack, not a spelling of it.
    assert engine_name("dynamo-trt") == "dynamo-trt"
    assert engine_name("hf") == "hf"


@pytest.mark.parametrize("given", ["trt-llm", "tensorrt-llm", "TRT-LLM", "trt", "tensorrtllm"])
def test_a_tensorrt_llm_report_accepts_the_engine_in_another_spelling(given):
    # The report states `trtllm`; before issue 59, `--engine trt-llm` was refused as a
    # contradiction ("the file says 'trtllm', the facts say 'trt-llm'").
    [doc] = import_file(
        TRTLLM_LOG.read_bytes(), TRTLLM_LOG.name, facts=_facts(engine=given, accelerator="H100")
    )
    assert doc.deployment.engine.name == "trtllm"
    # The file names its engine, so its spelling (the one stored) is what it wrote.
    assert "engine_as_written" not in doc.environment.extra


@pytest.mark.parametrize("given", ["vllm-openai", "vLLM", "vllm-openai-rocm"])
def test_an_inferencex_row_accepts_vllm_in_another_spelling(given):
    [doc] = import_file(VLLM_ROW.read_bytes(), VLLM_ROW.name, facts=_facts(engine=given))
    assert doc.deployment.engine.name == "vllm"


@pytest.mark.parametrize("given", ["sgl", "SGLang", "sglang-oai"])
def test_an_sglang_file_accepts_sglang_in_another_spelling(given):
    facts = _facts(engine=given, accelerator="GH200", weights="BF16")
    [doc] = import_file(SGLANG_INFO.read_bytes(), SGLANG_INFO.name, facts=facts)
    assert doc.deployment.engine.name == "sglang"


def test_another_engine_is_still_a_contradiction():
    with pytest.raises(ImportFailure, match="the file says 'trtllm', the facts say 'vllm'"):
        facts = _facts(engine="vllm", accelerator="H100")
        import_file(TRTLLM_LOG.read_bytes(), TRTLLM_LOG.name, facts=facts)
