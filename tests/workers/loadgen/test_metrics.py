"""Metric rules of docs/methodology.md on crafted per-request timings (all times in ns)."""

from __future__ import annotations

import numpy as np
import pytest

from workers.loadgen.metrics import (
    RequestTiming,
    build_point,
    chunk_gaps_ns,
    distribution,
    final_status,
    meets_slo,
    saturation_reason,
    spread_tokens,
    token_weighted_gaps_ns,
)
from workers.result_facts import Slo
from workers.results import Point, Throughput

MS = 1_000_000


def timing(
    i: int = 0, send_ms: float = 0, text_ms: list[float] | None = None, **kw
) -> RequestTiming:
    text = [int(t * MS) for t in (text_ms if text_ms is not None else [100, 110, 120, 130])]
    kw.setdefault("n_out", len(text))
    kw.setdefault("n_in", 50)
    kw.setdefault("t_end_ns", text[-1] + MS if text else int(send_ms * MS) + MS)
    return RequestTiming(i=i, t_send_ns=int(send_ms * MS), text_ns=text, **kw)


def test_ttft_is_the_first_text_event_and_ttfo_the_first_content():
    # The client records only text-bearing events; reasoning text counts for TTFT, and
    # the first non-reasoning content gives TTFO.
    t = timing(send_ms=10, text_ms=[40, 50, 60], t_out_ns=55 * MS)
    point = build_point([t])
    assert point.latency_ms.ttft.p50 == pytest.approx(30)
    assert point.latency_ms.ttfo.p50 == pytest.approx(45)
    assert point.latency_ms.e2el.p50 == pytest.approx(50)


def test_tpot_divides_by_output_tokens_minus_one_not_by_chunks():
    # 2 chunks but 5 tokens (MTP): TPOT = (t_last - t_1) / (N_out - 1) = 40 / 4.
    t = timing(text_ms=[100, 140], n_out=5)
    assert t.tpot_ns() == pytest.approx(10 * MS)
    point = build_point([t])
    assert point.latency_ms.tpot.p50 == pytest.approx(10)
    assert point.interactivity_tok_s_user.p50 == pytest.approx(100)


def test_single_token_output_has_no_tpot():
    assert timing(text_ms=[100], n_out=1).tpot_ns() is None


def test_interactivity_percentiles_are_over_per_request_values_not_inverted_tpot_percentiles():
    tpots_ms = [5, 10, 20, 40]
    timings = [timing(i=k, text_ms=[100, 100 + tp * 10], n_out=11) for k, tp in enumerate(tpots_ms)]
    point = build_point(timings)
    per_request = [1000 / tp for tp in tpots_ms]
    assert point.interactivity_tok_s_user.p90 == pytest.approx(np.percentile(per_request, 90))
    assert point.interactivity_tok_s_user.p90 != pytest.approx(1000 / point.latency_ms.tpot.p90)


def test_a_three_token_chunk_yields_three_token_weighted_gaps():
    t = timing(text_ms=[100, 110, 140], chunk_tokens=[1, 1, 3], n_out=5)
    assert chunk_gaps_ns(t) == [10 * MS, 30 * MS]
    assert token_weighted_gaps_ns(t) == [10 * MS, 10 * MS, 10 * MS, 10 * MS]
    point = build_point([t])
    assert point.latency_ms.itl.mean == pytest.approx(20)
    assert point.latency_ms.itl_token_weighted.mean == pytest.approx(10)
    assert point.tokens_per_chunk == pytest.approx(5 / 3)


def test_a_chunk_without_tokens_hands_its_gap_to_the_next_one():
    t = timing(text_ms=[100, 110, 130], chunk_tokens=[1, 0, 2], n_out=3)
    assert token_weighted_gaps_ns(t) == [15 * MS, 15 * MS]


def test_unknown_chunk_tokens_are_spread_evenly_over_events():
    assert spread_tokens(7, 3) == [2, 2, 3]
    assert sum(spread_tokens(1000, 7)) == 1000
    t = timing(text_ms=[0, 20, 40], n_out=6)
    assert len(token_weighted_gaps_ns(t)) == 4


def test_open_loop_latency_includes_the_wait_from_scheduled_time():
    # Scheduled at 0, sent at 500 ms because the previous request held the slot.
    t = timing(send_ms=500, text_ms=[600, 700], t_sched_ns=0)
    point = build_point([t], request_rate=2.0)
    lat = point.latency_ms
    assert lat.queue_delay.p50 == pytest.approx(500)
    assert lat.ttft.p50 == pytest.approx(100)
    assert lat.ttft_from_sched.p50 == pytest.approx(600)
    assert lat.e2el_from_sched.p50 == pytest.approx(700)
    assert point.records[0].t_sched_ms == pytest.approx(-500)


def test_closed_loop_points_have_no_from_sched_latencies():
    lat = build_point([timing()]).latency_ms
    assert lat.queue_delay is None and lat.ttft_from_sched is None


def test_window_runs_from_first_send_to_last_end_and_drives_throughput():
    a = timing(i=0, send_ms=0, text_ms=[10, 20], n_in=100, n_out=2, t_end_ns=30 * MS)
    b = timing(i=1, send_ms=1000, text_ms=[1500, 1900], n_in=300, n_out=2, t_end_ns=2000 * MS)
    point = build_point([a, b])
    assert point.window_s == pytest.approx(2.0)
    assert point.throughput.requests_per_s == pytest.approx(1.0)
    assert point.throughput.input_tok_s == pytest.approx(200)
    assert point.throughput.output_tok_s == pytest.approx(2)
    assert point.throughput.total_tok_s == pytest.approx(202)


