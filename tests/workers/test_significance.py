"""workers/significance.py: bootstrap intervals on performance figures from request records."""

from __future__ import annotations

import numpy as np
import pytest

from workers import significance
from workers.significance import Sample, compare, sample_from_records


def closed_loop_run(
    rng: np.random.Generator,
    *,
    requests: int = 600,
    concurrency: int = 4,
    e2el_ms: float = 100.0,
    jitter: float = 0.1,
    slow_stretch: float = 0.0,
    tokens: int = 16,
) -> Sample:
    """A closed loop simulated slot by slot: each slot sends its next request when the last
    one ends, so a slow stretch of the server (slow_stretch: extra share of latency in the
    second quarter of the run) slows every request that overlaps it."""
    records = []
    clocks = np.zeros(concurrency)
    horizon = requests / concurrency * e2el_ms
    for i in range(requests):
        slot = int(np.argmin(clocks))
        send = clocks[slot]
        slow = 1 + slow_stretch if horizon / 4 <= send < horizon / 2 else 1.0
        e2el = e2el_ms * slow * rng.lognormal(0, jitter)
        records.append(
            {
                "i": i,
                "t_send_ms": send,
                "ttft_ms": e2el * 0.2,
                "e2el_ms": e2el,
                "tpot_ms": e2el * 0.8 / (tokens - 1),
                "n_out": tokens,
                "status": "ok",
            }
        )
        clocks[slot] = send + e2el
    sample = sample_from_records(records, gpus=2, closed_loop=True)
    assert sample is not None
    return sample


def test_the_same_requests_on_both_sides_are_within_noise():
    run = closed_loop_run(np.random.default_rng(1))
    diff = compare("output_tok_s_gpu", [run], [run])
    assert diff.change == pytest.approx(0.0)
    assert diff.low < 0 < diff.high
    assert diff.verdict == "within noise"
    assert not diff.worse
    assert "within noise" in diff.sentence()


def test_a_server_20_percent_slower_is_found_with_an_interval_that_holds_the_shift():
    rng = np.random.default_rng(2)
    fast = closed_loop_run(rng)
    slow = closed_loop_run(rng, e2el_ms=125.0)  # throughput 1/1.25 = 0.8 of the fast one
    diff = compare("output_tok_s_gpu", [fast], [slow])
    assert diff.low < -0.2 < diff.high
    assert diff.high < 0
    assert diff.worse
    assert diff.verdict == "worse"
    assert diff.sentence().startswith("B's output tok/s/GPU is 20% lower [")
    latency = compare("e2el_p99_ms", [fast], [slow])
    assert latency.worse and latency.change > 0


def test_throughput_is_tokens_over_the_measured_window_per_gpu():
    run = closed_loop_run(np.random.default_rng(3))
    tokens = run.n_out.sum()
    assert significance.estimate("output_tok_s_gpu", run) == pytest.approx(
        tokens / run.window_s / 2
    )


def test_time_blocks_widen_the_interval_when_a_slow_stretch_couples_neighbouring_requests():
    rng = np.random.default_rng(4)
    a = closed_loop_run(rng, slow_stretch=1.0, jitter=0.02)
    b = closed_loop_run(rng, slow_stretch=1.0, jitter=0.02)
    blocked = compare("e2el_p99_ms", [a], [b])
    # The same requests resampled one by one (as if independent) miss the stretch's weight.
    as_open = [Sample(**{**s.__dict__, "closed_loop": False}) for s in (a, b)]
    independent = compare("e2el_p99_ms", [as_open[0]], [as_open[1]])
    assert blocked.high - blocked.low > independent.high - independent.low


def test_repeated_runs_bring_their_run_to_run_spread_into_the_interval():
    rng = np.random.default_rng(5)
    # Runs of one configuration whose level moves from run to run by a few percent.
    a_runs = [closed_loop_run(rng, e2el_ms=100.0 * f) for f in (0.94, 1.0, 1.06)]
    b_runs = [closed_loop_run(rng, e2el_ms=100.0 * f) for f in (0.95, 1.01, 1.05)]
    repeated = compare("output_tok_s_gpu", a_runs, b_runs)
    single = compare("output_tok_s_gpu", a_runs[1:2], b_runs[1:2])
    assert repeated.runs_a == 3 and repeated.runs_b == 3
    assert repeated.high - repeated.low > 2 * (single.high - single.low)
    assert repeated.verdict == "within noise"


