"""The real client against the in-repo fault server, a separate process on loopback.

Lower bounds below come from sleeps the server is told to take, so they hold on any machine.
"""

from __future__ import annotations

import json

import pytest

from tests.workers.loadgen.support import WordWorkload, sweep
from workers.loadgen.client import (
    EndpointConfig,
    RequestSpec,
    SseParser,
    StreamFailure,
    request_body,
)
from workers.loadgen.metrics import RequestTiming, token_weighted_gaps_ns
from workers.loadgen.output import make_document, request_lines, write_outputs
from workers.loadgen.runner import Level
from workers.result_facts import Deployment, Engine, ModelInfo, Quantization, Scenario, Slo
from workers.results import parse_document


def test_the_body_asks_for_usage_exact_lengths_and_greedy_decoding():
    cfg = EndpointConfig(base_url="http://x/v1", model="m", api="chat", extra_body={"top_k": 1})
    body = request_body(cfg, RequestSpec(prompt="hi", max_tokens=7))
    assert cfg.url == "http://x/v1/chat/completions"
    assert body["stream"] is True
    assert body["stream_options"]["include_usage"] is True
    assert body["ignore_eos"] is True and body["min_tokens"] == 7
    assert body["temperature"] == 0
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert body["top_k"] == 1


def test_the_api_key_goes_in_a_bearer_header():
    cfg = EndpointConfig(base_url="http://x", model="m", api_key="sk-1", headers={"X-A": "b"})
    assert cfg.request_headers()["Authorization"] == "Bearer sk-1"
    assert cfg.request_headers()["X-A"] == "b"


def _feed_in_pieces(payload: bytes, size: int) -> RequestTiming:
    timing = RequestTiming(i=0, t_send_ns=0)
    parser = SseParser(timing)
    for n, start in enumerate(range(0, len(payload), size)):
        parser.feed(payload[start : start + size], n)
    parser.close(10**9)
    return timing


@pytest.mark.parametrize("size", [1, 3, 7, 1000])
def test_sse_events_split_across_reads_are_parsed_whole(size):
    events = [
        {"choices": [{"delta": {"role": "assistant", "content": ""}}]},
        {"choices": [{"delta": {"content": "a"}}]},
        {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1}},
    ]
    payload = b": comment\r\n\r\n" + b"".join(
        b"data: " + json.dumps(e).encode() + b"\r\n\r\n" for e in events
    )
    timing = _feed_in_pieces(payload + b"data: [DONE]\n\n", size)
    assert timing.chunks == 1


def test_a_multi_line_data_field_is_joined_into_one_event():
    timing = RequestTiming(i=0, t_send_ns=0)
    parser = SseParser(timing)
    parser.feed(b'data: {"choices":\ndata: [{"text": "a b",\n', 5)
    parser.feed(b'data: "finish_reason": null}]}\n', 6)
    assert timing.text_ns == []  # the event is not over until its blank line
    parser.feed(b"\n", 7)
    assert timing.text_ns == [7]
    assert parser.events == 1 and not parser.complete


def test_a_stream_is_complete_at_done_or_at_a_finish_reason():
    by_done = SseParser(RequestTiming(i=0, t_send_ns=0))
    by_done.feed(b'data: {"choices":[{"text":"a"}]}\n\ndata: [DONE]\n\n', 1)
    by_finish = SseParser(RequestTiming(i=0, t_send_ns=0))
    by_finish.feed(b'data: {"choices":[{"text":"","finish_reason":"length"}]}\n\n', 1)
    cut = SseParser(RequestTiming(i=0, t_send_ns=0))
    cut.feed(b'data: {"choices":[{"text":"a","finish_reason":null}]}\n\n', 1)
    assert (by_done.complete, by_finish.complete, cut.complete) == (True, True, False)


def test_a_body_that_ends_inside_an_event_is_truncated_not_malformed():
    parser = SseParser(RequestTiming(i=0, t_send_ns=0))
    parser.feed(b'data: {"choices":[{"text":"a"}]}\n\ndata: {"choices":[{"te', 1)
    with pytest.raises(StreamFailure) as failure:
        parser.close(2)
    assert failure.value.status == "truncated"


def test_a_last_complete_event_without_its_blank_line_still_counts():
    parser = SseParser(RequestTiming(i=0, t_send_ns=0))
    parser.feed(b'data: {"choices":[{"text":"a"}]}\n\ndata: [DONE]', 1)
    parser.close(2)
    assert parser.done and parser.events == 1


@pytest.mark.parametrize("api", ["completions", "chat"])
def test_a_stream_that_stops_early_without_its_terminator_is_truncated(start_fault_server, api):
    # 3 of 100 tokens, then a clean end of body: no usage, no finish_reason, no [DONE].
    url = start_fault_server("--mode", "truncate", "--fail-after", "3")
    workload = WordWorkload(max_tokens=100)
    result = sweep(url, api=api, workload=workload, requests=2, levels=[Level(concurrency=1)])
    point = result.points[0]
    assert point.requests.succeeded == 0
    assert point.errors == {"truncated": 2}
    record = point.records[0]
    assert record.status == "truncated" and record.chunks == 3
    assert "without [DONE] or a finish_reason" in record.error


