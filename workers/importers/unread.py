"""Files we recognise but do not read, refused by their name.

"cannot tell the format ... give --format" is wrong for these: no --format value reads them.
The refusal says which tool wrote the file, so the user knows it was seen and why it stops,
and, where the same run wrote a file we do read, which one to import instead.

- MLPerf LoadGen `mlperf_log_summary.txt` of a scenario other than Server or Interactive, or
  of a benchmark with no token figures (which and why in workers/importers/mlperf_summary.py;
  the rest are read by workers/importers/mlperf.py).
- aiperf's CSV export `profile_export_aiperf.csv`: every figure rounded to two decimals and
  no model, endpoint or load stated; aiperf writes `profile_export_aiperf.json` beside it
  with the same run at full precision, which we read.
- InferenceX runner outputs beside the trace replay's logs: `metrics_server_metrics.csv`
  (server counters over time) and `workload_distribution_summary.txt` (what was sent);
  neither holds the run's results, which its `agg_*.json` does.
- InferenceX-app's manual sweeps (`packages/db/src/etl/fixtures/tpu-manual-sweep.json`): one
  object of `benchmarks` (InferenceX aggregate rows) and `evaluations` (gsm8k rows). Its TPU
  rows' `tp` counts TensorCores, not the chips their per-GPU figures should divide by (the
  app repairs them by run in `tpu-normalization.ts`), so they are not read as aggregates.
- vLLM's multi-turn benchmark (benchmarks/multi_turn/benchmark_serving_multi_turn.py): its
  `--stats-json-output` is one row per request (RequestStats: ttft_ms, tpot_ms, latency_ms,
  start_time_ms, token counts, conversation_id, client_id) with no model, no client count and
  no failed requests (a failed turn is dropped, not recorded); its `--output-file` is the
  conversations with the server's answers, no measurements. Its summary is printed, not
  written (or written to Excel with --excel-output).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from workers.importers.mlperf_summary import is_summary, why_unread

# aiperf's CSV: a statistics table ('Metric,avg,min,max,...') whose rows name aiperf's
# metrics with their units, then a 'Metric,Value' table of the run's totals.
_AIPERF_CSV = re.compile(r"\AMetric,avg,min,max,")
_AIPERF_ROWS = ("\nMetric,Value", "\nRequest Latency (ms),", "\nTime to First Token (ms),")


# InferenceX's agentic runner folders (agentic_<model>_..._<runner>/) hold these beside the
# trace replay's logs; the run's results are the agg_*.json its bmk_agentic_* folder holds.
_RUNNER_METRICS = re.compile(r"\Atimestamp_sec,relative_time_sec,kv_cache_usage_pct,")
_RUNNER_WORKLOAD = re.compile(r"\A=+\nBENCHMARK WORKLOAD DISTRIBUTION ANALYSIS\n")
RUNNER_INSTEAD = (
    "the run's results are the agg_*.json in its bmk_agentic_* folder, which we read "
    "(format inferencex-agentic)"
)


# benchmark_serving_multi_turn.py's RequestStats fields (every row of --stats-json-output).
_MULTI_TURN_STATS = frozenset(
    {"ttft_ms", "tpot_ms", "latency_ms", "start_time_ms", "input_num_turns",
     "input_num_tokens", "output_num_tokens", "conversation_id", "client_id"}
)  # fmt: skip


@dataclass(frozen=True)
class Unread:
    what: str  # the tool and file, as the refusal names them
    instead: str = ""  # what to import instead, when the same run wrote a file we read


def unread_format(text: str) -> Unread | None:
    """What the file is, when it is a format we recognise and do not read; else None."""
    if is_summary(text):
        why = why_unread(text)
        return Unread(why) if why else None
    normalised = text.replace("\r\n", "\n")
    if _AIPERF_CSV.match(normalised) and any(row in normalised for row in _AIPERF_ROWS):
        return Unread(
            "aiperf's CSV export (profile_export_aiperf.csv)",
            "it rounds every figure to two decimals and states no model or load; import "
            "profile_export_aiperf.json from the same run folder",
        )
    if _RUNNER_METRICS.match(normalised):
        return Unread(
            "an InferenceX runner's metrics_server_metrics.csv (the server's counters sampled "
            "each second, no per-request latencies)",
            RUNNER_INSTEAD,
        )
    if _RUNNER_WORKLOAD.match(normalised):
        return Unread(
            "an InferenceX runner's workload_distribution_summary.txt (the lengths the trace "
            "replay sent, no measurements)",
            RUNNER_INSTEAD,
        )
    multi_turn = _multi_turn(normalised)
    if multi_turn:
        return multi_turn
    return _manual_sweep(normalised)


def _multi_turn(text: str) -> Unread | None:
    """vLLM's multi-turn benchmark outputs: per-request stats, or the answered conversations."""
    head = text[:4096]
    # Parse only what opens like one of them: this runs on every file given with --format.
    if not head.lstrip().startswith("[") or not (
        '"conversation_id"' in head or '"messages"' in head
    ):
        return None
    try:
        rows = json.loads(text)
    except ValueError:
        return None
    first = rows[0] if isinstance(rows, list) and rows else None
    if not isinstance(first, dict):
        return None
    if first.keys() >= _MULTI_TURN_STATS:
        return Unread(
            "vLLM's multi-turn benchmark per-request stats (benchmark_serving_multi_turn.py "
            "--stats-json-output)",
            "it states no model and no client count and drops failed turns, so it is not a run "
            "we can store; the tool prints its summary (or writes it with --excel-output)",
        )
    messages = first.get("messages")
    if first.keys() == {"id", "messages"} and isinstance(messages, list) and messages:
        return Unread(
            "conversations with the server's answers (vLLM's multi-turn benchmark "
            "--output-file), which hold no measurements"
        )
    return None


def _manual_sweep(text: str) -> Unread | None:
    """InferenceX-app's manual sweep: aggregate and evaluation rows in one object."""
    head = text[:4096]
    opens = head.lstrip().startswith("{") and '"benchmarks"' in head
    if not opens or '"evaluations"' not in text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    rows = value.get("benchmarks") if isinstance(value, dict) else None
    first = rows[0] if isinstance(rows, list) and rows else None
    if set(value) != {"benchmarks", "evaluations"} or not isinstance(first, dict):
        return None
    if "tput_per_gpu" not in first or "hw" not in first:
        return None
    return Unread(
        "an InferenceX-app manual sweep (its aggregate and evaluation rows in one object)",
        "its per-GPU figures divide by the row's tp, which for TPU rows counts TensorCores, "
        "not chips (InferenceX-app repairs them by run), so the rows cannot be read as "
        "InferenceX aggregates; import the sweep's agg_bmk.json from its runs instead",
    )