def test_failures_count_no_tokens_and_no_latency():
    records = [
        {"t_send_ms": 0.0, "e2el_ms": 100.0, "ttft_ms": 10.0, "n_out": 10, "status": "ok"},
        {"t_send_ms": 50.0, "e2el_ms": 50.0, "ttft_ms": 5000.0, "n_out": 10, "status": "timeout"},
        {"t_send_ms": 0.0, "warmup": True, "e2el_ms": 1.0, "n_out": 99, "status": "ok"},
    ]
    sample = sample_from_records(records, gpus=1, closed_loop=True)
    assert sample is not None
    assert sample.size == 2
    assert significance.estimate("output_tok_s_gpu", sample) == pytest.approx(10 / 0.1)
    assert significance.estimate("ttft_p99_ms", sample) == pytest.approx(10.0)


def test_the_same_runs_give_the_same_interval_every_time():
    rng = np.random.default_rng(6)
    a, b = closed_loop_run(rng), closed_loop_run(rng)
    first = compare("tpot_p50_ms", [a], [b])
    assert compare("tpot_p50_ms", [a], [b]) == first


def test_an_unknown_metric_or_an_empty_side_is_refused():
    run = closed_loop_run(np.random.default_rng(7), requests=40)
    with pytest.raises(ValueError, match="unknown metric"):
        compare("tok_s", [run], [run])
    with pytest.raises(ValueError, match="at least one sample"):
        compare("output_tok_s_gpu", [], [run])
    assert sample_from_records([], gpus=1, closed_loop=True) is None


ARRAYS = ("send_ms", "n_out", "n_in", "ok", "ttft_ms", "tpot_ms", "e2el_ms")


@pytest.mark.parametrize("metric", list(significance.METRICS))
def test_a_replicate_is_the_figure_of_the_drawn_blocks_requests_put_together(metric):
    # The bootstrap counts draws per block instead of copying requests: it must give exactly
    # what concatenating the drawn blocks' requests (and their time) would.
    rng = np.random.default_rng(8)
    run = closed_loop_run(rng, requests=300)
    block_of, spans = significance._blocks(run)
    counts = rng.multinomial(spans.size, [1 / spans.size] * spans.size, size=4)
    fast = significance._weighted(metric, run, block_of, spans, counts)
    for row, value in zip(counts, fast, strict=True):
        index = np.concatenate(
            [np.tile(np.flatnonzero(block_of == b), k) for b, k in enumerate(row)]
        )
        window = float((spans * row).sum())
        arrays = {n: getattr(run, n)[index] for n in ARRAYS}
        drawn = Sample(**arrays, window_s=window, gpus=run.gpus, closed_loop=True)
        assert value == pytest.approx(significance.estimate(metric, drawn))


def test_runs_without_records_take_part_at_their_figure_in_throughput_only():
    # Three imported summaries of one configuration against one: resampling the runs alone.
    repeated = compare("output_tok_s_gpu", [100.0], [90.0, 100.0, 110.0])
    assert repeated.change == pytest.approx(0.0)
    assert repeated.low < 0 < repeated.high and repeated.verdict == "within noise"
    assert repeated.requests_a == repeated.requests_b == 0
    assert any("without request records" in note for note in repeated.notes)
    # One figure a side: nothing to resample, so no interval (never a zero-width one).
    single = compare("output_tok_s_gpu", [100.0], [120.0])
    assert single.change == pytest.approx(0.2) and single.low is None
    assert single.notes == ("single measurement: one figure a side, nothing to resample",)
    # A figure beside records: the records' side varies, the figure's does not.
    rng = np.random.default_rng(8)
    mixed = compare("output_tok_s_gpu", [closed_loop_run(rng)], [100.0])
    assert mixed.low is not None and mixed.low < mixed.change < mixed.high
    with pytest.raises(ValueError, match="throughput figure only"):
        compare("ttft_p99_ms", [closed_loop_run(rng)], [100.0])
