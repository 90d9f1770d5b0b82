"""The load generator against a real llama.cpp llama-server running a tiny generated model.

The binary comes from scripts/build-llama-server.sh; when it is missing these tests fail
with the command to run, they never skip.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.workers.loadgen.support import sweep
from workers.loadgen.cli import main
from workers.loadgen.client import EndpointConfig
from workers.loadgen.prompts import (
    WORDS,
    EndpointTokenizer,
    LocalTokenizer,
    PromptBuilder,
    PromptWorkload,
    WordPool,
    template_overhead,
    usage_probe,
)
from workers.loadgen.runner import Level
from workers.results import parse_document
from workers.testing.llama_server import llama_server, require
from workers.testing.tiny_model import foreign_words, write_tiny_model


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("model") / "tiny.gguf")


@pytest.fixture(scope="module")
def server(tiny_model: Path) -> Iterator[str]:
    require()
    with llama_server(tiny_model, slots=2, context=8192) as url:
        yield url


def _workload(url: str, **kw) -> PromptWorkload:
    cfg = EndpointConfig(base_url=url, model="tiny")
    counter = EndpointTokenizer(cfg)
    overhead = template_overhead(counter, usage_probe(cfg))
    return PromptWorkload(PromptBuilder(counter), overhead=overhead, **kw)


def test_the_tiny_model_runs_every_output_to_max_tokens(server):
    body = {"model": "tiny", "prompt": "the city of", "max_tokens": 40, "temperature": 0}
    answer = httpx.post(server + "/v1/completions", json=body, timeout=60).json()
    text = answer["choices"][0]["text"]
    assert answer["usage"]["completion_tokens"] == 40
    assert all(word in WORDS for word in text.split())
    assert EndpointTokenizer(EndpointConfig(base_url=server, model="tiny")).count(text) == 40


def test_the_local_tokenizer_json_counts_like_llama_server(server, tiny_model):
    local = LocalTokenizer(tiny_model.with_name("tokenizer.json"))
    remote = EndpointTokenizer(EndpointConfig(base_url=server, model="tiny"))
    rng = random.Random(3)
    for _ in range(5):
        text = " ".join(rng.choice(WORDS + ("12", "x.", "Zeta!")) for _ in range(60))
        assert local.count(text) == remote.count(text)


def test_prompts_have_exact_lengths_by_the_endpoint_tokenizer(server):
    workload = _workload(server, input_tokens=300, output_tokens=16)
    result = sweep(server, workload=workload, requests=6, levels=[Level(concurrency=2)])
    point = result.points[0]
    assert point.requests.succeeded == 6, point.errors
    assert point.prompt_length_mismatch_rate == 0
    assert all(r.n_in == 300 and r.n_out == 16 for r in point.records)
    # llama-server streams one token per event.
    assert point.tokens_per_chunk == 1


def test_the_measured_prefix_cache_hit_rate_is_near_a_60_percent_target(server):
    workload = _workload(server, input_tokens=500, output_tokens=8, prefix_hit_rate=0.6)
    result = sweep(server, workload=workload, requests=10, levels=[Level(concurrency=2)])
    point = result.points[0]
    assert point.requests.succeeded == 10, point.errors
    assert point.prefix_cache_hit_rate is not None
    assert abs(point.prefix_cache_hit_rate - 0.6) <= 0.05


def test_a_context_too_small_fails_the_request_without_ending_the_run(tiny_model):
    # 256 tokens shared by one slot: 200 prompt tokens leave no room for 200 more.
    with llama_server(tiny_model, slots=1, context=256) as url:
        workload = _workload(url, input_tokens=200, output_tokens=200)
        result = sweep(url, workload=workload, requests=2, levels=[Level(concurrency=1)])
    point = result.points[0]
    assert point.requests.failed == 2
    assert set(point.errors) <= {"inband_error", "short_output", "http_error"}


def test_the_cli_measures_llama_server_end_to_end(server, tmp_path):
    out = tmp_path / "run.json"
    code = main(
        [
            "bench", "--endpoint", server, "--model", "tiny", "--quiet",
            "--input-tokens", "200", "--output-tokens", "16", "--prefix-hit-rate", "0.5",
            "--concurrency", "1,2", "--requests", "4", "--warmup", "1", "--no-early-stop",
            "--accelerator", "CPU", "--gpus", "1", "--engine", "llama.cpp",
            "--quantization", "F32", "--out", str(out),
        ]
    )  # fmt: skip
    assert code == 0
    document = parse_document(out.read_text())
    assert document.environment.extra["tokenizer"] == "endpoint"
    for point in document.points:
        assert point.requests.succeeded == 4
        assert point.prompt_length_mismatch_rate == 0
        assert point.prefix_cache_hit_rate is not None
    assert out.with_name("run.requests.jsonl").exists()


@pytest.fixture(scope="module")
def foreign_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model whose vocabulary is made-up words: none of WORDS is one token in it."""
    folder = tmp_path_factory.mktemp("foreign")
    return write_tiny_model(folder / "foreign.gguf", words=foreign_words())


