"""The server's own view: Prometheus /metrics parsed, sliced per point, and scraped from a
real llama-server started with --metrics."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from workers.loadgen.cli import main
from workers.loadgen.scrape import Reading, Scraper, parse_metrics, server_acceptance
from workers.results import parse_document
from workers.testing.llama_server import llama_server, require
from workers.testing.tiny_model import write_tiny_model

VLLM = """\
# HELP vllm:num_requests_waiting Number of requests waiting.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} 3.0
vllm:num_requests_waiting{engine="1",model_name="m"} 2.0
# HELP vllm:kv_cache_usage_perc KV-cache usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.5
vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.7
# HELP vllm:num_preemptions_total Preemptions.
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{engine="0",model_name="m"} 4.0
"""

SGLANG = """\
# HELP sglang:num_queue_reqs The number of requests in the waiting queue.
# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{model_name="m"} 7.0
# HELP sglang:spec_accept_length The average acceptance length of speculative decoding.
# TYPE sglang:spec_accept_length gauge
sglang:spec_accept_length{model_name="m"} 2.6
"""


def test_each_engines_names_map_to_one_neutral_name_with_the_original_kept():
    vllm, engine = parse_metrics(VLLM)
    assert engine == "vllm"
    # Queues add up over data-parallel engines; a usage ratio is their mean.
    assert vllm["requests_waiting"] == ("vllm:num_requests_waiting", 5.0)
    assert vllm["kv_cache_usage"] == ("vllm:kv_cache_usage_perc", pytest.approx(0.6))
    assert vllm["preemptions"] == ("vllm:num_preemptions_total", 4.0)
    sglang, engine = parse_metrics(SGLANG)
    assert engine == "sglang"
    assert sglang["requests_waiting"] == ("sglang:num_queue_reqs", 7.0)
    assert sglang["spec_accept_length"] == ("sglang:spec_accept_length", 2.6)


def test_a_window_takes_the_readings_around_it_and_flags_queueing_and_preemption():
    scraper = Scraper("http://x/metrics", interval_s=1.0)
    for t, waiting, preempted in [(0, 0, 1), (10, 0, 1), (20, 4, 2), (30, 0, 3), (40, 9, 9)]:
        scraper.readings.append(
            Reading(
                t,
                {
                    "requests_waiting": ("vllm:num_requests_waiting", waiting),
                    "preemptions": ("vllm:num_preemptions_total", preempted),
                },
            )
        )
    server = scraper.window(12, 28)
    waiting = next(s for s in server.series if s.name == "requests_waiting")
    assert waiting.t_ms == pytest.approx([-2e-6, 8e-6, 18e-6])
    assert (server.queued_max, server.preemptions) == (4, 2)


def test_the_reading_after_a_window_is_one_asked_for_after_it_ended():
    # The scrape sent at 25 is answered at 31, after the window's end at 30, with counts made
    # before the window's last tokens were counted; the one sent at 32 has them all.
    scraper = Scraper("http://x/metrics", interval_s=1.0)
    for sent, answered, generated in [(0, 1, 0), (25, 31, 70), (32, 33, 100)]:
        tokens = {"generation_tokens": ("llamacpp:tokens_predicted_total", generated)}
        scraper.readings.append(Reading(answered, tokens, sent))
    series = next(s for s in scraper.window(5, 30).series if s.name == "generation_tokens")
    assert series.values[-1] - series.values[0] == 100
    assert series.t_ms[-1] >= 25e-6


def test_a_page_that_is_not_prometheus_text_is_a_missed_scrape(tmp_path):
    with pytest.raises(ValueError):
        parse_metrics("<html>not metrics</html>\n{")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    require()
    model = write_tiny_model(tmp_path_factory.mktemp("model") / "tiny.gguf")
    with llama_server(model, slots=2, context=4096, extra=("--metrics",)) as url:
        yield url


def _bench(url: str, out: Path, *extra: str) -> int:
    return main(
        [
            "bench", "--endpoint", url, "--model", "tiny", "--quiet",
            "--input-tokens", "64", "--output-tokens", "16",
            "--concurrency", "2", "--requests", "6",
            "--accelerator", "CPU", "--gpus", "1", "--engine", "llama.cpp",
            "--quantization", "F32", "--out", str(out), *extra,
        ]
    )  # fmt: skip


def test_bench_stores_llama_servers_own_series_for_the_point(server, tmp_path):
    out = tmp_path / "run.json"
    assert _bench(server, out, "--scrape-interval", "0.05") == 0
    document = parse_document(out.read_text())
    assert document.environment.extra["server_metrics"]["engine"] == "llama.cpp"
    point = document.points[0]
    series = {s.name: s for s in point.server.series}
    assert series["requests_running"].source == "llamacpp:requests_processing"
    generated = series["generation_tokens"]
    assert generated.source == "llamacpp:tokens_predicted_total"
    # The readings bracket the window, so the counter's rise is every token generated in it.
    assert generated.values[-1] - generated.values[0] == point.tokens.output
    assert generated.t_ms[0] <= 0 <= generated.t_ms[-1]
    assert point.server.queued_max is not None


def test_a_server_without_metrics_is_said_so_and_the_run_goes_on(tmp_path):
    require()
    model = write_tiny_model(tmp_path / "tiny.gguf")
    with llama_server(model, slots=1, context=2048) as url:
        out = tmp_path / "run.json"
        assert _bench(url, out) == 0
    document = parse_document(out.read_text())
    assert document.environment.extra["server_metrics"] == f"not available at {url}/metrics"
    assert document.points[0].server is None


def test_speculative_acceptance_from_requests_agrees_with_the_servers_counters(tmp_path):
    require()
    model = write_tiny_model(tmp_path / "tiny.gguf")
    draft = write_tiny_model(tmp_path / "draft.gguf")
    extra = ("--metrics", "-md", str(draft), "--spec-type", "draft-simple")
    with llama_server(model, slots=2, context=4096, extra=extra) as url:
        out = tmp_path / "run.json"
        assert _bench(url, out, "--spec-method", "draft", "--spec-draft-tokens", "3") == 0
    document = parse_document(out.read_text())
    assert document.deployment.speculative.method == "draft"
    point = document.points[0]
    acceptance = point.speculative_acceptance
    assert acceptance.source == "requests"
    assert acceptance.draft_tokens > 0
    assert acceptance.rate == acceptance.accepted_tokens / acceptance.draft_tokens
    # The server's counters over the same window count the same drafts.
    from_metrics = server_acceptance(point.server)
    assert (from_metrics.draft_tokens, from_metrics.accepted_tokens) == (
        acceptance.draft_tokens,
        acceptance.accepted_tokens,
    )
    assert from_metrics.drafts > 0 and from_metrics.length >= 1
    # The client's side: tokens carried per streamed chunk.
    assert point.tokens_per_chunk is not None and point.tokens_per_chunk >= 1
