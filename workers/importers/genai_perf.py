"""NVIDIA genai-perf `profile_export_genai_perf.json`: recognised, and refused by name.

genai-perf (triton-inference-server/perf_analyzer) writes the same metric objects as its
successor aiperf (`{"unit": ..., "avg": ..., "p50": ...}` per metric) with its own
`input_config` (no aiperf `loadgen` block, no `schema_version`). No real export has been
checked against this reader yet, so it does not guess a mapping: it names the tool and says
what to do, instead of "cannot tell the format".
"""

from __future__ import annotations

from workers.importers.common import ImportInput
from workers.importers.errors import ImportFailure
from workers.importers.registry import Format, Preview, register
from workers.results import ResultDocument

TOOL = "NVIDIA genai-perf 0.0.x (profile_export_genai_perf.json)"


def _sniff(seen: Preview) -> bool:
    row = seen.value
    if not isinstance(row, dict) or "aiperf_version" in row or "schema_version" in row:
        return False
    config = row.get("input_config")
    metric = row.get("request_throughput")
    return (
        isinstance(config, dict)
        and "loadgen" not in config
        and isinstance(metric, dict)
        and "unit" in metric
        and "avg" in metric
    )


def parse(job: ImportInput) -> list[ResultDocument]:
    raise ImportFailure(
        f"{job.main.name}: this looks like an NVIDIA genai-perf export ({TOOL}), which we do "
        "not read; its successor aiperf's exports are read as of aiperf 0.8 "
        "(profile_export_aiperf.json)"
    )


register(
    Format(
        name="genai-perf",
        tool=TOOL,
        summary="NVIDIA genai-perf export: recognised and refused with directions",
        sniff=_sniff,
        parse=parse,
    )
)
