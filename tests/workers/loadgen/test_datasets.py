"""Prompt datasets users bring: prompts JSONL and ShareGPT conversations."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from workers.loadgen.cli import main
from workers.loadgen.datasets import DatasetError, DatasetWorkload, read_dataset
from workers.results import parse_document
from workers.testing.llama_server import llama_server, require
from workers.testing.tiny_model import write_tiny_model

ANSWERED = [{"from": "human", "value": "b"}, {"from": "gpt", "value": "c"}]


class _WordCounter:
    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_a_sharegpt_row_sends_its_first_question_sized_by_its_first_answer(tmp_path):
    path = _write(
        tmp_path / "sg.jsonl",
        [
            {
                "conversations": [
                    {"from": "system", "value": "be brief"},
                    {"from": "human", "value": "what is the city"},
                    {"from": "gpt", "value": "the city of the river"},
                ]
            },
            {"conversations": [{"from": "human", "value": "no answer here"}]},
        ],
    )
    dataset = read_dataset(path, _WordCounter())
    assert [(r.prompt, r.output_tokens) for r in dataset.rows] == [("what is the city", 5)]
    assert dataset.identity.format == "sharegpt"
    assert dataset.identity.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    spec = DatasetWorkload(dataset, None).spec(3)  # round robin past the end
    assert (spec.prompt, spec.max_tokens) == ("what is the city", 5)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"prompt": ""}], "line 1: prompt"),
        ([{"prompt": "a", "output_tokens": 0}], "line 1: output_tokens"),
        ([{"prompt": "a"}, {"conversations": ANSWERED}], "mixes"),
        ([{"conversations": "x"}], "line 1: conversations"),
    ],
)
def test_a_bad_dataset_is_named_by_line_and_field(tmp_path, rows, message):
    with pytest.raises(DatasetError, match=message):
        read_dataset(_write(tmp_path / "bad.jsonl", rows), _WordCounter())


def test_bench_measures_a_prompts_file_and_stores_its_hash(tmp_path):
    require()
    path = _write(
        tmp_path / "prompts.jsonl",
        [{"prompt": "the city of the river", "output_tokens": 8}, {"prompt": "a word"}],
    )
    out = tmp_path / "run.json"
    args = [
        "bench", "--model", "tiny", "--quiet", "--dataset", str(path),
        "--concurrency", "2", "--requests", "4", "--accelerator", "CPU", "--gpus", "1",
        "--engine", "llama.cpp", "--quantization", "F32", "--out", str(out),
    ]  # fmt: skip
    with llama_server(write_tiny_model(tmp_path / "tiny.gguf"), slots=2, context=2048) as url:
        # A row without output_tokens needs --output-tokens: said before anything is sent.
        assert main([*args, "--endpoint", url]) == 2
        assert main([*args, "--endpoint", url, "--output-tokens", "6"]) == 0
    document = parse_document(out.read_text())
    identity = document.scenario.trace
    assert (identity.format, identity.name) == ("prompts-jsonl", "prompts.jsonl")
    assert identity.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert document.scenario.dataset == f"file-prompts-jsonl-{identity.sha256[:16]}"
    assert document.points[0].requests.succeeded == 4
    assert document.points[0].tokens.output == 4 * 6
