"""GSM8K end to end against a real llama.cpp llama-server running a tiny random model.

The model can only emit word tokens, so it never states a number: scores are zero. What
this checks is the pipeline (prompts out, streams in, every item recorded) and that such
outputs are counted as failures by class, not silently as wrong answers.
"""

import json
from pathlib import Path

import pytest

from workers.cli import main
from workers.results import parse_document
from workers.testing.llama_server import llama_server
from workers.testing.tiny_model import write_tiny_model

LIMIT = 24


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory):
    model = write_tiny_model(tmp_path_factory.mktemp("model") / "tiny.gguf")
    # 5-shot prompts are long in the tiny byte-level vocabulary: 8k tokens per slot.
    with llama_server(model, slots=4, context=4 * 8192) as url:
        yield url


def test_a_gsm8k_eval_runs_against_llama_server_and_accounts_for_every_item(
    endpoint: str, tmp_path: Path, capsys
):
    out = tmp_path / "eval.json"
    code = main(
        ["eval", "--endpoint", endpoint, "--model", "tiny", "--protocol", "gsm8k",
         "--limit", str(LIMIT), "--concurrency", "4", "--out", str(out),
         "--accelerator", "CPU", "--gpus", "1", "--engine", "llama.cpp",
         "--quantization", "F32"]
    )  # fmt: skip
    assert code in (0, 1)
    document = parse_document(out.read_text())
    [result] = [r for r in document.accuracy if r.metric == "exact_match_numeric"]
    assert len(result.items) == LIMIT
    assert result.correct == 0
    failed = [item for item in result.items if item.failure]
    # Nothing the model wrote holds a number: each item is a counted failure, by class.
    assert len(failed) == LIMIT
    assert sum(result.failures.values()) == LIMIT
    assert set(result.failures) <= {"no_answer", "truncated", "empty_output", "reasoning_only"}
    assert all(item.finish_reason for item in result.items)
    assert result.ci_low == 0 and 0 < result.ci_high < 0.2  # Wilson, 0 of 24
    assert json.loads(out.read_text())["provenance"] == "measured"