@pytest.mark.parametrize("api", ["completions", "chat"])
def test_multi_line_sse_events_from_a_server_parse(start_fault_server, api):
    url = start_fault_server("--mode", "multiline")
    result = sweep(url, api=api, requests=2, levels=[Level(concurrency=1)])
    point = result.points[0]
    assert point.requests.succeeded == 2, point.errors
    assert all(r.n_out == 8 and r.chunks == 8 for r in point.records)


def test_reasoning_text_counts_for_ttft_but_not_for_ttfo():
    timing = RequestTiming(i=0, t_send_ns=0)
    parser = SseParser(timing)
    parser.feed(b'data: {"choices":[{"delta":{"reasoning_content":"hmm"}}]}\n\n', 5)
    parser.feed(b'data: {"choices":[{"delta":{"content":"yes"}}]}\n\n', 9)
    assert timing.text_ns == [5, 9]
    assert timing.t_out_ns == 9


@pytest.mark.parametrize(
    ("line", "status"),
    [
        (b'data: {"error": {"message": "context full"}}\n\n', "inband_error"),
        (b'error: {"message": "context full"}\n\n', "inband_error"),
        (b"data: {oops\n\n", "malformed_sse"),
        (b"data: [1, 2]\n\n", "malformed_sse"),
        (b"garbage line\n\n", "malformed_sse"),
    ],
)
def test_bad_events_are_classified(line, status):
    parser = SseParser(RequestTiming(i=0, t_send_ns=0))
    with pytest.raises(StreamFailure) as failure:
        parser.feed(line, 0)
    assert failure.value.status == status


@pytest.mark.parametrize("api", ["completions", "chat"])
@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_a_clean_stream_is_measured_from_usage(start_fault_server, api, transport):
    url = start_fault_server("--prefix-block", "1")
    result = sweep(url, api=api, transport=transport, workload=WordWorkload(5, 8))
    point = result.points[0]
    assert point.requests.succeeded == 4 and point.errors == {}
    assert point.tokens.input == 20 and point.tokens.output == 32
    assert point.tokens.source == "usage"
    assert point.prompt_length_mismatch_rate == 0
    assert all(r.chunks == 8 and r.n_out == 8 for r in point.records)


def test_a_role_only_first_chunk_is_not_ttft(start_fault_server):
    # Role-only and usage-only events arrive at once; the first text 300 ms later.
    url = start_fault_server("--mode", "role_first", "--first-delay-ms", "300")
    result = sweep(url, api="chat", requests=2, levels=[Level(concurrency=1)])
    for record in result.points[0].records:
        assert record.status == "ok"
        assert record.ttft_ms >= 300
        assert record.chunks == 8


def test_a_three_token_chunk_yields_three_token_weighted_gaps(start_fault_server):
    url = start_fault_server("--tokens-per-chunk", "3", "--itl-ms", "30")
    result = sweep(url, workload=WordWorkload(5, 9), requests=2)
    point = result.points[0]
    assert point.tokens_per_chunk == 3
    for timing in result.timings[0]:
        assert timing.chunk_tokens == [3, 3, 3]
        assert len(token_weighted_gaps_ns(timing)) == 6
    # Each chunk gap becomes three gaps of a third; TPOT agrees with them.
    assert point.latency_ms.itl_token_weighted.p50 == pytest.approx(point.latency_ms.itl.p50 / 3)
    for timing in result.timings[0]:
        assert timing.tpot_ns() == pytest.approx(sum(token_weighted_gaps_ns(timing)) / 8)


def test_every_failure_class_is_counted_and_never_crashes_the_run(start_fault_server):
    modes = ["ok", "inband_error", "reset", "malformed", "empty", "short", "http_error", "stall"]
    url = start_fault_server("--mode", "cycle", "--cycle", ",".join(modes), "--stall-s", "60")
    result = sweep(url, requests=len(modes), levels=[Level(concurrency=1)], timeout_s=1.0)
    point = result.points[0]
    assert point.requests.succeeded == 1
    assert point.errors == {
        "inband_error": 1,
        "connection_error": 1,
        "malformed_sse": 1,
        "empty_output": 1,
        "short_output": 1,
        "http_error": 1,
        "timeout": 1,
    }
    by_index = {r.i: r for r in point.records}
    assert by_index[6].http_status == 500
    assert "injected in-band error" in by_index[1].error


def test_the_pool_keeps_working_after_a_reset(start_fault_server):
    url = start_fault_server("--mode", "cycle", "--cycle", "reset,ok,ok")
    result = sweep(url, requests=6, levels=[Level(concurrency=1)])
    assert result.points[0].errors == {"connection_error": 2}
    assert result.points[0].requests.succeeded == 4


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_a_server_closing_kept_alive_connections_costs_no_request(start_fault_server, transport):
    url = start_fault_server("--close-after-stream")
    result = sweep(url, requests=8, levels=[Level(concurrency=2)], transport=transport)
    assert result.points[0].requests.succeeded == 8, result.points[0].errors


