"""Mooncake-layout trace replay: parsing, shared blocks as shared prefixes, llama-server."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from workers.loadgen.cli import main
from workers.loadgen.client import EndpointConfig
from workers.loadgen.prompts import (
    EndpointTokenizer,
    PromptBuilder,
    WordPool,
    template_overhead,
    usage_probe,
)
from workers.loadgen.traces import TraceError, TracePrompts, TraceRow, read_mooncake, replay
from workers.results import parse_document
from workers.testing.llama_server import llama_server, require
from workers.testing.tiny_model import write_tiny_model

# Each request's longest shared prefix is with the request just before it, so one server
# slot serving them in order caches exactly the shared blocks (512 tokens each).
ROWS = [
    {"timestamp": 0, "input_length": 1536, "output_length": 8, "hash_ids": [1, 2, 3]},
    {"timestamp": 5, "input_length": 1536, "output_length": 8, "hash_ids": [1, 2, 4]},
    {"timestamp": 10, "input_length": 1736, "output_length": 8, "hash_ids": [1, 2, 4, 5]},
    {"timestamp": 15, "input_length": 512, "output_length": 8, "hash_ids": [7]},
    {"timestamp": 20, "input_length": 812, "output_length": 8, "hash_ids": [7, 8]},
]
EXPECTED_CACHED = [0, 1024, 1536, 0, 512]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


class _WordCounter:
    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())


def test_the_trace_identity_is_its_name_hash_and_scale(tmp_path):
    path = _write(tmp_path / "agent.jsonl", ROWS)
    trace = read_mooncake(path, scale=2.0, limit=3)
    assert len(trace.rows) == 3
    identity = trace.identity
    assert identity.name == "agent.jsonl"
    assert identity.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert (identity.scale, identity.requests, identity.block_tokens) == (2.0, 3, 512)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"timestamp": 0, "input_length": 10, "output_length": 0}, "line 2: output_length"),
        ({"timestamp": -1, "input_length": 10, "output_length": 5}, "line 2: timestamp"),
        (
            {"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1]},
            "line 2: input_length 600 does not fit 1 blocks",
        ),
        ({"timestamp": 0, "input_length": 9, "output_length": 5, "hash_ids": "x"}, "hash_ids"),
    ],
)
def test_a_bad_row_is_named_by_line_and_field(tmp_path, row, message):
    path = _write(tmp_path / "bad.jsonl", [ROWS[0], row])
    with pytest.raises(TraceError, match=message):
        read_mooncake(path)


def test_rows_sharing_block_ids_share_their_prompt_prefixes():
    trace_prompts = TracePrompts(PromptBuilder(_WordCounter()), block_tokens=16)
    trace = [
        read_row(input_length=48, hash_ids=[1, 2, 3]),
        read_row(input_length=40, hash_ids=[1, 2, 4]),
    ]
    first, second = (trace_prompts.spec(row, k).prompt for k, row in enumerate(trace))
    shared = trace_prompts.block(1, 16) + trace_prompts.block(2, 16)
    assert first.startswith(shared) and second.startswith(shared)
    assert first[len(shared) :].split()[0] != second[len(shared) :].split()[0]
    assert (len(first.split()), len(second.split())) == (48, 40)
    # A partial last block is its full block cut short.
    assert trace_prompts.block(4, 16).startswith(trace_prompts.block(4, 8))


def read_row(*, input_length: int, hash_ids: list[int]) -> TraceRow:
    return TraceRow(0, input_length, 1, tuple(hash_ids))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    require()
    model = write_tiny_model(tmp_path_factory.mktemp("model") / "tiny.gguf")
    with llama_server(model, slots=1, context=8192) as url:
        yield url


def test_a_replayed_trace_hits_the_cache_on_its_shared_blocks(server, tmp_path):
    cfg = EndpointConfig(base_url=server, model="tiny")
    counter = EndpointTokenizer(cfg)
    overhead = template_overhead(counter, usage_probe(cfg))
    prompts = TracePrompts(
        PromptBuilder(counter, seed=3, pool=WordPool.for_counter(counter)), overhead=overhead
    )
    trace = read_mooncake(_write(tmp_path / "t.jsonl", ROWS))
    # One in flight at a time: the slot holds exactly the previous request.
    point, timings = asyncio.run(replay(cfg, trace, prompts, max_concurrency=1))
    assert point.requests.succeeded == len(ROWS)
    assert [t.n_in for t in timings] == [row["input_length"] for row in ROWS]
    cached = [t.cached for t in timings]
    # The template's tokens (BOS) lead every prompt, so they are shared too.
    assert all(
        expected <= got <= expected + overhead + 1
        for got, expected in zip(cached, EXPECTED_CACHED, strict=True)
    ), cached
    assert all(t.t_sched_ns is not None for t in timings)


def test_bench_replays_a_trace_and_stores_its_identity(server, tmp_path):
    path = _write(tmp_path / "agent.jsonl", ROWS)
    out = tmp_path / "run.json"
    code = main(
        [
            "bench", "--endpoint", server, "--model", "tiny", "--quiet",
            "--trace", str(path), "--trace-scale", "4", "--max-concurrency", "1",
            "--accelerator", "CPU", "--gpus", "1", "--engine", "llama.cpp",
            "--quantization", "F32", "--out", str(out),
        ]
    )  # fmt: skip
    assert code == 0
    document = parse_document(out.read_text())
    trace = document.scenario.trace
    assert trace.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert (trace.name, trace.scale, trace.requests) == ("agent.jsonl", 4.0, len(ROWS))
    assert document.scenario.arrival == "open"
    assert document.points[0].requests.succeeded == len(ROWS)
    assert document.points[0].prefix_cache_hit_rate > 0.4


def test_bench_names_a_trace_it_cannot_read(tmp_path, capsys):
    path = _write(tmp_path / "bad.jsonl", [{"timestamp": 0}])
    code = main(
        [
            "bench", "--endpoint", "http://127.0.0.1:9", "--model", "tiny",
            "--trace", str(path), "--accelerator", "CPU", "--gpus", "1",
            "--engine", "llama.cpp", "--quantization", "F32", "--out", str(tmp_path / "r.json"),
        ]
    )  # fmt: skip
    assert code == 2
    assert "line 1: input_length" in capsys.readouterr().err
