"""How often the performance significance test (workers/significance.py) is wrong, and what
it costs, on simulated closed-loop runs whose truth is known.

    python bench/significance_calibration.py [--pairs 200] [--requests 1000] [--seed 1]

Each run is simulated slot by slot (concurrency 8: a slot sends its next request when its
last one ends), with lognormal request-to-request jitter and, in each run, a slow stretch at
a random place (the server slowed by 0-60% for a tenth of the run: a compaction, a noisy
neighbour). It prints, over --pairs pairs of runs:

- A/A (two runs of one configuration): the share called significant (the false-alarm
  rate; 5% is what a 95% interval promises), with time blocks (the method) and with
  requests resampled one by one (what ignoring closed-loop dependence gives: the baseline
  in the same run), and the share the CI gate would fail at --fail-on-regression 5;
- A/B with B slower by 5% and 10%: the share found (the power) and the share of intervals
  holding the true change (coverage);
- the time per comparison of 10,000 requests, against resampling by copying requests
  (np.concatenate per replicate, the textbook loop) measured in the same run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workers import figures, significance  # noqa: E402
from workers.significance import Sample, compare, sample_from_records  # noqa: E402

CONCURRENCY = 8
TOKENS = 64


def simulated_run(rng: np.random.Generator, requests: int, slower: float = 0.0) -> Sample:
    clocks = np.zeros(CONCURRENCY)
    base = 1000.0 * (1 + slower)
    horizon = requests / CONCURRENCY * base
    start = rng.uniform(0, 0.9) * horizon
    stretch = (start, start + 0.1 * horizon, 1 + rng.uniform(0, 0.6))
    records = []
    for i in range(requests):
        slot = int(np.argmin(clocks))
        send = float(clocks[slot])
        factor = stretch[2] if stretch[0] <= send < stretch[1] else 1.0
        e2el = base * factor * float(rng.lognormal(0, 0.15))
        ttft = e2el * 0.1 * float(rng.lognormal(0, 0.3))
        records.append(
            {
                "i": i,
                "t_send_ms": send,
                "ttft_ms": ttft,
                "e2el_ms": e2el,
                "tpot_ms": (e2el - ttft) / (TOKENS - 1),
                "n_out": TOKENS,
                "status": "ok",
            }
        )
        clocks[slot] = send + e2el
    sample = sample_from_records(records, gpus=8, closed_loop=True)
    assert sample is not None
    return sample


def as_independent(sample: Sample) -> Sample:
    return Sample(**{**sample.__dict__, "closed_loop": False})


def naive_interval(metric: str, a: Sample, b: Sample, rng: np.random.Generator, reps: int):
    """The textbook loop: copy the drawn blocks' requests, compute, per replicate."""
    out = []
    for _ in range(reps):
        values = []
        for s in (a, b):
            block_of, spans = significance._blocks(s)
            picks = rng.integers(0, spans.size, spans.size)
            index = np.concatenate([np.flatnonzero(block_of == p) for p in picks])
            arrays = {
                n: getattr(s, n)[index]
                for n in ("send_ms", "n_out", "n_in", "ok", "ttft_ms", "tpot_ms", "e2el_ms")
            }
            drawn = Sample(
                **arrays, window_s=float(spans[picks].sum()), gpus=s.gpus, closed_loop=True
            )
            values.append(significance.estimate(metric, drawn))
        out.append(values[1] / values[0] - 1)
    return np.percentile(out, [2.5, 97.5])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    # Output throughput per GPU and the tail latency an answer states (TTFT p99), as
    # comparisons name them (workers/figures.py).
    metrics = tuple(
        figures.figure(key).name for key in (figures.THROUGHPUT["output"], figures.ANSWER_LATENCY)
    )

    print(f"{args.pairs} pairs of closed-loop runs, {args.requests} requests each, c={CONCURRENCY}")
    print("\nA/A: the same configuration twice (truth: no difference)")
    for metric in metrics:
        blocked = independent = gate_fails = 0
        for _ in range(args.pairs):
            a, b = simulated_run(rng, args.requests), simulated_run(rng, args.requests)
            d = compare(metric, [a], [b])
            blocked += d.significant
            gate_fails += d.worse and abs(d.change or 0) > 0.05
            independent += compare(metric, [as_independent(a)], [as_independent(b)]).significant
        print(
            f"  {metric:18s} called significant: time blocks {blocked / args.pairs:6.1%}   "
            f"requests one by one {independent / args.pairs:6.1%}   "
            f"gate fails at 5%: {gate_fails / args.pairs:6.1%}"
        )

    for slower in (0.05, 0.10):
        truth = 1 / (1 + slower) - 1  # throughput change when every request takes longer
        found = covered = 0
        for _ in range(args.pairs):
            a = simulated_run(rng, args.requests)
            b = simulated_run(rng, args.requests, slower=slower)
            d = compare("output_tok_s_gpu", [a], [b])
            found += d.worse
            covered += d.low is not None and d.low <= truth <= d.high
        print(
            f"\nA/B, B {slower:.0%} slower per request (throughput {truth:+.1%}): found "
            f"{found / args.pairs:.1%}, interval holds the truth {covered / args.pairs:.1%}"
        )

    a, b = simulated_run(rng, 10_000), simulated_run(rng, 10_000)
    reps = 200
    for metric in metrics:
        started = time.perf_counter()
        compare(metric, [a], [b], replicates=reps)
        ours = time.perf_counter() - started
        started = time.perf_counter()
        naive_interval(metric, a, b, rng, reps)
        naive = time.perf_counter() - started
        print(
            f"\n{metric}: {reps} replicates of 10,000 requests a side: {ours * 1000:.0f} ms "
            f"(copying requests: {naive * 1000:.0f} ms, x{naive / ours:.1f})"
        )


if __name__ == "__main__":
    main()