def test_warmup_requests_are_left_out_of_everything():
    warm = timing(i=0, send_ms=0, text_ms=[5000, 9000], warmup=True)
    real = timing(i=1, send_ms=10_000, text_ms=[10_100, 10_200], t_end_ns=11_000 * MS)
    point = build_point([warm, real])
    assert point.requests.total == 1
    assert point.window_s == pytest.approx(1.0)
    assert [r.i for r in point.records] == [1]


@pytest.mark.parametrize(
    "status",
    ["http_error", "timeout", "connection_error", "inband_error", "malformed_sse", "other"],
)
def test_each_failure_class_is_counted_and_kept_out_of_latency(status):
    ok = timing(i=0)
    bad = timing(i=1, text_ms=[1, 2], status=status, error="boom")
    point = build_point([ok, bad])
    assert point.requests.failed == 1 and point.requests.succeeded == 1
    assert point.errors == {status: 1}
    assert point.latency_ms.ttft.max == pytest.approx(100)
    assert point.records[1].status == status and point.records[1].error == "boom"


def test_an_empty_stream_is_a_failure_not_a_success():
    empty = timing(text_ms=[], n_out=0)
    assert final_status(empty) == "empty_output"


def test_a_stream_short_of_max_tokens_with_eos_ignored_is_a_failure():
    short = timing(text_ms=[1, 2, 3], n_out=3, max_tokens=10, ignore_eos=True)
    assert final_status(short) == "short_output"
    # Without ignore_eos the model may legitimately stop early.
    early = timing(text_ms=[1, 2, 3], n_out=3, max_tokens=10, ignore_eos=False)
    assert final_status(early) == "ok"


def test_goodput_counts_requests_meeting_every_slo():
    fast = timing(i=0, text_ms=[50, 60, 70], n_out=3, t_end_ns=1000 * MS)
    slow_ttft = timing(i=1, text_ms=[500, 510, 520], n_out=3, t_end_ns=1000 * MS)
    slow_tpot = timing(i=2, text_ms=[50, 250, 450], n_out=3, t_end_ns=1000 * MS)
    slo = Slo(ttft_ms=200, tpot_ms=50)
    assert [meets_slo(t, slo) for t in (fast, slow_ttft, slow_tpot)] == [True, False, False]
    point = build_point([fast, slow_ttft, slow_tpot], slo=slo)
    assert point.goodput_rps == pytest.approx(1.0)
    assert build_point([fast]).goodput_rps is None


def test_goodput_judges_open_loop_requests_from_their_scheduled_time():
    t = timing(send_ms=300, text_ms=[350, 360], t_sched_ns=0)
    assert meets_slo(t, Slo(ttft_ms=100)) is False


def test_cache_hit_rate_is_cached_over_input_tokens():
    a = timing(i=0, n_in=1000, cached=600)
    b = timing(i=1, n_in=3000, cached=1800)
    point = build_point([a, b])
    assert point.prefix_cache_hit_rate == pytest.approx(0.6)
    assert point.tokens.cached == 2400


def test_cache_hit_rate_is_not_reported_rather_than_zero_when_the_server_is_silent():
    point = build_point([timing(cached=None)])
    assert point.prefix_cache_hit_rate is None
    assert point.tokens.cached is None
    assert "cached" not in point.records[0].model_dump(exclude_none=True)


def test_prompt_length_mismatch_rate_counts_misses_beyond_one_token_of_the_target():
    exact = timing(i=0, n_in=100, target_n_in=100)
    within = timing(i=1, n_in=101, target_n_in=100)
    off = timing(i=2, n_in=102, target_n_in=100)
    under = timing(i=3, n_in=98, target_n_in=100)
    point = build_point([exact, within, off, under])
    assert point.prompt_length_mismatch_rate == pytest.approx(0.5)


def test_token_source_reports_the_weakest_source_used():
    a = timing(i=0)
    b = timing(i=1, n_out_source="tokenizer")
    assert build_point([a, b]).tokens.source == "tokenizer"
    assert build_point([a]).tokens.source == "usage"


def test_percentiles_use_numpy_linear_interpolation():
    values = [1.0, 2.0, 3.0, 4.0, 10.0]
    dist = distribution(values)
    assert dist.p90 == pytest.approx(7.6)
    assert dist.p999 == pytest.approx(np.percentile(values, 99.9))
    assert dist.method == "linear"
    assert distribution([]) is None


def test_a_point_with_only_failures_still_validates():
    point = build_point([timing(status="timeout", text_ms=[])])
    assert point.requests.succeeded == 0
    assert point.latency_ms.ttft is None
    Point.model_validate(point.model_dump())


def test_saturation_stops_on_a_broken_slo_or_flat_throughput():
    base = build_point([timing(i=k, text_ms=[100, 200], n_out=2) for k in range(4)])
    assert saturation_reason(base, None, Slo(ttft_ms=150)) is None
    assert "TTFT" in saturation_reason(base, None, Slo(ttft_ms=50))
    previous = base.model_copy(update={"throughput": Throughput(output_tok_s=1000)})
    flat = base.model_copy(update={"throughput": Throughput(output_tok_s=1020)})
    rising = base.model_copy(update={"throughput": Throughput(output_tok_s=1500)})
    assert "no longer rising" in saturation_reason(flat, previous, None)
    assert saturation_reason(rising, previous, None) is None
