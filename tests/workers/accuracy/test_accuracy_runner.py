"""The runner against a scripted OpenAI-compatible server process (real HTTP, canned answers)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import httpx
import pytest

from tests.workers.accuracy.accuracy_support import key_of
from workers.accuracy.extract import gsm8k_gold
from workers.accuracy.protocols import PreparedEval, get_protocol, prepare
from workers.accuracy.runner import RequestFailed, api_base, evaluate, parse_reply
from workers.accuracy.stats import clustered_score, wilson
from workers.result_facts import Deployment, Engine, ModelInfo, Quantization
from workers.results import parse_document

DEPLOYMENT = Deployment(
    accelerator="H200",
    gpus=1,
    engine=Engine(name="llama.cpp"),
    quantization=Quantization(weights="BF16"),
)


def run(prepared: PreparedEval, url: str, concurrency: int = 4, **kwargs: Any):
    return asyncio.run(
        evaluate(
            prepared,
            endpoint=url,
            model=ModelInfo(name="tiny-test-model"),
            served_model="tiny",
            deployment=DEPLOYMENT,
            concurrency=concurrency,
            retries=3,
            backoff_s=0.01,
            timeout_s=30,
            **kwargs,
        )
    )


def gsm8k_script(prepared: PreparedEval) -> dict[str, Any]:
    g = [gsm8k_gold(item.gold) for item in prepared.items]
    replies = [
        {"text": f"The answer:\n#### {g[0]}"},
        {"text": f"The answer:\n#### {g[1]}"},
        {"text": f"So she pays ${g[2]}.00 in total.\n#### ${g[2]}.00"},
        # A server that ignores `stop` and invents the next few-shot question.
        {"text": f"#### {g[3]}\n\nQuestion: What next?\nAnswer: #### 99999"},
        {"text": "#### 987654321"},
        {"text": "I do not know."},
        {"text": ""},
        {"text": f"Let me compute {g[7]} step", "finish_reason": "length"},
        {"text": "<think>working it out"},
        {"text": f"#### {g[9]}", "fail_first": 2, "fail_mode": "drop"},
        {"text": f"#### {g[10]}", "fail_first": 100, "fail_mode": "503"},
        {"text": f"#### {g[11]}", "fail_first": 100, "fail_mode": "drop"},
        {"text": f"<think>maybe 5</think>#### {g[12]}"},
        {"text": f"#### {g[13]}", "fail_first": 1, "fail_mode": "400"},
    ]
    return {
        "replies": {
            key_of(item): reply for item, reply in zip(prepared.items, replies, strict=True)
        }
    }


@pytest.fixture
def gsm8k_run(scripted_server):
    prepared = prepare(get_protocol("gsm8k-5shot-v1"), limit=14)
    server = scripted_server(gsm8k_script(prepared))
    document = run(prepared, server.url)
    results = {r.metric: r for r in document.accuracy}
    return prepared, server, document, results


def test_failures_are_counted_apart_from_wrong_answers(gsm8k_run) -> None:
    _, _, _, results = gsm8k_run
    numeric = results["exact_match_numeric"]
    assert (numeric.n, numeric.correct) == (11, 6)
    assert numeric.failures == {
        "empty_output": 1,
        "http_error": 2,
        "no_answer": 1,
        "reasoning_only": 1,
        "transport_error": 1,
        "truncated": 1,
    }
    wrong = [i for i in numeric.items if i.correct is False]
    assert [(i.extracted, i.failure) for i in wrong] == [("987654321", None)]


def test_lm_eval_metrics_score_the_same_replies_their_own_way(gsm8k_run) -> None:
    _, _, _, results = gsm8k_run
    strict, flexible = results["em_strict"], results["em_flexible"]
    assert (strict.n, strict.correct) == (11, 5)  # "$18.00" and the truncated reply have no ####
    assert strict.failures["no_answer"] == 3
    assert (flexible.n, flexible.correct) == (11, 6)  # the truncated reply still scores here
    assert flexible.failures["no_answer"] == 1
    assert "truncated" not in strict.failures and "truncated" not in flexible.failures


def test_scores_carry_wilson_intervals_hashes_and_item_records(gsm8k_run) -> None:
    prepared, _, document, results = gsm8k_run
    numeric = results["exact_match_numeric"]
    assert numeric.score == pytest.approx(6 / 11)
    assert (numeric.ci_low, numeric.ci_high) == (wilson(6, 11).low, wilson(6, 11).high)
    assert numeric.protocol == "gsm8k-5shot-v1"
    assert numeric.protocol_hash == prepared.protocol_hash
    assert numeric.data_hash == "sha256:" + prepared.dataset.content_sha256
    first = numeric.items[0]
    assert (first.correct, first.finish_reason, first.output_tokens) == (True, "stop", 7)
    assert first.gold == gsm8k_gold(prepared.items[0].gold)
    assert first.response is not None and first.response.endswith(first.gold)
    assert all(i.response is None for i in results["em_strict"].items)
    assert [i.item_id for i in numeric.items] == [i.item_id for i in prepared.items]


def test_the_document_is_a_valid_partial_measured_run(gsm8k_run) -> None:
    prepared, _, document, _ = gsm8k_run
    parsed = parse_document(json.loads(json.dumps(document.to_json_dict())))
    assert (parsed.provenance, parsed.status) == ("measured", "partial")
    extra = parsed.environment.extra["accuracy"]
    assert extra["fewshot_ids"] == prepared.fewshot_ids
    assert (extra["items_available"], extra["items_sent"], extra["limit"]) == (1314, 14, 14)
    assert extra["data"]["rows"] == 1319


def test_requests_carry_the_protocols_parameters_and_retries_stop_at_4xx(gsm8k_run) -> None:
    prepared, server, _, _ = gsm8k_run
    log = server.requests()
    assert {r["path"] for r in log} == {"/v1/completions"}
    assert {(r["model"], r["max_tokens"], r["temperature"], r["seed"]) for r in log} == {
        ("tiny", 256, 0.0, 1234)
    }
    assert all(r["stop"] == ["Question:", "</s>", "<|im_end|>"] for r in log)
    attempts = Counter(r["key"] for r in log)
    keys = [key_of(item) for item in prepared.items]
    assert attempts[keys[9]] == 3  # two dropped connections, then an answer
    assert attempts[keys[10]] == attempts[keys[11]] == 4  # 1 + 3 retries
    assert attempts[keys[13]] == 1  # HTTP 400 is not retried


def test_concurrency_bounds_the_requests_in_flight(scripted_server) -> None:
    prepared = prepare(get_protocol("gsm8k"), limit=12)
    # The server holds requests until three are in flight at once: a runner that sent fewer
    # would leave max(in_flight) below 3, one that sent more would exceed it.
    server = scripted_server({"default": {"text": "#### 1"}, "gather": 3})
    document = run(prepared, server.url + "/v1", concurrency=3)
    in_flight = [r["in_flight"] for r in server.requests()]
    assert len(in_flight) == 12
    assert max(in_flight) == 3
    assert document.status == "succeeded"


def test_progress_reports_every_item(scripted_server) -> None:
    prepared = prepare(get_protocol("gsm8k"), limit=5)
    server = scripted_server({"default": {"text": "#### 1"}})
    seen: list[tuple[int, int, int, int]] = []
    run(prepared, server.url, concurrency=2, progress=lambda *args: seen.append(args))
    assert [s[0] for s in seen] == [1, 2, 3, 4, 5]
    assert all(s[1] == 5 for s in seen)


def test_gpqa_runs_over_chat_and_keeps_its_text_out_of_the_result(scripted_server) -> None:
    prepared = prepare(get_protocol("gpqa-diamond-cot-v1"), limit=2)
    golds = [item.gold for item in prepared.items]
    wrong = "A" if golds[1] != "A" else "B"
    replies = [
        {"text": f"Step by step.\nAnswer: {golds[0]}"},
        {"text": f"Answer: {wrong}"},
        {"text": "The answer is (B)"},
        {"text": "", "reasoning": "thinking about it"},
    ] + [{"text": f"**Answer:** {gold}"} for gold in golds[4:]]
    script = {"replies": {key_of(i): r for i, r in zip(prepared.items, replies, strict=True)}}
    server = scripted_server(script)
    document = run(prepared, server.url)
    (result,) = document.accuracy
    assert (result.metric, result.n, result.correct) == ("exact_match_choice", 8, 5)
    assert result.failures == {"no_answer": 1, "reasoning_only": 1}
    # Repeats of a question are correlated: the interval is cluster-robust over 2 questions.
    clustered = clustered_score([(1, 4), (4, 4)]).interval
    assert (result.ci_low, result.ci_high) == (clustered.low, clustered.high)
    assert all(item.response is None for item in result.items)
    assert {r["path"] for r in server.requests()} == {"/v1/chat/completions"}
    assert {r["max_tokens"] for r in server.requests()} == {8192}
    serialized = json.dumps(document.to_json_dict()) + server.log_path.read_text()
    questions = [row.question for row in prepared.dataset.rows[:2]]
    leaked = any(q[:60] in serialized for q in questions)
    assert leaked is False


def test_endpoint_urls_are_accepted_with_or_without_the_api_path() -> None:
    for url in (
        "http://h:8000",
        "http://h:8000/",
        "http://h:8000/v1",
        "http://h:8000/v1/completions",
    ):
        assert api_base(url) == "http://h:8000/v1"
    assert api_base("http://h:8000/v1/chat/completions") == "http://h:8000/v1"


def test_a_reply_that_is_not_a_completion_is_a_bad_response() -> None:
    request = httpx.Request("POST", "http://h/v1/completions")
    for content in (b"<html>oops</html>", b'{"choices": []}', b'{"no": "choices"}'):
        with pytest.raises(RequestFailed) as raised:
            parse_reply(httpx.Response(200, content=content, request=request), "completions")
        assert raised.value.kind == "bad_response"


def test_a_chat_reply_keeps_reasoning_apart_from_content() -> None:
    request = httpx.Request("POST", "http://h/v1/chat/completions")
    body = {
        "choices": [{"message": {"content": None, "reasoning": "hmm"}, "finish_reason": "length"}],
        "usage": {"completion_tokens": 9},
    }
    reply = parse_reply(httpx.Response(200, json=body, request=request), "chat")
    assert (reply.text, reply.reasoning, reply.finish_reason, reply.output_tokens) == (
        "",
        "hmm",
        "length",
        9,
    )