def test_missing_usage_falls_back_to_a_tokenizer_count_and_says_so(start_fault_server):
    url = start_fault_server("--mode", "no_usage")
    counted = sweep(url, count_tokens=lambda text: len(text.split()))
    assert counted.points[0].requests.succeeded == 4
    assert counted.points[0].tokens.source == "tokenizer"
    assert counted.points[0].tokens.output == 32
    uncounted = sweep(url)
    assert uncounted.points[0].requests.succeeded == 4
    assert uncounted.points[0].tokens.source == "unknown"


def test_cached_tokens_give_the_observed_hit_rate_or_not_reported(start_fault_server):
    # Every prompt differs, so a real cache finds nothing: 0.0 is a measurement, not a default.
    reporting = sweep(start_fault_server("--prefix-block", "1"))
    assert reporting.points[0].prefix_cache_hit_rate == 0.0
    silent = sweep(start_fault_server())
    assert silent.points[0].prefix_cache_hit_rate is None


def test_open_loop_latency_counts_the_wait_from_scheduled_time(start_fault_server):
    # One slot and 200 ms per request against 20 arrivals/s: requests queue behind each other.
    url = start_fault_server("--ttft-ms", "200")
    result = sweep(url, levels=[Level(rate=20)], requests=5, max_concurrency=1)
    point = result.points[0]
    records = sorted(point.records, key=lambda r: r.i)
    assert [r.t_sched_ms for r in records] == sorted(r.t_sched_ms for r in records)
    assert records[-1].t_send_ms >= 4 * 200
    for timing in result.timings[0]:
        assert timing.queue_delay_ns() == timing.t_send_ns - timing.t_sched_ns
        assert timing.ttft_from_sched_ns() == timing.ttft_ns() + timing.queue_delay_ns()
    assert point.latency_ms.ttft_from_sched.max > point.latency_ms.ttft.max
    assert point.request_rate == 20


def test_a_duration_stops_new_requests(start_fault_server):
    url = start_fault_server("--itl-ms", "10")
    result = sweep(url, requests=None, duration_s=0.5, levels=[Level(concurrency=2)])
    point = result.points[0]
    assert point.requests.total >= 2
    assert all(r.t_send_ms < 500 for r in point.records)


def test_warmup_requests_are_recorded_but_not_measured(start_fault_server, tmp_path):
    result = sweep(start_fault_server(), warmup=2, requests=3)
    assert result.points[0].requests.total == 3
    lines = list(request_lines(result))
    assert sum(line["warmup"] for line in lines) == 2 and len(lines) == 5


def test_a_sweep_stops_early_when_the_slo_breaks(start_fault_server):
    url = start_fault_server("--ttft-ms", "50")
    result = sweep(
        url,
        requests=2,
        levels=[Level(concurrency=1), Level(concurrency=2), Level(concurrency=4)],
        slo=Slo(ttft_ms=10),
    )
    assert len(result.points) == 1
    assert "TTFT" in result.stop_reason


def test_the_document_and_request_jsonl_are_written_and_validate(start_fault_server, tmp_path):
    from datetime import UTC, datetime

    result = sweep(start_fault_server(), levels=[Level(concurrency=1), Level(concurrency=2)])
    document = make_document(
        model=ModelInfo(name="m"),
        deployment=Deployment(
            accelerator="CPU",
            gpus=1,
            engine=Engine(name="fault-server"),
            quantization=Quantization(weights="none"),
        ),
        scenario=Scenario(input_tokens=5, output_tokens=8),
        result=result,
        started_at=datetime.now(UTC),
    )
    out = tmp_path / "run.json"
    jsonl = write_outputs(document, result, out)
    parsed = parse_document(out.read_text())
    assert parsed.provenance == "measured"
    assert len(parsed.points) == 2 and parsed.points[1].concurrency == 2
    lines = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert len(lines) == 8 and {line["point"] for line in lines} == {0, 1}


def test_a_redirected_request_is_recorded_as_refused_without_its_location_or_body():
    import asyncio
    import http.server
    import threading

    from workers.loadgen.client import make_http_client, stream_request

    class Redirect(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            self.rfile.read(int(self.headers["Content-Length"]))
            body = b"Redirecting to http://127.0.0.1:6379/secret"
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.1:6379/secret")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    cfg = EndpointConfig(base_url=f"http://127.0.0.1:{server.server_address[1]}", model="m")

    async def one() -> RequestTiming:
        async with make_http_client(1) as http:
            return await stream_request(
                http, cfg, RequestSpec(prompt="hi", max_tokens=2), RequestTiming(i=0, t_send_ns=0)
            )

    try:
        timing = asyncio.run(one())
    finally:
        server.shutdown()
        server.server_close()
    assert timing.status == "http_error" and timing.http_status == 302
    assert timing.error == "HTTP 302: redirect refused"
