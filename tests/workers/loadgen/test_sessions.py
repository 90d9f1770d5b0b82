"""Multi-turn sessions against a real llama-server running the tiny generated model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from workers.loadgen.cli import main
from workers.loadgen.client import EndpointConfig
from workers.loadgen.metrics import RequestTiming
from workers.loadgen.prompts import EndpointTokenizer, PromptBuilder, WordPool
from workers.loadgen.runner import Level, LoadPlan
from workers.loadgen.sessions import (
    Conversation,
    SessionWorkload,
    run_session_sweep,
    session_stats,
)
from workers.result_facts import SessionScenario
from workers.results import SCHEMA_REVISION, parse_document
from workers.testing.llama_server import llama_server, require
from workers.testing.tiny_model import write_tiny_model

SHAPE = SessionScenario(turns=5, first_tokens=200, turn_tokens=100, output_tokens=24)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("model") / "tiny.gguf")


@pytest.fixture(scope="module")
def server(tiny_model: Path) -> Iterator[str]:
    require()
    # One slot per concurrent session, each able to hold the longest conversation (the
    # agentic-coding preset reaches about 13k tokens).
    with llama_server(tiny_model, slots=2, context=2 * 16384) as url:
        yield url


def _workload(
    url: str, shape: SessionScenario = SHAPE, seed: int = 7
) -> tuple[EndpointConfig, SessionWorkload]:
    cfg = EndpointConfig(base_url=url, model="tiny")
    counter = EndpointTokenizer(cfg)
    builder = PromptBuilder(counter, pool=WordPool.for_counter(counter))
    return cfg, SessionWorkload(builder, shape, seed=seed)


def test_each_turn_carries_the_whole_conversation_and_the_answers_so_far():
    workload = SessionWorkload(PromptBuilder(_WordCounter()), SHAPE, seed=1)
    conversation = Conversation(workload, EndpointConfig(base_url="http://x", model="m"), key=3)
    first = conversation.spec(0).prompt
    conversation.answered(" the answer")
    second = conversation.spec(1).prompt
    assert second.startswith(first + " the answer\n")
    assert second.endswith(workload.message(3, 1))


def test_chat_turns_send_the_history_as_alternating_messages():
    shape = SHAPE.model_copy(update={"system_tokens": 10})
    workload = SessionWorkload(PromptBuilder(_WordCounter()), shape, seed=1)
    cfg = EndpointConfig(base_url="http://x", model="m", api="chat")
    conversation = Conversation(workload, cfg, key=0)
    conversation.spec(0)
    conversation.answered("first answer")
    roles = [m["role"] for m in conversation.spec(1).messages or []]
    assert roles == ["system", "user", "assistant", "user"]


def test_a_session_with_a_failed_turn_is_counted_but_never_completed():
    def turn(session: int, k: int, ok: bool = True) -> RequestTiming:
        t = RequestTiming(i=k, t_send_ns=k * 10**9, session=session, turn=k % 2)
        t.text_ns, t.t_end_ns = [t.t_send_ns + 10**6], t.t_send_ns + 10**8
        t.n_in, t.cached = 100, 50
        t.status = "ok" if ok else "timeout"
        return t

    timings = [turn(0, 0), turn(0, 1), turn(1, 2), turn(1, 3, ok=False)]
    turns, sessions = session_stats(timings, turns=2)
    assert (sessions.total, sessions.completed) == (2, 1)
    assert sessions.completion_s is not None and sessions.completion_s.max == pytest.approx(1.1)
    assert [(t.turn, t.requests, t.succeeded) for t in turns] == [(0, 2, 2), (1, 2, 1)]
    assert turns[1].prefix_cache_hit_rate == pytest.approx(0.5)


def test_the_cache_hit_rate_rises_with_the_turn_index_on_llama_server(server):
    # Conversations of their own: the module's server keeps what earlier tests sent in its
    # slots, and tests run in any order, so the same seed could find turn 0 already cached.
    cfg, workload = _workload(server, seed=70_001)
    plan = LoadPlan(levels=[Level(concurrency=2)], requests=4, early_stop=False)
    result = asyncio.run(run_session_sweep(cfg, workload, plan))
    point = result.points[0]
    assert point.requests.succeeded == 4 * SHAPE.turns
    assert point.sessions.completed == 4
    hits = [turn.prefix_cache_hit_rate for turn in point.turns]
    contexts = [turn.context_tokens_mean for turn in point.turns]
    assert len(hits) == SHAPE.turns and None not in hits
    # Turn 0 shares nothing; turn t finds turns 0..t-1 and their answers in its slot.
    assert hits[0] < 0.1
    assert all(later > earlier for earlier, later in zip(hits, hits[1:], strict=False))
    assert hits[-1] > 0.8
    assert all(later > earlier for earlier, later in zip(contexts, contexts[1:], strict=False))
    assert {(r.session, r.turn) for r in point.records} == {
        (s, t) for s in range(4) for t in range(SHAPE.turns)
    }


def test_sessions_arriving_at_a_rate_each_run_every_turn_on_llama_server(server):
    cfg, workload = _workload(server, SHAPE.model_copy(update={"turns": 2}))
    plan = LoadPlan(levels=[Level(rate=20.0)], requests=3, early_stop=False)
    result = asyncio.run(run_session_sweep(cfg, workload, plan))
    point = result.points[0]
    assert point.request_rate == 20.0
    assert point.sessions.total == point.sessions.completed == 3
    assert {(r.session, r.turn) for r in point.records} == {
        (s, t) for s in range(3) for t in (0, 1)
    }
    # Open loop: a session's first turn has its planned arrival; later turns follow answers.
    planned = sorted((r.session, r.t_sched_ms is not None) for r in point.records if r.turn == 0)
    assert planned == [(0, True), (1, True), (2, True)]
    assert all(r.t_sched_ms is None for r in point.records if r.turn == 1)


def test_bench_runs_the_agentic_coding_preset_against_llama_server(server, tmp_path):
    out = tmp_path / "run.json"
    code = main(
        [
            "bench", "--endpoint", server, "--model", "tiny", "--quiet",
            "--scenario", "agentic-coding", "--requests", "2", "--concurrency", "2",
            "--accelerator", "CPU", "--gpus", "1", "--engine", "llama.cpp",
            "--quantization", "F32", "--out", str(out),
        ]
    )  # fmt: skip
    assert code == 0
    raw = json.loads(out.read_text())
    assert raw["schema_revision"] == SCHEMA_REVISION
    document = parse_document(raw)
    shape = document.scenario.sessions
    assert (shape.kind, shape.turns, shape.sessions) == ("agentic", 12, 2)
    assert document.scenario.preset == "agentic-coding"
    point = document.points[0]
    assert point.sessions.completed == 2
    assert [t.turn for t in point.turns] == list(range(12))
    assert point.turns[-1].context_tokens_mean > point.turns[0].context_tokens_mean
    lines = out.with_name("run.requests.jsonl").read_text().splitlines()
    assert len(lines) == 24 and json.loads(lines[-1])["turn"] == 11


def test_bench_rejects_a_session_shape_it_cannot_build(tmp_path, capsys):
    code = main(
        [
            "bench", "--endpoint", "http://127.0.0.1:9", "--model", "tiny",
            "--scenario", "chat", "--turns", "0", "--requests", "1",
            "--accelerator", "CPU", "--gpus", "1", "--engine", "llama.cpp",
            "--quantization", "F32", "--out", str(tmp_path / "run.json"),
        ]
    )  # fmt: skip
    assert code == 2
    assert "--turns" in capsys.readouterr().err


class _WordCounter:
    """One token per space-separated word (enough to build texts without a server)."""

    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())


def test_a_preset_with_a_parameter_overridden_is_not_stored_as_that_preset(server, tmp_path):
    out = tmp_path / "run.json"
    code = main(
        [
            "bench", "--endpoint", server, "--model", "tiny", "--quiet",
            "--scenario", "chat", "--turns", "2", "--output-tokens", "8", "--requests", "1",
            "--accelerator", "CPU", "--gpus", "1", "--engine", "llama.cpp",
            "--quantization", "F32", "--out", str(out),
        ]
    )  # fmt: skip
    assert code == 0
    scenario = parse_document(out.read_text()).scenario
    assert scenario.preset is None
    assert (scenario.sessions.turns, scenario.sessions.system_tokens) == (2, 256)
    assert scenario.dataset == "sessions-chat-2t-sys256-first256-turn128-out8-think0s"
