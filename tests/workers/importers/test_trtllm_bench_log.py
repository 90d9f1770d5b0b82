"""trtllm-bench's text report in a log: the later layout, and labels the reader does not know.

The real 0.16 logs are checked line by line in test_wild_corpus. The later layout below is
built from reporting.py's report_statistics (TensorRT-LLM 0249976) with placeholder values:
no real log of it was found, so it is labelled as built, not published.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from workers.importers import Facts, ImportFailure, import_file, sniff

LATER_LAYOUT = """[01/01/2026-00:00:00] [TRT-LLM] [I]

===========================================================
= PYTORCH BACKEND
===========================================================
Model:\t\t\tsome/model
Model Path:\t\tNone
TensorRT LLM Version:\t1.2.0
Dtype:\t\t\tbfloat16
KV Cache Dtype:\t\tFP8
Quantization:\t\tNVFP4

===========================================================
= MACHINE DETAILS
===========================================================
NVIDIA B200, memory 179.06 GB, 3.99 GHz

===========================================================
= REQUEST DETAILS
===========================================================
Number of requests:             100
Number of concurrent requests:  63.9000
Average Input Length (tokens):  1024.0000
Average Output Length (tokens): 1000.5000
===========================================================
= WORLD + RUNTIME INFORMATION
===========================================================
TP Size:                4
PP Size:                1
EP Size:                4
Max Runtime Batch Size: 64
Max Runtime Tokens:     8192
Scheduling Policy:      GUARANTEED_NO_EVICT
KV Memory Percentage:   90.00%
Issue Rate (req/sec):   1.0000E+01

===========================================================
= PERFORMANCE OVERVIEW
===========================================================
Request Throughput (req/sec):                     2.0000
Total Output Throughput (tokens/sec):             2001.0000
Total Token Throughput (tokens/sec):              4049.0000
Total Latency (ms):                               50000.0000
Average request latency (ms):                     30000.0000
Per User Output Throughput [w/ ctx] (tps/user):   33.0000
Per GPU Output Throughput (tps/gpu):              500.2500
Average time-to-first-token [TTFT] (ms):          200.0000
Average time-per-output-token [TPOT] (ms):        29.0000
Per User Output Speed (tps/user):                 34.0000

-- Per-Request Time-per-Output-Token [TPOT] Breakdown (ms)

[TPOT] MINIMUM: 20.0000
[TPOT] MAXIMUM: 40.0000
[TPOT] AVERAGE: 29.0000
[TPOT] P50    : 28.0000
[TPOT] P90    : 35.0000
[TPOT] P95    : 37.0000
[TPOT] P99    : 39.0000

-- Request Latency Breakdown (ms) -----------------------

[Latency] P50    : 29000.0000
[Latency] P90    : 40000.0000
[Latency] P95    : 42000.0000
[Latency] P99    : 44000.0000
[Latency] MINIMUM: 20000.0000
[Latency] MAXIMUM: 45000.0000
[Latency] AVERAGE: 30000.0000

[01/01/2026-00:00:01] [TRT-LLM] [I] done
"""


def _import(text: str, facts: Facts | None = None) -> object:
    [doc] = import_file(text.encode(), "bench.log", facts=facts)
    return doc


def test_the_later_layout_states_the_gpu_the_world_and_the_distributions():
    assert sniff(LATER_LAYOUT.encode(), "bench.log") == "trtllm-bench-log"
    doc = _import(LATER_LAYOUT)  # nothing asked: the machine block names the GPU
    assert doc.deployment.accelerator == "B200"
    assert doc.environment.extra["accelerator_as_written"] == "NVIDIA B200"
    assert (doc.deployment.gpus, doc.deployment.parallelism.ep) == (4, 4)
    assert doc.deployment.quantization.weights == "NVFP4"
    assert doc.deployment.engine.version == "1.2.0"
    point = doc.points[0]
    assert point.throughput.output_tok_s == 2001.0
    assert point.throughput.total_tok_s == 4049.0
    assert point.window_s == 50.0
    assert (point.latency_ms.tpot.p50, point.latency_ms.tpot.max) == (28.0, 40.0)
    assert (point.latency_ms.e2el.p99, point.latency_ms.e2el.mean) == (44000.0, 30000.0)
    assert point.latency_ms.ttft.mean == 200.0 and point.latency_ms.ttft.p50 is None
    # The output mean is not whole: derived, rounded and labelled.
    assert doc.scenario.output_tokens == 1000
    assert doc.environment.extra["scenario_lengths"]["means"]["output_tokens"] == 1000.5


def test_a_label_the_reader_does_not_know_is_refused_by_name():
    text = LATER_LAYOUT.replace("Total Latency (ms):", "Total Wall Time (ms):")
    with pytest.raises(ImportFailure, match="'Total Wall Time \\(ms\\)' in block 'PERFORMANCE"):
        _import(text)


def test_a_log_of_two_reports_is_refused_rather_than_merged():
    with pytest.raises(ImportFailure, match="more than one"):
        _import(LATER_LAYOUT + LATER_LAYOUT)


def test_it_is_not_taken_for_a_text_that_only_mentions_the_banner():
    path = Path("notes.txt")
    with pytest.raises(ImportFailure, match="cannot tell the format"):
        import_file(b"see = PERFORMANCE OVERVIEW in the log\n", path.name)