@pytest.fixture(scope="module")
def foreign_server(foreign_model: Path) -> Iterator[str]:
    require()
    with llama_server(foreign_model, slots=2, context=8192) as url:
        yield url


def _bench_512(url: str, out: Path, *extra: str) -> int:
    return main(
        [
            "bench", "--endpoint", url, "--model", "tiny", "--quiet",
            "--input-tokens", "512", "--output-tokens", "8",
            "--concurrency", "1,4", "--requests", "8", "--no-early-stop",
            "--accelerator", "CPU", "--gpus", "1", "--engine", "llama.cpp",
            "--quantization", "F32", "--out", str(out), *extra,
        ]
    )  # fmt: skip


def _server_counted_lengths(out: Path) -> list[int]:
    document = parse_document(out.read_text())
    assert all(point.prompt_length_mismatch_rate == 0 for point in document.points)
    return [record.n_in for point in document.points for record in point.records]


def test_the_word_list_is_several_tokens_a_word_on_the_foreign_model(foreign_server):
    tokenizer = EndpointTokenizer(EndpointConfig(base_url=foreign_server, model="tiny"))
    base = tokenizer.count("x")
    assert min(tokenizer.count("x " + word) - base for word in WORDS[:40]) >= 2


def test_512_token_prompts_reach_the_projects_tiny_model_within_one_token(server, tmp_path):
    out = tmp_path / "run.json"
    assert _bench_512(server, out) == 0
    lengths = _server_counted_lengths(out)
    assert len(lengths) == 16 and all(abs(n - 512) <= 1 for n in lengths), lengths


def test_512_token_prompts_reach_a_model_without_the_word_list_within_one_token(
    foreign_server, tmp_path
):
    out = tmp_path / "run.json"
    assert _bench_512(foreign_server, out) == 0
    lengths = _server_counted_lengths(out)
    assert len(lengths) == 16 and all(abs(n - 512) <= 1 for n in lengths), lengths


def test_a_local_tokenizer_json_fits_prompts_for_the_foreign_model(
    foreign_server, foreign_model, tmp_path
):
    out = tmp_path / "run.json"
    tokenizer = str(foreign_model.with_name("tokenizer.json"))
    code = _bench_512(foreign_server, out, "--tokenizer", "local", "--tokenizer-json", tokenizer)
    assert code == 0
    assert all(abs(n - 512) <= 1 for n in _server_counted_lengths(out))


def test_the_endpoint_lists_its_own_vocabulary_words_for_the_pool(foreign_server):
    tokenizer = EndpointTokenizer(EndpointConfig(base_url=foreign_server, model="tiny"))
    pool = WordPool.for_counter(tokenizer)
    assert set(pool.costs) == {1}
    assert not set(pool.words) & set(WORDS)
    assert set(pool.words) & set(foreign_words())
